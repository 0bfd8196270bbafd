import MirrorStoreEngine

/// Reads records out of one snapshot (and a transaction's pending writes), resolving links by key.
/// Each stored record is decoded once per reader, so shared targets come back as one record and
/// cycles end.
final class RecordReader {
    private let snapshot: EngineSnapshot
    private let schemas: any SchemaSource
    private let pending: PendingWrites?
    private var records: [String: [StorageKey: ManagedObject]] = [:]
    /// One context for the reader's lifetime: a record reached from two objects becomes one model.
    private var context = DecodingContext()

    init(snapshot: EngineSnapshot, schemas: any SchemaSource, pending: PendingWrites? = nil) {
        self.snapshot = snapshot
        self.schemas = schemas
        self.pending = pending
    }

    func record(type typeName: String, key: StorageKey) throws -> ManagedObject? {
        if let record = records[typeName]?[key] { return record }
        let bytes: [UInt8]
        switch pending?.state(type: typeName, key: key) {
        case .written(let written): bytes = written
        case .deleted: return nil
        case nil:
            guard let stored = try snapshot.value(type: typeName, key: key) else { return nil }
            bytes = stored
        }
        return try record(type: typeName, key: key, bytes: bytes)
    }

    /// The record stored as `bytes` under `key`, when the caller already read them.
    func record(type typeName: String, key: StorageKey, bytes: [UInt8]) throws -> ManagedObject {
        if let record = records[typeName]?[key] { return record }
        guard let schema = schemas.schema(named: typeName) else {
            throw StoreError(.unknownModel(typeName: typeName))
        }
        let record = ManagedObject(objectSchema: schema, values: [])
        records[typeName, default: [:]][key] = record
        let decoder = RecordDecoder(
            schema: { [schemas] in schemas.schema(named: $0) },
            resolve: { [unowned self] in try self.record(type: $0, key: $1) })
        do {
            try decoder.decode(bytes, into: record)
        } catch let failure as RecordCodingFailure {
            throw StoreError(failure, typeName: typeName, key: key.description)
        }
        return record
    }

    func model<Model: Persistable>(_ type: Model.Type, plan: TypePlan, key: StorageKey) throws -> Model? {
        guard let record = try record(type: plan.typeName, key: key) else { return nil }
        return try model(type, plan: plan, record: record)
    }

    func model<Model: Persistable>(_ type: Model.Type, plan: TypePlan, record: ManagedObject) throws -> Model {
        try ModelMapping.model(type, from: record, plan: plan, context: &context)
    }

    /// Every stored record of a type in key order, read in bulk (a snapshot reader only).
    func allRecords(type typeName: String) throws -> [ManagedObject] {
        var entries = try snapshot.entries(type: typeName)
        entries.sort { StorageKey.precedes($0.key, $1.key) }
        return try entries.map { try record(type: typeName, key: $0.key, bytes: $0.value) }
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
}

extension ModelRegistry: SchemaSource {}

extension StorageKey {
    /// Integers in numeric order, then strings, then byte strings, each in lexicographic order.
    static func precedes(_ lhs: StorageKey, _ rhs: StorageKey) -> Bool {
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)): a < b
        case (.string(let a), .string(let b)): a < b
        case (.bytes(let a), .bytes(let b)): a.lexicographicallyPrecedes(b)
        case (.integer, _): true
        case (.string, .bytes): true
        default: false
        }
    }
}
