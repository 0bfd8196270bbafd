/// Builds the secondary indexes of a rewrite's new state (a migration's) as index runs, once
/// its units and key runs are written: each index's entries are gathered `bound` at a time from
/// the new objects, sorted and written as a run, and the runs merged into one, at most
/// `mergeWidth` at a time, so the build holds a bounded number of entries and of runs open at
/// once rather than one or more per object, and the checkpoint after the rewrite lists the
/// indexes as they are (docs/FILE_FORMAT.md, "Rewrites").
struct RewriteIndexRuns {
    /// Entries gathered in memory before they are written as a run.
    let bound: Int
    let log: any LogStorage
    let sequence: UInt64

    /// The most runs one merge reads at once (`IndexRunTournament`, about log2 of them in
    /// comparisons per entry). Runs are merged only once all are written, the smallest first and
    /// only as many as leave this many for the last merge: every entry is written once as a run
    /// and once merged up to `bound` × `mergeWidth` entries (8 Mi at the default bound), and
    /// only the entries of the runs merged early are written once more up to `mergeWidth` times
    /// that. Merging in tiers as runs came wrote every entry once more per tier, which made the
    /// cost per object grow with the store.
    static let mergeWidth = 128

    /// Each index of `definitions` whose type's key table `index` holds in runs (the types a
    /// rewrite streamed; any other is left to be built in memory), written from `offset`. Returns
    /// them and where what was written ends.
    ///
    /// - Throws: `StorageError` `.uniqueConstraint` when a unique index holds a key twice, or
    ///   `.unindexable` when an object's keys cannot be computed.
    func build(
        _ definitions: [IndexDefinition], for index: KeyIndex, at offset: UInt64, held: inout Compaction.Held
    ) throws -> (SecondaryIndexes, end: UInt64) {
        var built = SecondaryIndexes()
        var position = offset
        let snapshot = EngineSnapshot(index: index, generation: log, sequence: sequence)
        for definition in definitions.sorted(by: { $0.name < $1.name }) where index.types[definition.typeName]?.runs.isEmpty == false {
            var runs: [IndexRun] = []
            var gathered: [IndexEntry] = []
            var count = 0
            func writeGathered() throws {
                held.indexEntries = max(held.indexEntries, gathered.count)
                var writer = IndexRunWriter(log: log, sequence: sequence, offset: position)
                for entry in IndexEntry.sortedInIndexOrder(gathered) { try writer.append(entry, isLive: true) }
                gathered.removeAll(keepingCapacity: true)
                if let run = try writer.finish() { runs.append(run) }
                position = writer.offset
            }
            try snapshot.forEachEntry(type: definition.typeName) { object, value in
                for key in try SecondaryIndexes.keys(of: value, object: object, definition: definition) {
                    gathered.append(IndexEntry(key: key, object: object))
                    count += 1
                }
                if gathered.count >= bound { try writeGathered() }
            }
            try writeGathered()
            // The smallest merged first, only as many as leave `mergeWidth` runs for the last
            // merge, so that few entries are written once more.
            var left = runs.sorted { $0.entryCount < $1.entryCount }
            runs = []
            while left.count > Self.mergeWidth {
                let taken = min(Self.mergeWidth, left.count - Self.mergeWidth + 1)
                let merged = try merge(Array(left.prefix(taken)), at: &position, held: &held)
                left = (Array(left.dropFirst(taken)) + (merged.map { [$0] } ?? [])).sorted { $0.entryCount < $1.entryCount }
            }
            let last = try merge(left, at: &position, held: &held)
            held.builtIndexEntries += count
            let merged = SecondaryIndex(runs: last.map { [$0] } ?? [], count: count)
            if definition.isUnique, let duplicate = try merged.firstDuplicate() {
                throw StorageError(.uniqueConstraint(index: definition.name, value: duplicate.description))
            }
            built.define(definition, as: merged)
        }
        return (built, position)
    }

    /// `runs` (at most `mergeWidth`) as one run written at `position` (each
    /// object's entries lie in one run only, so every entry comes once), or the one run given.
    private func merge(_ runs: [IndexRun], at position: inout UInt64, held: inout Compaction.Held) throws -> IndexRun? {
        guard runs.count > 1 else { return runs.first }
        held.mergedRuns = max(held.mergedRuns, runs.count)
        // Read with `pread`: through the mapping, the pages of every run merged stayed in the
        // resident set until the runs were released (a fifth of the file at 1,000,000 objects).
        var merge = try IndexRunTournament(runs.map { $0.readingOnce() })
        var writer = IndexRunWriter(log: log, sequence: sequence, offset: position)
        while let entry = try merge.next() { try writer.append(entry, isLive: true) }
        let run = try writer.finish()
        position = writer.offset
        held.mergedIndexEntries += run?.entryCount ?? 0
        for replaced in runs { replaced.blocks.release() }
        return run
    }
}
