import Foundation
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
    private let order: KeyOrder

    init(snapshot: EngineSnapshot, registry: ModelRegistry, plan: TypePlan) {
        self.snapshot = snapshot
        self.registry = registry
        self.plan = plan
        order = KeyOrder(snapshot: snapshot, typeName: plan.typeName)
    }

    /// The number of objects, counted without reading any.
    public var count: Int { snapshot.count(type: plan.typeName) }

    /// Whether there are no objects.
    public var isEmpty: Bool { count == 0 }

    /// The object at `index` in key order, decoded now.
    ///
    /// - Throws: ``StoreError`` or ``MappingError`` when the stored record cannot become a model.
    public func object(at index: Int) throws -> Model {
        let keys = order.keys
        let reader = RecordReader(snapshot: snapshot, schemas: registry)
        guard keys.indices.contains(index), let model = try reader.model(Model.self, plan: plan, key: keys[index]) else {
            throw StoreError(.corruptedRecord(typeName: plan.typeName, key: "#\(index)", reason: "no object at this position"))
        }
        return model
    }

    /// Every object, decoded in key order from one sequential read of the file. Links shared
    /// between objects come back shared.
    public func all() throws -> [Model] {
        try RecordReader(snapshot: snapshot, schemas: registry).allModels(Model.self, plan: plan)
    }
}

/// The keys of one type in a snapshot, sorted on first use and then kept: counting and reading
/// everything need no order, reading by position does.
private final class KeyOrder: Sendable {
    private let snapshot: EngineSnapshot
    private let typeName: String
    private let lock = NSLock()
    private nonisolated(unsafe) var sorted: [StorageKey]?

    init(snapshot: EngineSnapshot, typeName: String) {
        self.snapshot = snapshot
        self.typeName = typeName
    }

    var keys: [StorageKey] {
        lock.withLock {
            if let sorted { return sorted }
            let keys = snapshot.keys(type: typeName).sorted(by: StorageKey.precedes)
            sorted = keys
            return keys
        }
    }
}
