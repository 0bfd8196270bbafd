/// Writes the keys a streamed commit's publication applies to the key table as key runs in an
/// unnamed scratch file (`ScratchFile`, `RewriteKeyRuns`; sealed for an encrypted store) once a type holds `bound` keys in
/// memory, so that publishing a commit of a million objects holds at most `bound` keys of a type
/// rather than one per object. Lookups read those runs like any other, newest first; the next
/// checkpoint merges them into the log (`Checkpoint.write`), as it can name no run elsewhere.
///
/// The log is not changed: it holds the stream's pieces and its commit unit as before, and a
/// reopen replays or checkpoints them as before, so a crash loses only the scratch file, which
/// no one names.
struct StreamSpill {
    private var runs: RewriteKeyRuns
    private let scratch: any LogStorage
    /// Where the scratch file's next run goes.
    private var end: UInt64 = 0

    /// A spill of at most `bound` keys per type, or nil where the keys stay in memory: no
    /// scratch file to be had. The scratch file of a log whose reads are authenticated (an
    /// encrypted one) is sealed, as a plain one would hold its keys in the clear.
    init?(bound: Int, log: any LogStorage) {
        guard let scratch = ScratchFile.make(sealed: log.authenticatesReads) else { return nil }
        self.scratch = scratch
        runs = RewriteKeyRuns(bound: bound, log: scratch, sequence: 1, valuesInLog: false)
    }

    /// Writes the memory entries of each type of `index` that holds `bound` or more as a run.
    /// On a failure (the scratch file's disk full) `index` still holds every key, some perhaps
    /// in runs already written: the caller stops spilling, as a next run could overwrite those.
    mutating func spill(_ index: inout KeyIndex) throws {
        end = try runs.spill(&index, at: end)
        // The pages the merge and the lookups read come back from the page cache if read again:
        // not held in the resident set until the checkpoint.
        scratch.release(at: 0, count: Int(end))
    }
}
