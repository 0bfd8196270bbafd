/// Writes the entries a streamed commit adds to and removes from a secondary index as index runs
/// in an unnamed scratch file (`ScratchFile`; sealed for an encrypted store) once the index holds `bound` of them in memory, so
/// that checking and publishing a commit of a million objects holds at most about `bound`
/// entries of an index rather than one or more per object. Reads take those runs as any other,
/// newest first, their weights summed with the others'; the next checkpoint merges them into the
/// log (`Checkpoint.write`), as it can name no run elsewhere.
///
/// The log is not changed: a reopen replays or checkpoints the stream's pieces as before, so a
/// crash loses only the scratch file, which no one names.
struct StreamIndexSpill {
    /// Entries an index holds in memory before they are written as a run.
    let bound: Int
    /// Made at the first spill: most streamed commits never need one.
    private var scratch: (any LogStorage)?
    /// Whether the scratch file is sealed: the store's log is encrypted.
    private let sealed: Bool
    /// Where the scratch file's next run goes.
    private var end: UInt64 = 0

    /// A spill of at most `bound` entries per index. The scratch file of a log whose reads are
    /// authenticated (an encrypted one) is sealed, as a plain one would hold its values in the clear.
    init(bound: Int, log: any LogStorage) {
        self.bound = max(1, bound)
        sealed = log.authenticatesReads
    }

    /// Whether `index` holds `bound` or more entries in memory, `waiting` more about to join them.
    func isDue(_ index: SecondaryIndex, waiting: Int) -> Bool {
        index.added.count + index.removed.count + waiting >= bound
    }

    /// `index` with its memory entries written as a run in front of its others, merged with as
    /// many of its newest runs of this spill's file as a checkpoint would merge (size-tiered), so
    /// that an entry is rewritten a logarithmic number of times.
    ///
    /// - Throws: `StorageError` when no scratch file can be made or written.
    mutating func spill(_ index: SecondaryIndex) throws -> SecondaryIndex {
        if scratch == nil { scratch = ScratchFile.make(sealed: sealed) }
        guard let scratch else { throw StorageError(.io(operation: "make a scratch file", path: "the temporary directory", errno: 0)) }
        let own = index.runs.prefix { $0.log === scratch }.map(\.entryCount)
        let merged = Checkpoint.runsToMerge(newEntries: index.added.count + index.removed.count, runSizes: Array(own))
        let (run, written) = try Checkpoint.writeIndexRun(of: index, merging: merged, log: scratch, at: end, sequence: 1)
        end = written
        // What the merge read may be read again from the page cache, not held in the resident set.
        scratch.release(at: 0, count: Int(end))
        return index.replacingRuns(merged, with: run)
    }

    /// Calls `body` with each entry `index`'s runs in this spill's file add, net of their marks,
    /// in index order: the entries a commit added that are no longer in memory.
    func forEachAdded(in index: SecondaryIndex, _ body: (IndexEntry) throws -> Void) throws {
        guard let scratch else { return }
        let own = index.runs.prefix { $0.log === scratch }
        guard !own.isEmpty else { return }
        var merge = IndexMerge(try own.map { try IndexCursor(run: $0, after: .noEntry) }, forward: true)
        while let (entry, weight) = try merge.next() {
            if weight > 0 { try body(entry) }
        }
    }
}
