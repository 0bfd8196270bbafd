import MirrorStoreEngine

/// The newest query source of each model type, made once per state of the store rather than once
/// per query: making one (a snapshot, the type's stored values and indexes) and freeing it was a
/// tenth of an indexed lookup.
///
/// A source is reused while its snapshot shows the engine's current version. The store empties the cache
/// before it commits, compacts or closes: a snapshot still held when a commit applies its changes would
/// make the commit copy the type's key table instead of changing it in place. Owned by the store,
/// not by its observation, which every source refers to.
final class QuerySources: Sendable {
    private let engine: StorageEngine
    /// A list, not a dictionary: a store has a few types, and hashing the key cost more than
    /// comparing it with each.
    private let sources = Lock<[Cached]>([])

    private struct Cached {
        let type: ObjectIdentifier
        let source: QuerySource
    }

    init(engine: StorageEngine) {
        self.engine = engine
    }

    /// A source showing the newest state of `entry`'s type.
    func source(for entry: ModelRegistry.Entry, observation: StoreObservation) -> QuerySource {
        let type = ObjectIdentifier(entry.plan)
        let cached = sources.withLock { sources in sources.first { $0.type == type }?.source }
        if let cached, cached.version == engine.version { return cached }
        let source = observation.source(for: entry)
        sources.withLock { sources in
            sources.removeAll { $0.type == type }
            sources.append(Cached(type: type, source: source))
        }
        return source
    }

    /// Drops every source, so that no snapshot outlives the state it shows because of the cache.
    func removeAll() {
        sources.withLock { $0.removeAll(keepingCapacity: true) }
    }
}
