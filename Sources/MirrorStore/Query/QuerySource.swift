import MirrorStoreEngine

/// What a query runs against: one snapshot, the store's models, and the queried type.
///
/// A class: every `Results` made from another shares it, and copying the snapshot, the
/// registry and the entry field by field was a tenth of a lookup by an indexed value.
final class QuerySource: Sendable {
    let snapshot: EngineSnapshot
    /// The snapshot's version, apart from it so that checking it copies nothing.
    let version: UInt64
    let registry: ModelRegistry
    let entry: ModelRegistry.Entry
    /// The store's observation, for results that can be observed (not those made inside a
    /// transaction, whose snapshot includes writes not yet committed).
    let observation: StoreObservation?
    /// The queried type's stored values, found once for all the reads of a query.
    let values: TypeValues
    /// The queried type's indexes, each found at most once for all the plans made from this
    /// source, when first asked for.
    let indexes: TypeIndexes
    /// The state of the results holding every object of the type, shared by all of them: they
    /// are the same rows of the same snapshot, so what one learns (their keys in order, their
    /// count) serves the others.
    let everyObject: ResultsState
    /// Why the snapshot reads nothing (its engine had closed when it was taken), or nil: known
    /// once, as checking the snapshot for each query copied it.
    let closedFailure: StorageError?

    init(snapshot: EngineSnapshot, registry: ModelRegistry, entry: ModelRegistry.Entry, observation: StoreObservation? = nil) {
        self.snapshot = snapshot
        version = snapshot.version
        self.registry = registry
        self.entry = entry
        self.observation = observation
        values = snapshot.values(ofType: entry.plan.typeName)
        indexes = TypeIndexes(entry.indexLayout, snapshot: snapshot)
        do {
            try snapshot.checkOpen()
            closedFailure = nil
        } catch {
            closedFailure = error
        }
        everyObject = ResultsState(
            conditions: [], rows: .all,
            plan: QueryPlan(access: .scan(typeName: entry.plan.typeName), filter: .none, order: .primaryKey), sortingSteps: nil)
    }

    /// Throws when the snapshot was taken after its engine closed (``EngineSnapshot/checkOpen()``).
    func checkOpen() throws(StorageError) {
        if let closedFailure { throw closedFailure }
    }

    var plan: TypePlan { entry.plan }
    var schema: ObjectSchema { entry.plan.schema }

    /// The stored model under `key`, decoded now, or `nil` when the snapshot does not hold it.
    func model<Model: Persistable>(_ type: Model.Type, key: StorageKey) throws -> Model? {
        guard let bytes = try values.value(for: key) else { return nil }
        return try ModelReader.model(type, entry: entry, key: key, bytes: bytes, snapshot: snapshot, registry: registry)
    }

    /// The stored model under `key`, a key the results list, so its absence is damage; read at
    /// `location` when the query that listed it found the record there. Not optional: results
    /// run unspecialised, and `Model?` would cost a metadata lookup per read.
    func listedModel<Model: Persistable>(_ type: Model.Type, key: StorageKey, at location: ValueLocation?) throws -> Model {
        if entry.isStandalone {
            // Read where the record lies, not copied out first: no other record takes part.
            guard let location = try location ?? values.location(for: key) else { throw missing(key) }
            let plan = entry.plan
            let embedded = entry.embeddedSchemas
            return try values.withValue(at: location) { bytes in
                try ModelReader.standaloneModel(type, plan: plan, embedding: embedded, bytesInPlace: bytes, key: key)
            }
        }
        return try ModelReader.model(type, entry: entry, key: key, bytes: listedBytes(of: key, at: location), snapshot: snapshot, registry: registry)
    }

    /// A reader of the queried type's models in this snapshot, as `pending` writes (if any) have
    /// left it. Models read through one reader share the instances of the records they link to.
    func reader(pending: PendingWrites? = nil) -> ModelReader {
        ModelReader(entry: entry, snapshot: snapshot, registry: registry, pending: pending)
    }

    /// The stored bytes of `key`, a key the results list, so its absence is damage: read at
    /// `location`, a location this source's snapshot gave for the key, without looking the key up
    /// again, or by the key when there is none.
    func listedBytes(of key: StorageKey, at location: ValueLocation? = nil) throws -> [UInt8] {
        if let location { return try values.value(at: location) }
        guard let bytes = try values.value(for: key) else { throw missing(key) }
        return bytes
    }

    func missing(_ key: StorageKey) -> StoreError {
        StoreError(.corruptedRecord(typeName: plan.typeName, key: PrimaryKey.text(key, of: plan.schema), reason: "the index lists a record the snapshot does not hold"))
    }
}
