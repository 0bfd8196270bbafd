import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// Positions of one index state start from the first entries an earlier read of that state read
/// (`IndexPositionsMemo`), beside reading the index itself: both routes must give the same
/// entries, in both directions, for prefixes shorter and longer than the memo keeps, across
/// commits (which drop the memo), checkpoints, compactions, older snapshots and damaged files.
@Suite struct IndexPositionsMemoTests {
    /// Positions of `index` read as a prefix of sorted results reads them (a read ahead of
    /// `length`, then each position), checked against `inOrder`, what iterating the index gives.
    static func checkPrefix(_ index: IndexSnapshot, ascending: Bool, length: Int, _ inOrder: [IndexEntry], _ context: String) throws {
        let positions = index.positions(ascending: ascending)
        try positions.readAhead(length)
        for position in 0...min(length + 2, inOrder.count) {
            let expected = inOrder.indices.contains(position) ? inOrder[position] : nil
            #expect(try positions.object(at: position) == expected?.object, "\(context): object at \(position)")
            #expect(try positions.entry(at: position) == expected, "\(context): entry at \(position)")
        }
    }

    static func entriesByIteration(_ index: IndexSnapshot) throws -> [IndexEntry] {
        var entries: [IndexEntry] = []
        try index.forEach(from: nil, to: nil) { entries.append($0); return true }
        return entries
    }

    @Test func positionsFromTheMemoAgreeWithIteratingTheIndex() throws {
        let directory = TemporaryDirectory()
        let engine = try StorageEngine(path: directory.file("memo.store"), configuration: CheckpointTests.checkpointing(300))
        try engine.defineIndexes([SecondaryIndexTests.byValue])
        var reference: [Int64: UInt8] = [:]
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x3E30))
        var older: (snapshot: EngineSnapshot, entries: [IndexEntry])?
        var sharedPrefixes = 0
        for round in 0..<90 {
            let count = Int.random(in: 1...60, using: &random)
            try engine.commit(SecondaryIndexTests.randomBatch(count: count, keys: 900, reference: &reference, using: &random))
            if round % 37 == 36 { try engine.compact() }
            let snapshot = engine.snapshot()
            let index = try #require(snapshot.index(named: "T.value"))
            let expected = SecondaryIndexTests.expectedEntries(reference)
            #expect(try Self.entriesByIteration(index) == expected, "round \(round)")
            // Several results of one state, each starting from what the ones before read.
            for read in 0..<6 {
                let ascending = Bool.random(using: &random)
                let length = Int.random(in: 1...(2 * IndexPositionsMemo.limit), using: &random)
                try Self.checkPrefix(index, ascending: ascending, length: length,
                                     ascending ? expected : PersistedIndexTests.groupsReversed(expected), "round \(round), read \(read)")
                if index.storage.positionsMemo?.read(ascending: ascending)?.objects.isEmpty == false { sharedPrefixes += 1 }
            }
            // A snapshot taken before later commits keeps its own state's entries.
            if let (snapshot, entries) = older {
                let index = try #require(snapshot.index(named: "T.value"))
                try Self.checkPrefix(index, ascending: true, length: Int.random(in: 1...300, using: &random), entries, "round \(round), older snapshot")
            }
            if round % 5 == 0 { older = (snapshot, expected) }
        }
        #expect(sharedPrefixes > 100, "positions started from the memo: \(sharedPrefixes)")
        try engine.close()
    }

    /// Reads positions of every index of `snapshot` as prefixes (random direction and length,
    /// mostly within what a memo keeps), checked against `reference`; returns how many of the
    /// indexes started with a memo holding entries, which a commit changed to match.
    static func checkEveryIndex(_ snapshot: EngineSnapshot, _ reference: CheckpointTests.Reference, using random: inout SeededRandom,
                                _ context: String) throws -> Int {
        var kept = 0
        for name in PersistedIndexTests.names {
            let index = try #require(snapshot.index(named: name))
            let expected = PersistedIndexTests.expected(name, reference)
            if [true, false].contains(where: { index.storage.positionsMemo?.read(ascending: $0)?.objects.isEmpty == false }) { kept += 1 }
            for _ in 0..<2 {
                let ascending = Bool.random(using: &random)
                let length = random.chance(10) ? Int.random(in: 1...300, using: &random) : Int.random(in: 1...40, using: &random)
                try checkPrefix(index, ascending: ascending, length: length,
                                ascending ? expected : PersistedIndexTests.groupsReversed(expected), "\(context), \(name)")
            }
        }
        return kept
    }

    /// A commit of a few objects (puts, updates, deletes, a type's deletion) gives the new state
    /// the memo of the one before, changed entry by entry: positions read from it, and on past
    /// it from the index, agree with the entries the objects give, with checkpoints and merges
    /// forced often, across compactions, and for snapshots taken before later commits.
    @Test func aMemoChangedByCommitsAgreesWithTheEntries() throws {
        let directory = TemporaryDirectory()
        let engine = try StorageEngine(path: directory.file("changed.store"), configuration: CheckpointTests.checkpointing(120))
        try engine.defineIndexes(PersistedIndexTests.definitions(PersistedIndexTests.Reads()))
        var reference: CheckpointTests.Reference = [:]
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x3E33))
        var older: (snapshot: EngineSnapshot, reference: CheckpointTests.Reference)?
        var kept = 0
        for round in 0..<400 {
            // Mostly one commit of one to six changes; now and then several commits with no
            // snapshot between, more changes than a memo follows.
            for _ in 0..<(round % 53 == 52 ? 8 : 1) {
                try engine.commit(CheckpointTests.randomBatch(&random, applyingTo: &reference, deletesBelow: 90))
            }
            if round % 131 == 130 { try engine.compact() }
            kept += try Self.checkEveryIndex(engine.snapshot(), reference, using: &random, "round \(round)")
            if let (snapshot, reference) = older {
                _ = try Self.checkEveryIndex(snapshot, reference, using: &random, "round \(round), older snapshot")
            }
            if round % 7 == 0 { older = (engine.snapshot(), reference) }
        }
        #expect(engine.statistics.persistedIndexRuns > 0)
        #expect(kept > 300, "indexes whose memo a commit changed: \(kept)")
        try engine.close()
    }

    /// A damaged run block is an error for every positional read that meets it, from the memo or
    /// not: a read that succeeds gives the entries of the objects the store holds.
    @Test func positionsOfADamagedFileAreItsEntriesOrATypedError() throws {
        let directory = TemporaryDirectory()
        let recorded = try PersistedIndexTests.recordWithIndex(at: directory.file("source.store"), commits: 30, seed: 0x3E31)
        let path = directory.file("flipped.store")
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x3E32))
        var outcomes: [String: Int] = [:]
        for round in 0..<300 {
            var damaged = recorded.bytes
            flipRandomBit(of: &damaged, from: Int(LogHeader().unitsStart), using: &generator)
            try replaceStore(at: path, with: damaged)
            let engine: StorageEngine
            let state: StoreState
            do {
                engine = try StorageEngine(path: path, configuration: CheckpointTests.checkpointing(150))
                state = try StoreState(engine.snapshot())
                try engine.defineIndexes(PersistedIndexTests.definitions(PersistedIndexTests.Reads()))
            } catch is StorageError {
                outcomes["not opened", default: 0] += 1
                continue
            }
            defer { try? engine.close() }
            let snapshot = engine.snapshot()
            for name in PersistedIndexTests.names {
                let index = try #require(snapshot.index(named: name))
                let expected = PersistedIndexTests.expected(name, state.objects)
                // Positions first, twice each way, so the second reads start from the memo.
                for ascending in [true, false, true, false] {
                    let length = Int.random(in: 1...(expected.count + 1), using: &generator)
                    do {
                        try Self.checkPrefix(index, ascending: ascending, length: length,
                                             ascending ? expected : PersistedIndexTests.groupsReversed(expected), "round \(round), \(name)")
                        outcomes["read", default: 0] += 1
                    } catch is StorageError {
                        outcomes["typed error", default: 0] += 1
                    }
                }
            }
        }
        #expect((outcomes["typed error"] ?? 0) > 0 && (outcomes["read"] ?? 0) > 0, "\(outcomes)")
    }
}

extension IndexPositionsMemoTests {
    /// On a damaged file, positions read from a memo that commits changed, and on past it from
    /// the index, give the entries of the objects the store holds, or a typed error.
    @Test func aMemoChangedByCommitsOnADamagedFileGivesEntriesOrATypedError() throws {
        let directory = TemporaryDirectory()
        let recorded = try PersistedIndexTests.recordWithIndex(at: directory.file("source.store"), commits: 30, seed: 0x3E34)
        let path = directory.file("flipped.store")
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x3E35))
        var outcomes: [String: Int] = [:]
        for round in 0..<200 {
            var damaged = recorded.bytes
            flipRandomBit(of: &damaged, from: Int(LogHeader().unitsStart), using: &generator)
            try replaceStore(at: path, with: damaged)
            let engine: StorageEngine
            var reference: CheckpointTests.Reference
            do {
                engine = try StorageEngine(path: path, configuration: CheckpointTests.checkpointing(150))
                reference = try StoreState(engine.snapshot()).objects
                try engine.defineIndexes(PersistedIndexTests.definitions(PersistedIndexTests.Reads()))
            } catch is StorageError {
                outcomes["not opened", default: 0] += 1
                continue
            }
            defer { try? engine.close() }
            for step in 0..<4 {
                do {
                    if step > 0 { try engine.commit(CheckpointTests.randomBatch(&generator, applyingTo: &reference, deletesBelow: 90)) }
                    _ = try Self.checkEveryIndex(engine.snapshot(), reference, using: &generator, "round \(round), step \(step)")
                    outcomes["read", default: 0] += 1
                } catch is StorageError {
                    outcomes["typed error", default: 0] += 1
                    break
                }
            }
        }
        #expect((outcomes["typed error"] ?? 0) > 0 && (outcomes["read"] ?? 0) > 0, "\(outcomes)")
    }
}
