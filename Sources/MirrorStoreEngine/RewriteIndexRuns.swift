/// Builds the secondary indexes of a rewrite's new state (a migration's) as index runs, once
/// its units and key runs are written: each index's entries are gathered `bound` at a time from
/// the new objects, sorted and written as a run, and the runs merged into one at the end, so the
/// build holds a bounded number of entries rather than one or more per object, and the
/// checkpoint after the rewrite lists the indexes as they are (docs/FILE_FORMAT.md, "Rewrites").
struct RewriteIndexRuns {
    /// Entries gathered in memory before they are written as a run.
    let bound: Int
    let log: any LogStorage
    let sequence: UInt64

    /// Each index of `definitions` whose type's key table `index` holds in runs (the types a
    /// rewrite streamed; any other is left to be built in memory), written from `offset`. Returns
    /// them and where what was written ends.
    ///
    /// - Throws: `StorageError` `.uniqueConstraint` when a unique index holds a key twice, or
    ///   `.unindexable` when an object's keys cannot be computed.
    func build(_ definitions: [IndexDefinition], for index: KeyIndex, at offset: UInt64) throws -> (SecondaryIndexes, end: UInt64) {
        var built = SecondaryIndexes()
        var position = offset
        let snapshot = EngineSnapshot(index: index, generation: log, sequence: sequence)
        for definition in definitions.sorted(by: { $0.name < $1.name }) where index.types[definition.typeName]?.runs.isEmpty == false {
            var runs: [IndexRun] = []
            var gathered: [IndexEntry] = []
            var count = 0
            func writeGathered() throws {
                gathered.sort(by: IndexEntry.precedes)
                var writer = IndexRunWriter(log: log, sequence: sequence, offset: position)
                for entry in gathered { try writer.append(entry, isLive: true) }
                if let run = try writer.finish() { runs.append(run) }
                position = writer.offset
                gathered.removeAll(keepingCapacity: true)
            }
            try snapshot.forEachEntry(type: definition.typeName) { object, value in
                for key in try SecondaryIndexes.keys(of: value, object: object, definition: definition) {
                    gathered.append(IndexEntry(key: key, object: object))
                    count += 1
                }
                if gathered.count >= bound { try writeGathered() }
            }
            try writeGathered()
            let merged = SecondaryIndex(runs: try merge(runs, at: &position), count: count)
            if definition.isUnique, let duplicate = try merged.firstDuplicate() {
                throw StorageError(.uniqueConstraint(index: definition.name, value: duplicate.description))
            }
            built.define(definition, as: merged)
        }
        return (built, position)
    }

    /// `runs` as one run written at `position` (each object's entries lie in one run only, so
    /// every entry comes once), or as they are when there are fewer than two.
    private func merge(_ runs: [IndexRun], at position: inout UInt64) throws -> [IndexRun] {
        guard runs.count > 1 else { return runs }
        var merge = IndexMerge(try runs.map { try IndexCursor(run: $0, after: .noEntry) }, forward: true)
        var writer = IndexRunWriter(log: log, sequence: sequence, offset: position)
        while let (entry, _) = try merge.next() { try writer.append(entry, isLive: true) }
        let run = try writer.finish()
        position = writer.offset
        return run.map { [$0] } ?? []
    }
}
