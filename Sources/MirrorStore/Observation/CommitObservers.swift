import Foundation
import MirrorStoreEngine

/// The observers of one store, by the stored types they depend on. A commit signals only those
/// whose types it wrote; with none registered it costs one lock.
final class CommitObservers: Sendable {
    private struct Table {
        var byType: [String: [Int: ChangeSignal]] = [:]
        var nextIdentifier = 0
    }

    private let table = Lock(Table())

    /// Registers `signal` for commits that write any of `types`; keep the registration to stay
    /// registered.
    func register(_ signal: ChangeSignal, forTypes types: Set<String>) -> ObserverRegistration {
        let identifier = table.withLock { table in
            table.nextIdentifier += 1
            for type in types { table.byType[type, default: [:]][table.nextIdentifier] = signal }
            return table.nextIdentifier
        }
        return ObserverRegistration(observers: self, identifier: identifier, types: types)
    }

    fileprivate func unregister(_ identifier: Int, types: Set<String>) {
        table.withLock { table in
            for type in types {
                table.byType[type]?[identifier] = nil
                if table.byType[type]?.isEmpty == true { table.byType[type] = nil }
            }
        }
    }

    /// Signals every observer of a type a commit wrote, once each.
    func notify(written types: Set<String>) {
        let woken = table.withLock { table in
            var woken: [Int: ChangeSignal] = [:]
            for type in types {
                guard let observers = table.byType[type] else { continue }
                woken.merge(observers) { first, _ in first }
            }
            return woken
        }
        for signal in woken.values { signal.signal() }
    }

    /// Signals every observer, whatever it watches.
    func notifyAll() {
        let signals = table.withLock { $0.byType.values.flatMap(\.values) }
        for signal in signals { signal.signal() }
    }

    /// How many observers are registered, for tests that check cancellation frees them.
    var count: Int {
        table.withLock { Set($0.byType.values.flatMap(\.keys)).count }
    }
}

/// An observer's place in `CommitObservers`, given up when this is released.
final class ObserverRegistration: Sendable {
    private let observers: CommitObservers
    private let identifier: Int
    private let types: Set<String>

    fileprivate init(observers: CommitObservers, identifier: Int, types: Set<String>) {
        self.observers = observers
        self.identifier = identifier
        self.types = types
    }

    deinit {
        observers.unregister(identifier, types: types)
    }
}
