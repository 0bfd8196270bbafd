import Foundation
import MirrorStoreEngine

/// The observers of one store, by the stored types they depend on. A commit signals only those
/// whose types it wrote; with none registered it costs one lock.
final class CommitObservers: @unchecked Sendable {
    private let lock = NSLock()
    private var byType: [String: [Int: Observer]] = [:]
    private var nextIdentifier = 0

    private struct Observer {
        let signal: ChangeSignal
        /// The type whose written keys the observer is told, if it wants them.
        let keyedType: String?
    }

    /// Registers `signal` for commits that write any of `types`, telling it the keys written of
    /// `keyedType` (if any); keep the registration to stay registered.
    func register(_ signal: ChangeSignal, forTypes types: Set<String>, keyedType: String?) -> ObserverRegistration {
        lock.lock()
        defer { lock.unlock() }
        nextIdentifier += 1
        let identifier = nextIdentifier
        for type in types { byType[type, default: [:]][identifier] = Observer(signal: signal, keyedType: keyedType) }
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

    /// Signals every observer of a type a commit wrote, once each, with the keys it wrote of the
    /// observer's keyed type (`written` as `WriteBatch.writtenKeys` gives them).
    func notify(written: [String: Set<StorageKey>?]) {
        lock.lock()
        var woken: [Int: Observer] = [:]
        for type in written.keys {
            guard let observers = byType[type] else { continue }
            woken.merge(observers) { first, _ in first }
        }
        lock.unlock()
        for observer in woken.values {
            guard let keyedType = observer.keyedType else {
                observer.signal.signal()
                continue
            }
            // A type the commit did not write gives no keys: none of its objects changed.
            observer.signal.signal(writtenKeys: written[keyedType] ?? .some([]))
        }
    }

    /// Signals every observer, whatever it watches, as if every key had changed.
    func notifyAll() {
        let observers = lock.withLock { byType.values.flatMap(\.values) }
        for observer in observers { observer.signal.signal(writtenKeys: nil) }
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
