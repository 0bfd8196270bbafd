/// Writes a checkpoint: each type's in-memory entries as a new persisted key run (or, when a
/// type has too many runs or the new one would be large beside them, all of them merged into
/// one), then the checkpoint unit that lists every live run. The caller syncs and then points a
/// header slot at it (docs/FILE_FORMAT.md, "Checkpoints"). Until the slot is written nothing
/// reads what this appends, and a crash in between leaves the previous checkpoint in force.
enum Checkpoint {
    /// Runs a type keeps at most: a lookup reads at most this many.
    static let maximumRuns = 6

    /// How many of `runs` (newest first) the new entries merge with: every run up to the first
    /// that is more than twice as large as what is merged so far (size-tiered, so each entry is
    /// rewritten a logarithmic number of times, never once per checkpoint), and all of them when
    /// the type would otherwise keep more than `maximumRuns`.
    static func runsToMerge(newEntries: Int, runs: [KeyRun]) -> Int {
        var merged = newEntries
        var taken = 0
        while taken < runs.count, runs[taken].entryCount <= 2 * merged {
            merged += runs[taken].entryCount
            taken += 1
        }
        return runs.count - taken + 1 > maximumRuns ? runs.count : taken
    }

    struct Written {
        /// The same state with every object in runs and nothing in memory.
        var index: KeyIndex
        var slot: CheckpointSlot
        /// Where the checkpoint unit ends: the next commit goes here.
        var end: UInt64
    }

    /// Appends the runs and the checkpoint unit numbered `number` at `offset` of `log`.
    static func write(
        index: KeyIndex, types: TypeTable, log: any LogStorage, at offset: UInt64, sequence: UInt64, number: UInt64
    ) throws -> Written {
        var next = index
        // Everything before `offset` is covered from now on: reads check it against these.
        next.regions = try CoveredRegions.extending(index.regions, start: LogHeader().unitsStart, end: offset, log: log)
        var position = offset
        for (name, objects) in index.types.sorted(by: { $0.key < $1.key }) where objects.memoryCount > 0 {
            var writer = KeyRunWriter(log: log, sequence: sequence, offset: position)
            let merged = runsToMerge(newEntries: objects.memoryCount, runs: objects.runs)
            // Deletion marks are kept while an older run may hold what they hide.
            let keepsMarks = merged < objects.runs.count
            try RunMerge.forEachNewest(
                [RunMerge.Cursor(entries: objects.sortedMemoryEntries())] + objects.runs.prefix(merged).map(RunMerge.Cursor.init)
            ) { key, packed in
                if packed != 0 || keepsMarks { try writer.append(key, packed: packed) }
            }
            next.types[name] = objects.replacingRuns(merged, with: try writer.finish())
            position = writer.offset
        }
        let payload = try IndexUnit.encodeCheckpoint(
            next, types: types, number: number, sequence: sequence, coveredEnd: offset, path: log.path)
        let frame = LogFrame.encode(sequence: sequence, payload: payload, isIndex: true)
        guard frame.count <= LogFrame.headerSize + LogFrame.maximumPayload else {
            throw StorageError(.batchTooLarge(size: payload.count, limit: LogFrame.maximumPayload))
        }
        try log.write(frame, at: position)
        let slot = CheckpointSlot(number: number, unitOffset: position, unitLength: UInt32(frame.count), sequence: sequence)
        return Written(index: next, slot: slot, end: position + UInt64(frame.count))
    }
}
