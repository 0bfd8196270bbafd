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
        /// The model type's identity, which a query knows before it asks the registry anything.
        let model: ObjectIdentifier
        let source: QuerySource
    }

    init(engine: StorageEngine) {
        self.engine = engine
    }

    /// A source showing the newest state of `model`'s type, whose registry entry `entry` gives.
    /// The entry is asked for only when no current source is kept: looking it up and copying it
    /// cost as much as the rest of finding a kept source.
    func source(
        of model: ObjectIdentifier, entry: () throws(StoreError) -> ModelRegistry.Entry, observation: StoreObservation
    ) throws(StoreError) -> QuerySource {
        let cached = sources.withLock { sources in sources.first { $0.model == model }?.source }
        if let cached, cached.version == engine.version { return cached }
        let source = observation.source(for: try entry())
        sources.withLock { sources in
            sources.removeAll { $0.model == model }
            sources.append(Cached(model: model, source: source))
        }
        return source
    }

    /// Drops every source, so that no snapshot outlives the state it shows because of the cache.
    func removeAll() {
        sources.withLock { $0.removeAll(keepingCapacity: true) }
    }
}
