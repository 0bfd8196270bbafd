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
    static func runsToMerge(newEntries: Int, runSizes: [Int]) -> Int {
        var merged = newEntries
        var taken = 0
        while taken < runSizes.count, runSizes[taken] <= 2 * merged {
            merged += runSizes[taken]
            taken += 1
        }
        return runSizes.count - taken + 1 > maximumRuns ? runSizes.count : taken
    }

    struct Written {
        /// The same state with every object in runs and nothing in memory.
        var index: KeyIndex
        /// The same secondary indexes, likewise.
        var secondary: SecondaryIndexes
        var slot: CheckpointSlot
        /// Where the checkpoint unit ends: the next commit goes here.
        var end: UInt64
    }

    /// Appends the runs and the checkpoint unit numbered `number` at `offset` of `log`, a file of
    /// format `format`, whose writers pack the key runs' integer blocks from format 3 on
    /// (``LogHeader/packsEncodings(_:)``), walk their locations from format 4 on
    /// (``LogHeader/walksLocations(_:)``) unless the log is encrypted (a walk would decrypt pages),
    /// and pack byte-string keys of one length from format 6 on (``LogHeader/packsByteKeys(_:)``).
    static func write(
        index: KeyIndex, secondary: SecondaryIndexes, types: TypeTable, log: any LogStorage, at offset: UInt64, sequence: UInt64,
        number: UInt64, format: UInt32
    ) throws -> Written {
        var next = index
        // Everything before `offset` is covered from now on: reads check it against these.
        next.regions = try CoveredRegions.extending(index.regions, start: LogHeader().unitsStart, end: offset, log: log)
        var position = offset
        for (name, objects) in index.types.sorted(by: { $0.key < $1.key }) {
            // The runs a streamed commit wrote to a scratch file (`StreamSpill`) lead the type's
            // runs; the checkpoint can name no run outside the log, so they are always merged.
            let elsewhere = objects.runs.prefix { $0.blocks.log !== log }
            guard objects.memoryCount > 0 || !elsewhere.isEmpty else { continue }
            var writer = KeyRunWriter(
                log: log, sequence: sequence, offset: position, packsIntegers: LogHeader.packsEncodings(format),
                walksLocations: LogHeader.walksLocations(format) && !log.authenticatesReads, regions: next.regions,
                packsBytes: LogHeader.packsByteKeys(format))
            let merged = elsewhere.count + runsToMerge(
                newEntries: elsewhere.reduce(objects.memoryCount) { $0 + $1.entryCount },
                runSizes: objects.runs.dropFirst(elsewhere.count).map(\.entryCount))
            next.types[name] = try writeKeyRun(of: objects, memory: objects.sortedMemoryEntries(), merging: merged, with: &writer)
            position = writer.offset
        }
        var nextSecondary = secondary
        var persisted: [String: PersistedIndex] = [:]
        // An index no one defined since open stays valid while its type's objects have not
        // changed; otherwise its runs no longer match the type's key runs and it is dropped.
        for (name, kept) in index.persistedIndexes where secondary.definitions[name] == nil {
            let objects = next.types[kept.typeName]
            if (index.types[kept.typeName]?.memoryCount ?? 0) == 0, kept.basis == PersistedIndex.basis(of: objects) {
                persisted[name] = kept
            }
        }
        for (name, definition) in secondary.definitions.sorted(by: { $0.key < $1.key }) {
            guard var current = secondary.indexes[name] else { continue }
            if current.hasChanges || current.runs.contains(where: { $0.log !== log }) {
                let merged = runsToMerge(current, into: log)
                let (run, end) = try writeIndexRun(of: current, merging: merged, log: log, at: position, sequence: sequence)
                current = current.replacingRuns(merged, with: run)
                nextSecondary.replace(name, with: current)
                position = end
            }
            let objects = next.types[definition.typeName]
            persisted[name] = PersistedIndex(
                typeName: definition.typeName, isUnique: definition.isUnique, fingerprint: definition.fingerprint,
                schemaCheck: PersistedIndex.schemaCheck(objects?.schema), count: current.count, runs: current.runs,
                basis: PersistedIndex.basis(of: objects))
        }
        next.persistedIndexes = persisted
        let payload = try IndexUnit.encodeCheckpoint(
            next, types: types, number: number, sequence: sequence, coveredEnd: offset, path: log.path)
        let frame = LogFrame.encode(sequence: sequence, payload: payload, isIndex: true)
        guard frame.count <= LogFrame.headerSize + LogFrame.maximumPayload else {
            throw StorageError(.batchTooLarge(size: payload.count, limit: LogFrame.maximumPayload))
        }
        try log.write(frame, at: position)
        let slot = CheckpointSlot(number: number, unitOffset: position, unitLength: UInt32(frame.count), sequence: sequence)
        return Written(index: next, secondary: nextSecondary, slot: slot, end: position + UInt64(frame.count))
    }

    /// Writes `objects`' memory entries (`memory`, sorted) and its `merged` newest runs as one run
    /// with `writer`, the newest source deciding each key, and returns the same objects with that
    /// run in their place.
    static func writeKeyRun(
        of objects: TypeIndex, memory: SortedMemoryEntries, merging merged: Int, with writer: inout KeyRunWriter
    ) throws -> TypeIndex {
        // Deletion marks are kept while an older run may hold what they hide.
        let keepsMarks = merged < objects.runs.count
        let runs = Array(objects.runs.prefix(merged))
        if let reused = try reusable(runs, before: memory, keepingMarks: keepsMarks, in: writer.log) {
            writer.reuse(reused.runs, lastKey: reused.lastKey)
            for (key, packed) in memory where packed != 0 || keepsMarks {
                try writer.append(key, packed: packed)
            }
            return objects.replacingRuns(merged, with: try writer.finish())
        }
        try RunMerge.forEachNewest(
            [RunMerge.Cursor(entries: memory)] + runs.map(RunMerge.Cursor.init)
        ) { key, packed in
            if packed != 0 || keepsMarks { try writer.append(key, packed: packed) }
        }
        let replaced = objects.replacingRuns(merged, with: try writer.finish())
        for run in runs { run.blocks.release() }
        return replaced
    }

    /// `runs` (newest first) oldest first, with the last key of the last, when a merge of them
    /// with `memory` can list their blocks as they lie instead of writing them again (LevelDB's
    /// trivial move): all lie in `log`, no two overlap, each one's keys and blocks come after the
    /// older one's, and every key of `memory` after them all, as when keys count up (an
    /// auto-incremented key, a bulk load in key order). A merge that drops the deletion marks
    /// (`keepingMarks` false) takes only runs that hold none. Nil when any of that fails: the
    /// merge then writes every entry.
    static func reusable(
        _ runs: [KeyRun], before memory: SortedMemoryEntries, keepingMarks: Bool, in log: any LogStorage
    ) throws -> (runs: [KeyRun], lastKey: StorageKey)? {
        var iterator = memory.makeIterator()
        guard !runs.isEmpty, let firstNew = iterator.next()?.key else { return nil }
        let ordered = Array(runs.reversed())
        var lastKey: StorageKey?
        var lastOffset: UInt64?
        for run in ordered {
            guard run.log === log, let first = run.blockOffsets.first, let last = run.blockOffsets.last, first <= last else { return nil }
            if let lastOffset, first <= lastOffset { return nil }
            if let lastKey, !StorageKey.precedes(lastKey, run.fences.key(0)) { return nil }
            lastKey = try run.lastKey()
            lastOffset = last
        }
        guard let lastKey, StorageKey.precedes(lastKey, firstNew) else { return nil }
        // Last, as it may read every block: only once nothing else stands in the way.
        if !keepingMarks {
            for run in ordered where try run.holdsDeletions() { return nil }
        }
        return (ordered, lastKey)
    }

    /// How many of `index`'s newest runs a checkpoint into `log` merges with its changes: the
    /// runs a streamed commit wrote to a scratch file (`StreamIndexSpill`), which lead, since no
    /// checkpoint can name a run outside the log, then as many as `runsToMerge` says; all of them
    /// when another run lies in another log (as after a compaction).
    static func runsToMerge(_ index: SecondaryIndex, into log: any LogStorage) -> Int {
        let elsewhere = index.runs.prefix { $0.log !== log }
        let rest = index.runs.dropFirst(elsewhere.count)
        guard !rest.contains(where: { $0.log !== log }) else { return index.runs.count }
        let newEntries = elsewhere.reduce(index.added.count + index.removed.count) { $0 + $1.entryCount }
        return elsewhere.count + runsToMerge(newEntries: newEntries, runSizes: rest.map(\.entryCount))
    }

    /// Writes `index`'s changes and its `merged` newest runs as one run at `offset` of `log`:
    /// each entry with the sum of its weights over those sources, which keeps every entry's sum
    /// over all sources at 0 or 1. A merge of every run drops the marks, as nothing older is left.
    /// With `keepingMarks`, marks are kept even so (runs of a scratch file, whose marks may
    /// hide entries of the runs and memory that do not take part); units gather `unitTarget`
    /// bytes.
    static func writeIndexRun(
        of index: SecondaryIndex, merging merged: Int, keepingMarks: Bool = false, log: any LogStorage, at offset: UInt64, sequence: UInt64,
        unitTarget: Int = RunUnitWriter.unitTarget
    ) throws -> (run: IndexRun?, end: UInt64) {
        let runs = index.runs
        let isBottom = merged == runs.count && !keepingMarks
        // One run and no changes (a streamed commit's run of a scratch file, as a bulk load
        // leaves it): its blocks are the merge's, copied as they lie, unless marks must go.
        if merged == 1, let run = runs.first, !index.hasChanges, !isBottom || run.hasNoMarks {
            var units = RunUnitWriter(log: log, sequence: sequence, offset: offset, kind: .indexRun, unitTarget: unitTarget)
            var blockOffsets: [UInt64] = []
            blockOffsets.reserveCapacity(run.blocks.count)
            for block in 0..<run.blocks.count {
                run.blocks.prefetch(forPassAt: block)
                blockOffsets.append(try units.appendSealed(try run.blocks.withBlock(block) { $0.sealedBytes }))
            }
            try units.flush()
            run.blocks.release()
            let copied = IndexRun(
                blockOffsets: blockOffsets, fences: run.fences, liveCounts: run.liveCounts, markCounts: run.markCounts,
                byteCount: units.bytesWritten, log: log, end: units.offset)
            return (copied, units.offset)
        }
        var cursors = try runs.prefix(merged).map { try IndexCursor(run: $0, after: .noEntry) }
        cursors.append(IndexCursor(memory: index.added, weight: 1, after: .noEntry))
        cursors.append(IndexCursor(memory: index.removed, weight: -1, after: .noEntry))
        var merge = IndexMerge(cursors, forward: true)
        var writer = IndexRunWriter(log: log, sequence: sequence, offset: offset, unitTarget: unitTarget)
        while let (entry, weight) = try merge.next() {
            guard weight >= -1, weight <= 1, !(isBottom && weight < 0) else {
                throw StorageError(.corrupted(path: log.path, offset: offset, reason: "a secondary index's runs and changes count entry \(entry.key) of \(entry.object) \(weight) times"))
            }
            if weight != 0 { try writer.append(entry, isLive: weight > 0) }
        }
        let run = try writer.finish()
        for replaced in runs.prefix(merged) { replaced.blocks.release() }
        return (run, writer.offset)
    }
}
