import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// An index whose one run holds no marks, with entries added and removed since (the state
/// between two checkpoints), is read by the run's own walk with the memory's entries merged in
/// (`SecondaryIndex.forEachOverRun`) beside merging a cursor on every source
/// (`forEachMerged`): both routes must give the same entries, forward and backward, for random
/// bounds and readers that stop early; on a damaged file each gives those entries or a typed
/// error.
@Suite struct IndexOverRunDifferentialTests {
    /// The entries a route gives between the bounds, up to `limit` (the reader stops there).
    static func collect(limit: Int, _ route: ((consuming IndexEntry) -> Bool) throws -> Void) rethrows -> [IndexEntry] {
        var entries: [IndexEntry] = []
        try route { entry in
            entries.append(entry)
            return entries.count < limit
        }
        return entries
    }

    /// Both routes both ways, between random bounds, each stopped at a random length; returns
    /// what each gave, the fast route's first.
    static func bothRoutes(_ storage: SecondaryIndex, _ run: IndexRun, _ expected: [IndexEntry], _ generator: inout SeededRandom)
        throws -> [(label: String, fast: () throws -> [IndexEntry], merged: () throws -> [IndexEntry], expected: [IndexEntry])] {
        let lower = PersistedIndexTests.bound(expected, &generator)
        let upper = PersistedIndexTests.bound(expected, &generator)
        let below = lower.map(KeysBelow.init(before:)) ?? .noEntry
        let notAbove = upper.map(KeysBelow.init(through:)) ?? .everyEntry
        let inside = expected.filter { PersistedIndexTests.isInside($0, lower, upper) }
        let limit = generator.chance(50) ? Int.max : Int.random(in: 1...(inside.count + 2), using: &generator)
        return [
            ("forward", { try collect(limit: limit) { try storage.forEachOverRun(run, below, notAbove, $0) } },
             { try collect(limit: limit) { try storage.forEachMerged(below, notAbove, $0) } }, Array(inside.prefix(limit))),
            ("backward", { try collect(limit: limit) { try storage.forEachReversedOverRun(run, below, notAbove, $0) } },
             { try collect(limit: limit) { try storage.forEachReversedMerged(below, notAbove, $0) } }, Array(inside.reversed().prefix(limit))),
        ]
    }

    @Test func readingOverTheRunAgreesWithMergingEverySource() throws {
        let directory = TemporaryDirectory()
        // Checkpoints far apart, compactions often: the runs are often one without marks, with
        // several commits in memory beside it.
        let path = directory.file("over-run.store")
        var engine = try StorageEngine(path: path, configuration: CheckpointTests.checkpointing(4_000))
        try engine.defineIndexes(PersistedIndexTests.definitions(PersistedIndexTests.Reads()))
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x0E51))
        var reference: CheckpointTests.Reference = [:]
        var overRun = 0
        for round in 0..<160 {
            try engine.commit(CheckpointTests.randomBatch(&generator, applyingTo: &reference, deletesBelow: 98))
            if round % 11 == 10 {
                // Compacted and reopened: each index one run without marks, until commits change it.
                try engine.compact()
                try engine.close()
                engine = try StorageEngine(path: path, configuration: CheckpointTests.checkpointing(4_000))
                try engine.defineIndexes(PersistedIndexTests.definitions(PersistedIndexTests.Reads()))
            }
            let snapshot = engine.snapshot()
            for name in PersistedIndexTests.names {
                let storage = try #require(snapshot.index(named: name)).storage
                guard let run = storage.unmarkedSoleRun, storage.hasChanges else { continue }
                overRun += 1
                let expected = PersistedIndexTests.expected(name, reference)
                for _ in 0..<4 {
                    for (label, fast, merged, wanted) in try Self.bothRoutes(storage, run, expected, &generator) {
                        let context = "round \(round), \(name), \(label)"
                        #expect(try fast() == wanted, "\(context): over the run")
                        #expect(try merged() == wanted, "\(context): merged")
                    }
                }
            }
        }
        #expect(overRun > 40, "reads over a run with changes beside it: \(overRun)")
        try engine.close()
    }

    /// A damaged run block is an error for either route that meets it: a read that succeeds
    /// gives the entries of the objects the store holds.
    @Test func overADamagedRunEachRouteGivesTheEntriesOrATypedError() throws {
        let directory = TemporaryDirectory()
        // Compacted, so each index is one run without marks.
        let source = directory.file("source.store")
        _ = try PersistedIndexTests.recordWithIndex(at: source, commits: 30, seed: 0x0E52)
        let compacting = try StorageEngine(path: source, configuration: CheckpointTests.checkpointing(150))
        try compacting.defineIndexes(PersistedIndexTests.definitions(PersistedIndexTests.Reads()))
        try compacting.compact()
        try compacting.close()
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: source)))
        let path = directory.file("flipped.store")
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x0E53))
        var outcomes: [String: Int] = [:]
        for round in 0..<300 {
            var damaged = bytes
            flipRandomBit(of: &damaged, from: Int(LogHeader().unitsStart), using: &generator)
            try replaceStore(at: path, with: damaged)
            let engine: StorageEngine
            var state: StoreState
            do {
                engine = try StorageEngine(path: path, configuration: CheckpointTests.checkpointing(100_000))
                state = try StoreState(engine.snapshot())
                try engine.defineIndexes(PersistedIndexTests.definitions(PersistedIndexTests.Reads()))
                // A few changes in memory beside the runs.
                let batch = CheckpointTests.randomBatch(&generator, applyingTo: &state.objects, deletesBelow: 98)
                try engine.commit(batch)
            } catch is StorageError {
                outcomes["not opened", default: 0] += 1
                continue
            }
            defer { try? engine.close() }
            let snapshot = engine.snapshot()
            for name in PersistedIndexTests.names {
                let storage = try #require(snapshot.index(named: name)).storage
                guard let run = storage.unmarkedSoleRun else { continue }
                let expected = PersistedIndexTests.expected(name, state.objects)
                for (label, fast, merged, wanted) in try Self.bothRoutes(storage, run, expected, &generator) {
                    for (route, read) in [("over the run", fast), ("merged", merged)] {
                        do {
                            #expect(try read() == wanted, "round \(round), \(name), \(label), \(route)")
                            outcomes["read \(route)", default: 0] += 1
                        } catch is StorageError {
                            outcomes["typed error \(route)", default: 0] += 1
                        }
                    }
                }
            }
        }
        #expect((outcomes["typed error over the run"] ?? 0) > 0 && (outcomes["read over the run"] ?? 0) > 0, "\(outcomes)")
    }
}
