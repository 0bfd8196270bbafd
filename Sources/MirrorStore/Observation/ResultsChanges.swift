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
    public var changes: ResultsChanges<Model> { ResultsChanges(results: self, watched: nil) }

    /// ``changes`` that come only when the results gain or lose an object, change order, or one
    /// of the properties at `keyPaths` changes in one of them: a list that shows names does not
    /// redraw when another property changes.
    ///
    /// ```swift
    /// for try await change in try heroes.changes(keyPaths: [\.name, \.publisher?.name]) {
    ///     tableView.reloadRows(change.modifications)   // only heroes whose name or publisher's name changed
    /// }
    /// ```
    ///
    /// A key path may go through to-one links and embedded models (`\.publisher?.name`), as in
    /// a predicate; a change of the linked object's watched property counts as a modification of
    /// each result that links to it. ``ResultsChange/modifications`` lists only those results.
    ///
    /// - Throws: ``QueryError`` naming a key path that is not a stored property (a computed or
    ///   ignored one), or that goes on from a property that is not a to-one link or embedded model.
    public func changes(keyPaths: [PartialKeyPath<Model>]) throws -> ResultsChanges<Model> {
        ResultsChanges(results: self, watched: try WatchedProperties(keyPaths, of: source))
    }
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
    /// The properties whose changes count, or `nil` for every stored value.
    let watched: WatchedProperties?

    /// A new observation of the results, registered when it is first asked for an element.
    public func makeAsyncIterator() -> Iterator {
        Iterator(observer: ResultsObserver(results: results, watched: watched))
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
    private let watched: WatchedProperties?

    init(results: Results<Model>, watched: WatchedProperties?) {
        self.results = results
        self.watched = watched
    }

    func next() async throws -> ResultsChange<Model>? {
        guard let observation = results.source.observation else {
            throw StoreError(.notObservable(typeName: results.source.plan.typeName))
        }
        let plan = results.source.plan
        guard let previous else {
            // Registered before the first read, so no commit falls between the two.
            registration = observation.register(signal, forTypes: observation.watchedTypes(of: plan))
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
        if let watched {
            // Read anew each time: a watched path may go through linked records, which can change
            // while the result's own bytes stay where they were.
            let keys = try results.allKeys
            return Array(zip(keys, try watched.fingerprints(of: keys, in: results.source))).map { (key: $0.0, fingerprint: $0.1) }
        }
        let snapshot = results.source.snapshot
        let typeName = results.source.plan.typeName
        var next: [StorageKey: (identity: StoredValueIdentity, fingerprint: Int)] = [:]
        next.reserveCapacity(known.count)
        let fingerprints = try results.allKeys.map { key in
            guard let identity = try snapshot.storedValueIdentity(type: typeName, key: key) else {
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
