/// Builds the secondary indexes of a rewrite's new state (a migration's) as index runs, once
/// its units and key runs are written: each index's entries are gathered `bound` at a time from
/// the new objects, sorted and written as a run, and the runs merged `mergeWidth` at a time into
/// one, so the build holds a bounded number of entries and of runs open at once rather than one
/// or more per object, and the checkpoint after the rewrite lists the indexes as they are
/// (docs/FILE_FORMAT.md, "Rewrites").
struct RewriteIndexRuns {
    /// Entries gathered in memory before they are written as a run.
    let bound: Int
    let log: any LogStorage
    let sequence: UInt64

    /// The most runs one merge reads at once. A merge compares each entry with every run's
    /// current one, so merging all of a large index's runs at once would cost their number per
    /// entry; merged this many at a time, in tiers, an entry is written once more per tier.
    static let mergeWidth = 16

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
            // Runs by tier: a tier that reaches `mergeWidth` runs is merged into one of the next.
            var tiers: [[IndexRun]] = []
            var gathered: [IndexEntry] = []
            var count = 0
            func writeGathered() throws {
                held.indexEntries = max(held.indexEntries, gathered.count)
                gathered.sort(by: IndexEntry.precedes)
                var writer = IndexRunWriter(log: log, sequence: sequence, offset: position)
                for entry in gathered { try writer.append(entry, isLive: true) }
                gathered.removeAll(keepingCapacity: true)
                let written = try writer.finish()
                position = writer.offset
                guard let run = written else { return }
                var tier = 0
                var carried = run
                while true {
                    if tiers.count == tier { tiers.append([]) }
                    tiers[tier].append(carried)
                    guard tiers[tier].count >= Self.mergeWidth, let merged = try merge(tiers[tier], at: &position, held: &held) else { break }
                    tiers[tier] = []
                    carried = merged
                    tier += 1
                }
            }
            try snapshot.forEachEntry(type: definition.typeName) { object, value in
                for key in try SecondaryIndexes.keys(of: value, object: object, definition: definition) {
                    gathered.append(IndexEntry(key: key, object: object))
                    count += 1
                }
                if gathered.count >= bound { try writeGathered() }
            }
            try writeGathered()
            // The runs left, into one: the smallest merged first until one merge can take the
            // rest, so that few entries are written once more.
            var left = tiers.joined().sorted { $0.entryCount < $1.entryCount }
            while left.count > Self.mergeWidth {
                let taken = min(Self.mergeWidth, left.count - Self.mergeWidth + 1)
                let merged = try merge(Array(left.prefix(taken)), at: &position, held: &held)
                left = (Array(left.dropFirst(taken)) + (merged.map { [$0] } ?? [])).sorted { $0.entryCount < $1.entryCount }
            }
            let last = try merge(left, at: &position, held: &held)
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
        var merge = IndexMerge(try runs.map { try IndexCursor(run: $0, after: .noEntry) }, forward: true)
        var writer = IndexRunWriter(log: log, sequence: sequence, offset: position)
        while let (entry, _) = try merge.next() { try writer.append(entry, isLive: true) }
        let run = try writer.finish()
        position = writer.offset
        for replaced in runs { replaced.blocks.release() }
        return run
    }
}
