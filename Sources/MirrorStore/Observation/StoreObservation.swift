import Foundation
import MirrorStoreEngine

/// A flag set once, read from any thread.
final class ClosedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    var isSet: Bool { lock.withLock { value } }

    func set() { lock.withLock { value = true } }
}

/// What observing needs from a store: its newest snapshot, its models and its observers. Held by
/// the results and sequences that observe, so none of them keeps the `Store` itself alive.
final class StoreObservation: Sendable {
    let engine: StorageEngine
    let registry: ModelRegistry
    let observers = CommitObservers()
    private let closed = ClosedFlag()

    init(engine: StorageEngine, registry: ModelRegistry) {
        self.engine = engine
        self.registry = registry
    }

    /// Whether the store was closed; observers then end.
    var isClosed: Bool { closed.isSet }

    /// Ends every observation: they wake and find the store closed.
    func close() {
        closed.set()
        observers.notifyAll()
    }

    /// The newest committed state of `entry`'s type, to run queries on.
    func source(for entry: ModelRegistry.Entry) -> QuerySource {
        QuerySource(snapshot: engine.snapshot(), registry: registry, entry: entry, observation: self)
    }

    /// The stored types a model's objects depend on: its own, and every type it links to or
    /// reads inverses from, at any depth.
    func watchedTypes(of plan: TypePlan) -> Set<String> {
        Set(plan.reachablePlans.map(\.typeName))
    }
}
