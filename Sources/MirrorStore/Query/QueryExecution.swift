import Foundation
import MirrorStoreEngine

/// Reads linked records for conditions that look through links, each once per query, from a
/// snapshot as a transaction's pending writes (if any) have left it.
final class LinkedRecords {
    private let snapshot: EngineSnapshot
    private let schemas: any SchemaSource
    private let pending: PendingWrites?
    private var records: [String: [StorageKey: QueryValue]] = [:]

    init(snapshot: EngineSnapshot, schemas: any SchemaSource, pending: PendingWrites? = nil) {
        self.snapshot = snapshot
        self.schemas = schemas
        self.pending = pending
    }

    func record(type typeName: String, key: StorageKey) throws -> QueryValue {
        if let known = records[typeName]?[key] { return known }
        guard let schema = schemas.schema(named: typeName) else { throw StoreError(.unknownModel(typeName: typeName)) }
        var value = QueryValue.null
        if let bytes = try StoredView(snapshot: snapshot, pending: pending).value(type: typeName, key: key) {
            var reader = ByteReader(bytes)
            do throws(DecodeFailure) {
                value = .embedded(schema, try RecordProjection.allValues(of: schema, from: &reader, schemaNamed: schemas.schema(named:)))
            } catch {
                throw StoreError(RecordCodingFailure(error), typeName: typeName, key: PrimaryKey.text(key, of: schema))
            }
        }
        records[typeName, default: [:]][key] = value
        return value
    }
}

/// Runs a query's conditions over candidate records.
struct QueryExecution<Model: Persistable> {
    let source: QuerySource
    let conditions: [QueryCondition]
    /// The conditions compiled to tests on stored bytes, when they compile to them (see
    /// ``ByteConditions``) and the candidates need testing; nil otherwise.
    let byteTests: ByteConditions?

    /// The keys of the objects matching every condition, in primary-key order, from the
    /// candidates `access` names, with where the records tested lie.
    func matchingKeys(_ access: AccessPath) throws -> FoundKeys {
        let typeName = source.plan.typeName
        var candidates: [StorageKey]
        switch access.source {
        case .scan:
            if conditions.isEmpty { return FoundKeys(Self.sortedByPrimaryKey(try source.snapshot.keys(type: typeName))) }
            return try filteredScan()
        case .primaryKeys(let keys):
            candidates = try keys.filter { try source.snapshot.contains(type: typeName, key: $0) }
        case .index(let range):
            candidates = try range.objects()
        case .linked(let join):
            candidates = try join.candidateKeys(source: source)
        case .linkPresence(let presence):
            candidates = try presence.objects(in: source.snapshot)
        }
        candidates = Self.deduplicated(Self.sortedByPrimaryKey(candidates))
        if access.isExact || conditions.isEmpty { return FoundKeys(candidates) }
        if let byteTests { return try byteTests.matching(candidates, in: source.values) }
        let tester = try ConditionTester<Model>(source: source, conditions: conditions)
        var found = FoundKeys.reading(capacity: candidates.count)
        for key in candidates {
            guard let location = try source.values.location(for: key) else { continue }
            if try tester.matches(source.values.value(at: location), key: key) { found.append(key, at: location) }
        }
        return found
    }

    /// Every object tested, in place in the file, in file order: on the stored bytes when the
    /// conditions compile to byte tests, otherwise each copied for the tester.
    private func filteredScan() throws -> FoundKeys {
        let typeName = source.plan.typeName
        if let byteTests {
            return Self.sortedByPrimaryKey(try byteTests.matchingKeys(type: typeName, in: source.snapshot))
        }
        let tester = try ConditionTester<Model>(source: source, conditions: conditions)
        var found = FoundKeys.reading()
        try source.snapshot.forEachValueInPlace(type: typeName) { key, location, bytes in
            if try tester.matches(Array(bytes), key: key) { found.append(key, at: location) }
        }
        return Self.sortedByPrimaryKey(found)
    }

    /// `found` in primary-key order, each key with its location.
    private static func sortedByPrimaryKey(_ found: FoundKeys) -> FoundKeys {
        let keys = found.keys
        var integers: [(value: Int64, position: Int)] = []
        integers.reserveCapacity(keys.count)
        for (position, key) in keys.enumerated() {
            guard case .integer(let value) = key else {
                return found.picked(keys.indices.sorted { StorageKey.precedes(keys[$0], keys[$1]) })
            }
            integers.append((value, position))
        }
        integers.sort { $0.value < $1.value }
        return found.picked(integers.map(\.position))
    }

    /// `keys` in primary-key order. Integer keys, the usual case, are sorted as plain integers:
    /// several times faster than through the enum's comparison, which dominated counting a range.
    static func sortedByPrimaryKey(_ keys: [StorageKey]) -> [StorageKey] {
        var integers: [Int64] = []
        integers.reserveCapacity(keys.count)
        for key in keys {
            guard case .integer(let value) = key else { return keys.sorted(by: StorageKey.precedes) }
            integers.append(value)
        }
        integers.sort()
        return integers.map { .integer($0) }
    }

    /// Sorted keys with each one once (an object with several matching values of a multi-valued
    /// index is listed once per value).
    private static func deduplicated(_ sorted: [StorageKey]) -> [StorageKey] {
        var result: [StorageKey] = []
        result.reserveCapacity(sorted.count)
        for key in sorted where result.last != key { result.append(key) }
        return result
    }
}

/// Tests records against a query's conditions: on the encoded values where the translation
/// decides, on the decoded model where it does not.
struct ConditionTester<Model: Persistable> {
    private let source: QuerySource
    /// Each condition's predicate, deciding what its translation leaves undecided.
    private let predicates: [PredicateEvaluation<Model>?]
    private let onRecords: RecordConditions
    /// Decodes the models a condition needs, sharing linked records between them.
    private let reader: ModelReader

    /// A tester reading the snapshot of `source`, as `pending` writes (if any) have left it.
    init(source: QuerySource, conditions: [QueryCondition], pending: PendingWrites? = nil) throws {
        self.source = source
        predicates = conditions.map { $0.predicate(of: Model.self) }
        onRecords = RecordConditions(schema: source.schema, conditions: conditions.map { ($0.node, $0.root) },
                                     snapshot: source.snapshot, schemas: source.registry, pending: pending)
        reader = source.reader(pending: pending)
    }

    func matches(_ bytes: [UInt8], key: StorageKey) throws -> Bool {
        let record = try onRecords.record(bytes, key: key)
        var model: Model?
        for (index, predicate) in predicates.enumerated() {
            switch try onRecords.isTrue(index, for: record, key: key) {
            case true?: continue
            case false?: return false
            case nil:
                guard let predicate else { return false }
                if model == nil { model = try reader.model(Model.self, key: key, bytes: bytes) }
                guard let model, try predicate.evaluate(model) else { return false }
            }
        }
        return true
    }
}
