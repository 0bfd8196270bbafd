import Foundation
import MirrorStoreEngine

extension Store {
    /// The object stored under `primaryKey` now, then again after every commit that changes it,
    /// an object it links to, or an object one of its ``LinkingObjects`` properties lists (at any
    /// depth, as a read loads them): `nil` while there is none, as after a delete.
    ///
    /// ```swift
    /// for try await hero in store.changes(Hero.self, primaryKey: 1455) {
    ///     print(hero?.publisher?.name ?? "deleted")
    /// }
    /// ```
    ///
    /// Commits that arrive while the consumer is busy coalesce into one element; cancelling the
    /// consuming task, or closing the store, ends the sequence.
    ///
    /// - Throws: ``StoreError`` when the model is not one of the store's or the key does not fit.
    public func changes<Model: Persistable>(_ type: Model.Type, primaryKey: some RecordPrimitive) throws -> ObjectChanges<Model> {
        let registry = observation.registry
        let entry = try registry.entry(for: type)
        return ObjectChanges(observation: observation, entry: entry, key: try registry.key(primaryKey, for: entry), watched: nil)
    }

    /// ``changes(_:primaryKey:)`` that come only when the object appears, disappears, or one of
    /// the properties at `keyPaths` changes, through to-one links and embedded models too.
    ///
    /// ```swift
    /// for try await hero in try store.changes(Hero.self, primaryKey: 1455, keyPaths: [\.name, \.publisher?.name]) {
    ///     title = hero?.name ?? ""                          // not for a change of realName
    /// }
    /// ```
    ///
    /// - Throws: ``StoreError`` when the model is not one of the store's or the key does not fit;
    ///   ``QueryError`` naming a key path that is not a stored property.
    public func changes<Model: Persistable>(
        _ type: Model.Type, primaryKey: some RecordPrimitive, keyPaths: [PartialKeyPath<Model>]
    ) throws -> ObjectChanges<Model> {
        let registry = observation.registry
        let entry = try registry.entry(for: type)
        let source = QuerySource(snapshot: observation.engine.snapshot(), registry: registry, entry: entry)
        return ObjectChanges(
            observation: observation, entry: entry, key: try registry.key(primaryKey, for: entry),
            watched: try WatchedProperties(keyPaths, of: source))
    }
}

/// The `AsyncSequence` of ``Store/changes(_:primaryKey:)``: the object, or `nil` when it is not
/// stored, after each commit that changes it.
public struct ObjectChanges<Model: Persistable>: AsyncSequence, Sendable {
    /// The object as of a commit, or `nil` when there is none.
    public typealias Element = Model?

    let observation: StoreObservation
    let entry: ModelRegistry.Entry
    let key: StorageKey
    /// The properties whose changes count, or `nil` for every stored value.
    let watched: WatchedProperties?

    /// A new observation of the object, registered when it is first asked for an element.
    public func makeAsyncIterator() -> Iterator {
        Iterator(observer: ObjectObserver(observation: observation, entry: entry, key: key, watched: watched))
    }

    /// Waits for the next change of the object.
    public struct Iterator: AsyncIteratorProtocol {
        let observer: ObjectObserver<Model>

        /// The object after the next commit that changes it (the first call: as it is now), or
        /// `nil` at the end of the sequence, once the task is cancelled or the store closed.
        ///
        /// - Throws: ``StoreError`` or ``MappingError`` when the object cannot be read.
        public mutating func next() async throws -> Model?? {
            try await observer.next()
        }
    }
}

/// A stored object reached from an observed one: its type and key.
private struct Reached: Hashable {
    let type: String
    let key: StorageKey
}

/// One consumer's observation of one object, with the fingerprint of the last state it produced.
final class ObjectObserver<Model: Persistable> {
    private let observation: StoreObservation
    private let entry: ModelRegistry.Entry
    private let key: StorageKey
    private let signal = ChangeSignal()
    private var registration: ObserverRegistration?
    private var previous: Int?
    private let watched: WatchedProperties?

    init(observation: StoreObservation, entry: ModelRegistry.Entry, key: StorageKey, watched: WatchedProperties?) {
        self.observation = observation
        self.entry = entry
        self.key = key
        self.watched = watched
    }

    func next() async throws -> Model?? {
        if previous == nil {
            registration = observation.register(
                signal, forTypes: observation.watchedTypes(of: entry.plan))
        } else if await !wakeUp() {
            return nil
        }
        while true {
            let snapshot = observation.engine.snapshot()
            let current = try fingerprint(snapshot)
            if current != previous {
                previous = current
                let source = QuerySource(snapshot: snapshot, registry: observation.registry, entry: entry)
                return .some(try source.model(Model.self, key: key))
            }
            guard await wakeUp() else { return nil }
        }
    }

    /// Waits for a commit that may concern the object; `false` (and unregistered) once the task is
    /// cancelled or the store closed.
    private func wakeUp() async -> Bool {
        guard await signal.wait(), !observation.isClosed else {
            registration = nil
            return false
        }
        return true
    }

    /// A hash of the stored bytes of the object and of every object a read of it loads: those it
    /// links to and those its inverses list, at any depth; or, with watched properties, of
    /// whether it exists and of their values.
    private func fingerprint(_ snapshot: EngineSnapshot) throws -> Int {
        var hasher = Hasher()
        if let watched {
            guard try snapshot.contains(type: entry.plan.typeName, key: key) else { return 0 }
            let source = QuerySource(snapshot: snapshot, registry: observation.registry, entry: entry)
            hasher.combine(try watched.fingerprints(of: [key], in: source))
            return hasher.finalize()
        }
        let reader = RecordReader(snapshot: snapshot, schemas: observation.registry)
        var pending = [Reached(type: entry.plan.typeName, key: key)]
        var seen = Set<Reached>()
        while let next = pending.popLast() {
            guard seen.insert(next).inserted else { continue }
            let bytes = try snapshot.value(type: next.type, key: next.key)
            hasher.combine(next.type)
            hasher.combine(bytes)
            guard bytes != nil, let plan = observation.registry.plan(named: next.type) else { continue }
            if plan.hasLinks, let record = try reader.record(type: next.type, key: next.key) {
                try PrimaryKey.forEachLink(in: record) { pending.append(Reached(type: $0, key: $1)) }
            }
            // The objects a `LinkingObjects` property lists are read with the model, so a commit
            // that only adds, changes or deletes one of them changes what the observer reads.
            for inverse in plan.inverses {
                let source = inverse.sourcePlan.typeName
                for linking in try LinkingKeys.keys(
                    of: source, property: inverse.sourceProperty, linkingTo: next.key,
                    snapshot: snapshot, pending: nil, schemas: observation.registry) {
                    pending.append(Reached(type: source, key: linking))
                }
            }
        }
        return hasher.finalize()
    }
}
