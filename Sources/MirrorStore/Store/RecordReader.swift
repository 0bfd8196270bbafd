import MirrorStoreEngine

/// Reads records out of one snapshot (and a transaction's pending writes), resolving links by key.
/// Each stored record is decoded once per reader, so shared targets come back as one record and
/// cycles end.
final class RecordReader {
    let snapshot: EngineSnapshot
    let schemas: any SchemaSource
    let pending: PendingWrites?
    private var records: [String: [StorageKey: ManagedObject]] = [:]
    /// One context for the reader's lifetime: a record reached from two objects becomes one model.
    private var context = DecodingContext(spansConversions: true)
    /// How many records are being decoded one inside the other, through links.
    private var depth = 0
    /// Records past ``NestedConversion/recursionLimit`` that are still empty.
    private var unread: [UnreadRecord] = []
    /// Reads records of any type, resolving links through this reader.
    private(set) lazy var decoder = RecordDecoder(
        schema: { [schemas] in schemas.schema(named: $0) },
        resolve: { [unowned self] in try self.record(type: $0, key: $1) })

    init(snapshot: EngineSnapshot, schemas: any SchemaSource, pending: PendingWrites? = nil) {
        self.snapshot = snapshot
        self.schemas = schemas
        self.pending = pending
        context.inverseResolver = self
    }

    func record(type typeName: String, key: StorageKey) throws -> ManagedObject? {
        if let record = records[typeName]?[key] { return record }
        guard let bytes = try bytes(type: typeName, key: key) else { return nil }
        return try record(type: typeName, key: key, bytes: bytes)
    }

    /// The stored bytes under a key, as the pending writes (if any) have left them.
    private func bytes(type typeName: String, key: StorageKey) throws -> [UInt8]? {
        try StoredView(snapshot: snapshot, pending: pending).value(type: typeName, key: key)
    }

    /// The record stored as `bytes` under `key`, when the caller already read them.
    func record(type typeName: String, key: StorageKey, bytes: [UInt8]) throws -> ManagedObject {
        if let record = records[typeName]?[key] { return record }
        return try decode(bytes, key: key, as: try readingFacts(of: typeName))
    }

    /// What reading a type's records needs, looked up once per type rather than per record.
    private struct ReadingFacts {
        let typeName: String
        let schema: ObjectSchema
        /// Records other records can link to must be found again (and released after).
        let isLinkTarget: Bool
    }

    private func readingFacts(of typeName: String) throws -> ReadingFacts {
        guard let schema = schemas.schema(named: typeName) else {
            throw StoreError(.unknownModel(typeName: typeName))
        }
        return ReadingFacts(typeName: typeName, schema: schema, isLinkTarget: schemas.isLinkTarget(typeName))
    }

    private func decode(_ bytes: [UInt8], key: StorageKey, as facts: ReadingFacts) throws -> ManagedObject {
        depth += 1
        defer { depth -= 1 }
        let record = ManagedObject(objectSchema: facts.schema, values: [])
        if facts.isLinkTarget {
            records[facts.typeName, default: [:]][key] = record
        }
        // Past the limit a record is found again through `records` at once and read later, by
        // the loop at the limit: chains of links of any length are read without recursion.
        if depth > NestedConversion.recursionLimit {
            unread.append(UnreadRecord(record: record, bytes: bytes, key: key, facts: facts))
            return record
        }
        try fill(record, from: bytes, key: key, as: facts)
        if depth == NestedConversion.recursionLimit {
            let outer = depth
            defer { depth = outer }
            while let next = unread.popLast() {
                depth = NestedConversion.recursionLimit
                try fill(next.record, from: next.bytes, key: next.key, as: next.facts)
            }
        }
        return record
    }

    private func fill(_ record: ManagedObject, from bytes: [UInt8], key: StorageKey, as facts: ReadingFacts) throws {
        try PrimaryKey.checkStored(bytes, under: key, schema: facts.schema)
        do {
            try decoder.decode(bytes, into: record)
        } catch let failure as RecordCodingFailure {
            throw StoreError(failure, typeName: facts.typeName, key: PrimaryKey.text(key, of: facts.schema))
        }
    }

    /// A record made past ``NestedConversion/recursionLimit`` and not yet read.
    private struct UnreadRecord {
        let record: ManagedObject
        let bytes: [UInt8]
        let key: StorageKey
        let facts: ReadingFacts
    }

    /// The model made from `record`, one of this reader's, in the reader's context: a record met
    /// again becomes the instance made from it the first time.
    func mapModel<Model: Persistable>(_ type: Model.Type, plan: TypePlan, record: ManagedObject) throws -> Model {
        try mapping { context throws(MappingError) in
            try ModelMapping.model(type, from: record, plan: plan, context: &context)
        }
    }

    /// Runs one mapping with the reader's context. A read of an inverse that failed inside it
    /// comes out as a `MappingError` (the mapping throws nothing else): the original is thrown.
    func mapping<Result>(_ body: (inout DecodingContext) throws -> Result) throws -> Result {
        do {
            return try body(&context)
        } catch {
            throw context.inverses.takeFailure() ?? error
        }
    }

    /// Every stored record of a type in key order, read in bulk (a snapshot reader only).
    func allRecords(type typeName: String) throws -> [ManagedObject] {
        let facts = try readingFacts(of: typeName)
        var all: [ManagedObject] = []
        all.reserveCapacity(snapshot.count(type: typeName))
        try snapshot.forEachEntryInKeyOrder(type: typeName) { key, bytes in
            let known = facts.isLinkTarget ? records[typeName]?[key] : nil
            all.append(try known ?? decode(bytes, key: key, as: facts))
        }
        return all
    }

    /// Links between stored records may form cycles; the models hold the data by now.
    deinit {
        for records in records.values {
            for record in records.values { record.releaseGraph() }
        }
    }
}

/// Where a reader finds the schema of each type: the registered models, or the file itself.
protocol SchemaSource: Sendable {
    func schema(named typeName: String) -> ObjectSchema?
    /// Whether some schema has a link to `typeName`.
    func isLinkTarget(_ typeName: String) -> Bool
}

extension ModelRegistry: SchemaSource {}

extension Sequence<ObjectSchema> {
    /// The names of the types these schemas link to.
    var linkTargets: Set<String> {
        var targets = Set<String>()
        for schema in self {
            for property in schema.properties {
                property.kind.collectLinkTargets(into: &targets)
            }
        }
        return targets
    }
}

extension PropertyKind {
    func collectLinkTargets(into targets: inout Set<String>) {
        switch self {
        case .object(let typeName): targets.insert(typeName)
        case .list(let inner), .set(let inner), .dictionary(let inner), .optional(let inner): inner.collectLinkTargets(into: &targets)
        default: break
        }
    }
}
