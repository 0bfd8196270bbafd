/// Writes the key table of a rewrite (a compaction, a migration) or of a replay
/// (`verifyStoreFile`'s) as persisted key runs while it goes, so that it holds at most `bound`
/// keys per type in memory rather than every key.
///
/// Once a type holds `bound` keys in memory they are sorted and written: appended to the type's
/// newest run when they all follow its last key (keys that arrive in key order, the common case,
/// make one run and rewrite nothing), else as a new run merged size-tiered with the newest ones,
/// as a checkpoint does. A key put again is looked up in the runs like any commit's, so the
/// newest run decides and counts stay exact. At the end each type's runs are merged into one
/// (docs/FILE_FORMAT.md, "Rewrites").
struct RewriteKeyRuns {
    /// Keys a type holds in memory before they are written as a run.
    let bound: Int
    private let log: any LogStorage
    private let sequence: UInt64
    /// Whether runs may be walked blocks, which read locations from the value lengths of the log
    /// they lie in: only where the values are in that log too.
    private let walksLocations: Bool
    /// Per type, the writer of its newest run, which keys following its last one extend, and
    /// the run it last gave: a type whose runs no longer start with it (a replay's `deleteAll`
    /// dropped them) is not extended.
    private var newest: [String: KeyRunWriter] = [:]
    private var newestRun: [String: KeyRun] = [:]

    /// Writes runs into `log`; `valuesInLog` says whether the locations keyed lie in it (a
    /// rewrite's) or in another file (a replay's runs in a scratch file locate the store's values).
    init(bound: Int, log: any LogStorage, sequence: UInt64, valuesInLog: Bool = true) {
        self.bound = max(1, bound)
        self.log = log
        self.sequence = sequence
        walksLocations = valuesInLog && !log.authenticatesReads
    }

    /// Writes at `offset` the keys of each type of `index` that holds `bound` or more in memory,
    /// and returns where what it wrote ends.
    mutating func spill(_ index: inout KeyIndex, at offset: UInt64) throws -> UInt64 {
        var position = offset
        for (name, objects) in index.types.sorted(by: { $0.key < $1.key }) where objects.memoryCount >= bound {
            position = try write(name, objects, into: &index, at: position)
        }
        return position
    }

    /// Writes at `offset` the keys left in memory of each type that has runs, then merges each
    /// type's runs into one, and returns where what it wrote ends. A type that never reached the
    /// bound keeps its keys in memory, for the checkpoint after the rewrite.
    mutating func finish(_ index: inout KeyIndex, at offset: UInt64) throws -> UInt64 {
        var position = offset
        for name in index.types.keys.sorted() {
            guard let objects = index.types[name], !objects.runs.isEmpty else { continue }
            if objects.memoryCount > 0 { position = try write(name, objects, into: &index, at: position) }
            if let objects = index.types[name], objects.runs.count > 1 {
                position = try merge(name, objects, memory: objects.sortedMemoryEntries(), runs: objects.runs.count, into: &index, at: position)
            }
        }
        return position
    }

    private mutating func write(_ name: String, _ objects: TypeIndex, into index: inout KeyIndex, at offset: UInt64) throws -> UInt64 {
        let memory = objects.sortedMemoryEntries()
        var first = memory.makeIterator()
        guard var writer = newest.removeValue(forKey: name), let run = newestRun.removeValue(forKey: name), objects.runs.first === run,
              let last = writer.lastKey, let next = first.next(), StorageKey.precedes(last, next.key) else {
            // Only runs of this log are merged: a streamed commit's spill (`StreamSpill`) leaves the
            // store's own runs below its scratch runs to the next checkpoint.
            let own = objects.runs.prefix { $0.blocks.log === log }.map(\.entryCount)
            let merged = Checkpoint.runsToMerge(newEntries: objects.memoryCount, runSizes: Array(own))
            return try merge(name, objects, memory: memory, runs: merged, into: &index, at: offset)
        }
        // Every key in memory follows the newest run's: they extend it, and nothing is rewritten.
        try writer.resume(at: offset)
        for (key, packed) in memory { try writer.append(key, packed: packed) }
        let extended = try writer.finish()
        index.types[name] = objects.replacingRuns(1, with: extended)
        newest[name] = writer
        newestRun[name] = extended
        return writer.offset
    }

    private mutating func merge(
        _ name: String, _ objects: TypeIndex, memory: SortedMemoryEntries, runs: Int, into index: inout KeyIndex, at offset: UInt64
    ) throws -> UInt64 {
        // A rewrite's file is always of the current format.
        var writer = KeyRunWriter(log: log, sequence: sequence, offset: offset, packsIntegers: true, walksLocations: walksLocations, packsBytes: true)
        index.types[name] = try Checkpoint.writeKeyRun(of: objects, memory: memory, merging: runs, with: &writer)
        // Only a writer that wrote the type's newest run may extend it.
        newest[name] = writer.lastKey == nil ? nil : writer
        newestRun[name] = writer.lastKey == nil ? nil : index.types[name]?.runs.first
        return writer.offset
    }
}
