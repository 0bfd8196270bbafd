import MirrorStoreEngine

/// The objects of one model type in a consistent snapshot of the store, in primary-key order
/// (generated identities in insertion order).
///
/// Results are lazy: ``count`` reads no object, and each object is decoded and mapped when it is
/// asked for. They are values that can cross threads; later writes do not change them.
///
/// ```swift
/// let heroes = try store.objects(Hero.self)
/// print(heroes.count)                     // no decoding
/// let first = try heroes.object(at: 0)    // decodes one
/// for hero in try heroes.all() { … }      // decodes all
/// ```
public struct Results<Model: Persistable>: Sendable {
    private let snapshot: EngineSnapshot
    private let registry: ModelRegistry
    private let plan: TypePlan
    private let keys: [StorageKey]

    init(snapshot: EngineSnapshot, registry: ModelRegistry, plan: TypePlan) {
        self.snapshot = snapshot
        self.registry = registry
        self.plan = plan
        keys = RecordReader(snapshot: snapshot, schemas: registry).keys(type: plan.typeName)
    }

    /// The number of objects, counted without reading any.
    public var count: Int { keys.count }

    /// Whether there are no objects.
    public var isEmpty: Bool { keys.isEmpty }

    /// The object at `index`, decoded now.
    ///
    /// - Throws: ``StoreError`` or ``MappingError`` when the stored record cannot become a model.
    public func object(at index: Int) throws -> Model {
        let reader = RecordReader(snapshot: snapshot, schemas: registry)
        guard keys.indices.contains(index), let model = try reader.model(Model.self, plan: plan, key: keys[index]) else {
            throw StoreError(.corruptedRecord(typeName: plan.typeName, key: "#\(index)", reason: "no object at this position"))
        }
        return model
    }

    /// Every object, decoded in key order. Links shared between objects come back shared.
    public func all() throws -> [Model] {
        let reader = RecordReader(snapshot: snapshot, schemas: registry)
        var models: [Model] = []
        models.reserveCapacity(keys.count)
        for key in keys {
            if let model = try reader.model(Model.self, plan: plan, key: key) {
                models.append(model)
            }
        }
        return models
    }
}
