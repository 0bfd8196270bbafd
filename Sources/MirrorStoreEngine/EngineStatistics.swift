/// Sizes and counts of an open store, for monitoring and for an inspector.
///
/// ```swift
/// let stats = engine.statistics
/// print("\(stats.deadBytes) of \(stats.fileSize) bytes are reclaimable")
/// ```
public struct EngineStatistics: Sendable, Equatable {
    /// The file format version of the log.
    public var formatVersion: UInt32
    /// The log's size in bytes (memory used by the log, for an in-memory engine).
    public var fileSize: UInt64
    /// Bytes the live objects, schemas, metadata, and the persisted key runs and checkpoint in
    /// force need in the log.
    public var liveBytes: UInt64
    /// Bytes that compaction would reclaim: superseded values, tombstones and framing.
    public var deadBytes: UInt64
    /// Objects per type name.
    public var objectCounts: [String: Int]
    /// The sequence number of the last acknowledged commit.
    public var lastSequence: UInt64
    /// Syncs that made commits durable since the engine was opened. Below the number of commits
    /// when writers committing at once shared syncs (group commit); 0 with `.none` durability.
    public var commitSyncs: Int
    /// Compactions completed since the engine was opened.
    public var compactions: Int
    /// Why the last automatic compaction failed, if it did (the commit that triggered it still succeeded).
    public var lastAutoCompactionError: StorageError?
    /// Checkpoints written since the engine was opened, by commits and compactions.
    public var checkpoints: Int = 0
    /// The persisted key runs in force, over every type: what opening reads instead of the log.
    public var persistedRuns: Int = 0
    /// The persisted runs of secondary indexes the checkpoint in force lists, over every index.
    public var persistedIndexRuns: Int = 0
    /// Where the tail that opening replays starts (the end of the newest checkpoint), or nil
    /// when the store has no checkpoint and opening replays the whole log.
    public var checkpointEnd: UInt64?
    /// Why the last checkpoint failed, if it did (the commits before it still stand).
    public var lastCheckpointError: StorageError?
}
