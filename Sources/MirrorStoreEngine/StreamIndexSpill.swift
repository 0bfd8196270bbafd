/// Writes the entries a streamed commit adds to and removes from a secondary index as index runs
/// in an unnamed scratch file (`ScratchFile`; sealed for an encrypted store) once the index holds
/// `bound` of them, or `byteBound` bytes, in memory (`PendingIndexEntries`), and at the end of the
/// commit, so that checking and publishing a commit of a million objects holds at most about that
/// many entries of an index rather than one or more per object. Reads take those runs as any other,
/// newest first, their weights summed with the others'; the next checkpoint merges them into the
/// log (`Checkpoint.write`), as it can name no run elsewhere.
///
/// The log is not changed: a reopen replays or checkpoints the stream's pieces as before, so a
/// crash loses only the scratch file, which no one names.
struct StreamIndexSpill {
    /// Entries, and bytes of them, an index holds in memory before they are written as a run.
    let bound: Int
    let byteBound: Int
    /// Made at the first spill: most streamed commits never need one.
    private var scratch: (any LogStorage)?
    /// Whether the scratch file is sealed: the store's log is encrypted.
    private let sealed: Bool
    /// Where the scratch file's next run goes.
    private var end: UInt64 = 0

    /// Bytes of memory an index's encoded entries (`PendingIndexEntries`, as allocated) take
    /// before they go to a run: a commit of about 80,000 customers' e-mails (about 40 bytes an
    /// entry) writes one run an index (checked for duplicates as it is written) and merges nothing.
    static let bytesInMemory = 4 << 20

    /// A spill of at most `bound` entries, and `byteBound` bytes of them, per index. The scratch
    /// file of a log whose reads are authenticated (an encrypted one) is sealed, as a plain one
    /// would hold its values in the clear.
    init(bound: Int, byteBound: Int = bytesInMemory, log: any LogStorage) {
        self.bound = max(1, bound)
        self.byteBound = max(1, byteBound)
        sealed = log.authenticatesReads
    }

    /// Whether `pending` holds `bound` entries, or takes `byteBound` bytes of memory (its
    /// buffers as allocated), or more.
    func isDue(_ pending: PendingIndexEntries) -> Bool {
        pending.count >= bound || pending.heldBytes >= byteBound
    }

    /// `index` with `pending` and its changes in memory written as a run in front of its others
    /// (and, once this spill's file holds several runs of it, merged with as many of its newest
    /// as a checkpoint would merge: size-tiered, so that an entry is rewritten a logarithmic
    /// number of times), with the first key two live entries of that run share when
    /// `checkingUnique`.
    ///
    /// - Throws: `StorageError` when no scratch file can be made or written.
    mutating func spill(
        _ pending: PendingIndexEntries, onto index: SecondaryIndex, checkingUnique: Bool
    ) throws -> (index: SecondaryIndex, duplicate: IndexKey?) {
        if scratch == nil { scratch = ScratchFile.make(sealed: sealed) }
        guard let scratch else { throw StorageError(.io(operation: "make a scratch file", path: "the temporary directory", errno: 0)) }
        var pending = pending
        try index.forEachChange { entry, isLive in try pending.append(entry, isLive: isLive) }
        var writer = IndexRunWriter(log: scratch, sequence: 1, offset: end, unitTarget: RunUnitWriter.scratchUnitTarget)
        let written = try pending.write(into: &writer, checkingUnique: checkingUnique)
        let run = try writer.finish()
        end = writer.offset
        var spilled = index.absorbingChanges(into: run, net: written.net - (index.added.count - index.removed.count))
        let own = spilled.runs.prefix { $0.log === scratch }.map(\.entryCount)
        if own.count > 1 {
            let merged = 1 + Checkpoint.runsToMerge(newEntries: own[0], runSizes: Array(own.dropFirst()))
            if merged > 1 {
                let (run, written) = try Checkpoint.writeIndexRun(
                    of: spilled, merging: merged, keepingMarks: true, log: scratch, at: end, sequence: 1, unitTarget: RunUnitWriter.scratchUnitTarget)
                end = written
                spilled = spilled.replacingRuns(merged, with: run)
            }
        }
        // What the merge read may be read again from the page cache, not held in the resident set.
        scratch.release(at: 0, count: Int(end))
        return (spilled, written.duplicate)
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
