import Foundation
import MirrorStoreEngine

extension Results {
    /// The results now, then again after every commit that changes them, with what changed:
    /// an `AsyncSequence` of ``ResultsChange``.
    ///
    /// ```swift
    /// for try await change in try store.objects(Hero.self).filter(#Predicate { $0.side == .hero }).changes {
    ///     tableView.apply(deletions: change.deletions, insertions: change.insertions,
    ///                     modifications: change.modifications)
    /// }
    /// ```
    ///
    /// The first element holds the current results, with no differences. A commit wakes the
    /// sequence only if it wrote the model's type or a type it links to; the filters and sorts
    /// then run again on the newest snapshot, and an element comes only if the results differ
    /// (keys, order, or an object's stored values). Commits that arrive while the consumer is
    /// busy coalesce into one element. Ending or cancelling the consuming task ends the sequence
    /// and unregisters it; so does closing the store.
    public var changes: ResultsChanges<Model> { ResultsChanges(results: self) }
}

extension Store {
    /// How many results and objects are being observed, for tests that check an ended
    /// observation lets go of its registration.
    @_spi(Testing) public var observerCount: Int { observation.observers.count }
}

/// The `AsyncSequence` of ``Results/changes``.
public struct ResultsChanges<Model: Persistable>: AsyncSequence, Sendable {
    /// One element per change of the results.
    public typealias Element = ResultsChange<Model>

    let results: Results<Model>

    /// A new observation of the results, registered when it is first asked for an element.
    public func makeAsyncIterator() -> Iterator {
        Iterator(observer: ResultsObserver(results: results))
    }

    /// Waits for the next change of the results.
    public struct Iterator: AsyncIteratorProtocol {
        let observer: ResultsObserver<Model>

        /// The next change, or `nil` once the task is cancelled or the store closed.
        ///
        /// - Throws: ``StoreError`` or ``MappingError`` when the results cannot be read again.
        public mutating func next() async throws -> ResultsChange<Model>? {
            try await observer.next()
        }
    }
}

/// One consumer's observation of results: its registration, and the keys and fingerprints of
/// the last element it produced.
final class ResultsObserver<Model: Persistable> {
    private let results: Results<Model>
    private let signal = ChangeSignal()
    private var registration: ObserverRegistration?
    private var previous: [(key: StorageKey, fingerprint: Int)]?
    /// Where each result of the last element was stored, with its fingerprint: a result still
    /// stored there has the same bytes, and its fingerprint is not read again.
    private var known: [StorageKey: (identity: StoredValueIdentity, fingerprint: Int)] = [:]

    init(results: Results<Model>) {
        self.results = results
    }

    func next() async throws -> ResultsChange<Model>? {
        guard let observation = results.source.observation else {
            throw StoreError(.notObservable(typeName: results.source.plan.typeName))
        }
        let plan = results.source.plan
        guard let previous else {
            // Registered before the first read, so no commit falls between the two.
            registration = observation.observers.register(signal, forTypes: observation.watchedTypes(of: plan))
            let current = try results.rerun(on: observation.source(for: results.source.entry))
            self.previous = try fingerprints(of: current)
            return ResultsChange(results: current, deletions: [], insertions: [], modifications: [])
        }
        var last = previous
        while true {
            guard await signal.wait(), !observation.isClosed else {
                registration = nil
                return nil
            }
            let current = try results.rerun(on: observation.source(for: results.source.entry))
            let fingerprints = try fingerprints(of: current)
            let diff = ResultsDiff(old: last, new: fingerprints)
            last = fingerprints
            self.previous = fingerprints
            if diff.isEmpty { continue }
            return ResultsChange(results: current, deletions: diff.deletions, insertions: diff.insertions, modifications: diff.modifications)
        }
    }

    /// Each result's key with a hash of its stored bytes, read only for a result stored
    /// elsewhere than in the last element: what the snapshot holds decides, whichever commits'
    /// signals have arrived.
    private func fingerprints(of results: Results<Model>) throws -> [(key: StorageKey, fingerprint: Int)] {
        let snapshot = results.source.snapshot
        let typeName = results.source.plan.typeName
        var next: [StorageKey: (identity: StoredValueIdentity, fingerprint: Int)] = [:]
        next.reserveCapacity(known.count)
        let fingerprints = try results.allKeys.map { key in
            guard let identity = snapshot.storedValueIdentity(type: typeName, key: key) else {
                throw results.source.missing(key)
            }
            if let old = known[key], old.identity == identity {
                next[key] = old
                return (key, old.fingerprint)
            }
            var hasher = Hasher()
            hasher.combine(try snapshot.value(type: typeName, key: key))
            let fingerprint = hasher.finalize()
            next[key] = (identity, fingerprint)
            return (key, fingerprint)
        }
        known = next
        return fingerprints
    }
}
