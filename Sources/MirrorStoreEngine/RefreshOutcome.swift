/// What `StorageEngine.refresh()` found: the commits a writer in another process made since
/// the reader's last refresh.
///
/// ```swift
/// let outcome = try reader.refresh()
/// if let types = outcome.writtenTypes, types.contains("Hero") { reloadHeroes() }
/// ```
public struct RefreshOutcome: Sendable, Equatable {
    /// The last commit's sequence number before the refresh.
    public var previousSequence: UInt64
    /// The last commit's sequence number now.
    public var sequence: UInt64
    /// The types the new commits wrote (put, delete or delete all); nil when the refresh opened
    /// the file anew (after a compaction or a rewrite), so that any type may differ.
    public var writtenTypes: Set<String>?
    /// Whether the refresh opened the store's path anew: the path names a new file (compaction
    /// renamed one over it), or the file was cut shorter than what the reader had read.
    public var reopened: Bool

    /// Whether snapshots now show commits they did not show before.
    public var hasNewCommits: Bool { sequence != previousSequence }

    /// Creates an outcome (for tests and tools that compose refreshes).
    public init(previousSequence: UInt64, sequence: UInt64, writtenTypes: Set<String>?, reopened: Bool) {
        self.previousSequence = previousSequence
        self.sequence = sequence
        self.writtenTypes = writtenTypes
        self.reopened = reopened
    }
}
