import Foundation
import MirrorStoreEngine

/// What observing needs from a store: its newest snapshot, its models and its observers. Held by
/// the results and sequences that observe, so none of them keeps the `Store` itself alive.
final class StoreObservation: Sendable {
    let engine: StorageEngine
    let registry: ModelRegistry
    let observers = CommitObservers()
    /// Set once, when the store closes.
    private let closed = Lock(false)
    /// For a store that reads beside a writer in another process: how often observers look for
    /// the writer's commits; nil for a writer, whose own commits signal its observers.
    private let refreshInterval: Duration?
    /// Runs before each refresh: the store drops its cached query sources, so that applying the
    /// new commits changes the index in place instead of copying what a cached snapshot holds.
    private let beforeRefresh: @Sendable () -> Void
    /// Whether a polling task runs.
    private let polling = Lock<Bool>(false)

    init(
        engine: StorageEngine, registry: ModelRegistry, refreshInterval: Duration? = nil,
        beforeRefresh: @escaping @Sendable () -> Void = {}
    ) {
        self.engine = engine
        self.registry = registry
        self.refreshInterval = refreshInterval
        self.beforeRefresh = beforeRefresh
    }

    /// Registers `signal` for commits that write any of `types`, and for a store reading beside
    /// a writer, starts looking for the writer's commits while observers remain.
    func register(_ signal: ChangeSignal, forTypes types: Set<String>) -> ObserverRegistration {
        let registration = observers.register(signal, forTypes: types)
        startPolling()
        return registration
    }

    /// Makes the writer's newer commits visible and signals the observers of the types they
    /// wrote (every observer when the file was opened anew). Returns whether there were any.
    @discardableResult
    func refresh() throws -> Bool {
        beforeRefresh()
        let outcome = try engine.refresh()
        guard outcome.hasNewCommits || outcome.reopened else { return false }
        if let types = outcome.writtenTypes {
            observers.notify(written: types)
        } else {
            observers.notifyAll()
        }
        return outcome.hasNewCommits
    }

    /// Starts the polling task of a reading store, unless one runs. It refreshes every
    /// `refreshInterval` and ends once no observer is left (or the store closes); a registration
    /// made as it ends starts it again, since the count is checked after `polling` is cleared.
    private func startPolling() {
        guard let interval = refreshInterval, polling.withLock({ running in
            defer { running = true }
            return !running
        }) else { return }
        Task.detached { [weak self] in
            while true {
                try? await Task.sleep(for: interval)
                guard let self, !self.isClosed else { return }
                if self.observers.count == 0 {
                    self.polling.withLock { $0 = false }
                    let resume = self.observers.count > 0 && self.polling.withLock { running in
                        defer { running = true }
                        return !running
                    }
                    if !resume { return }
                }
                // A failed refresh leaves the previous state; the next one tries again.
                _ = try? self.refresh()
            }
        }
    }

    /// Whether the store was closed; observers then end.
    var isClosed: Bool { closed.withLock { $0 } }

    /// Ends every observation: they wake and find the store closed.
    func close() {
        closed.withLock { $0 = true }
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
