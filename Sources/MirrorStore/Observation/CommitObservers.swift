import Foundation
import MirrorStoreEngine

/// The observers of one store, by the stored types they depend on. A commit signals only those
/// whose types it wrote; with none registered it costs one lock.
final class CommitObservers: @unchecked Sendable {
    private let lock = NSLock()
    private var byType: [String: [Int: ChangeSignal]] = [:]
    private var nextIdentifier = 0

    /// Registers `signal` for commits that write any of `types`; keep the registration to stay
    /// registered.
    func register(_ signal: ChangeSignal, forTypes types: Set<String>) -> ObserverRegistration {
        lock.lock()
        defer { lock.unlock() }
        nextIdentifier += 1
        let identifier = nextIdentifier
        for type in types { byType[type, default: [:]][identifier] = signal }
        return ObserverRegistration(observers: self, identifier: identifier, types: types)
    }

    fileprivate func unregister(_ identifier: Int, types: Set<String>) {
        lock.lock()
        defer { lock.unlock() }
        for type in types {
            byType[type]?[identifier] = nil
            if byType[type]?.isEmpty == true { byType[type] = nil }
        }
    }

    /// Signals every observer of a type a commit wrote, once each.
    func notify(written types: Set<String>) {
        lock.lock()
        var woken: [Int: ChangeSignal] = [:]
        for type in types {
            guard let observers = byType[type] else { continue }
            woken.merge(observers) { first, _ in first }
        }
        lock.unlock()
        for signal in woken.values { signal.signal() }
    }

    /// Signals every observer, whatever it watches.
    func notifyAll() {
        let signals = lock.withLock { byType.values.flatMap(\.values) }
        for signal in signals { signal.signal() }
    }

    /// How many observers are registered, for tests that check cancellation frees them.
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return Set(byType.values.flatMap(\.keys)).count
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
