import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// Secondary indexes persisted as runs in checkpoints (docs/FILE_FORMAT.md, "Checkpoints"):
/// every read of an index (forward, reversed, by position, ranges and their counts) checked
/// against a plain reference built from the objects, with checkpoints, merges, reopenings,
/// compactions and changed definitions forced often; and against truncation and bit flips.
@Suite struct PersistedIndexTests {
    /// Counts the values each index's `keys` read: a reused index reads only what changed.
    final class Reads: Sendable {
        private let counts = Lock<[String: Int]>([:])
        func count(_ name: String) { counts.withLock { $0[name, default: 0] += 1 } }
        func take() -> [String: Int] { counts.withLock { counts in defer { counts = [:] }; return counts } }
    }

    /// The keys of the three indexes, as plain functions of a value.
    static func keys(_ name: String, _ value: [UInt8]) -> [IndexKey] {
        switch name {
        case "P.first": [value.first.map { .integer(Int64($0 % 9)) } ?? .null]
        // Several keys per object, some repeated within one value.
        case "P.some": value.prefix(4).map { .string("s\($0 % 5)") }
        default: [.tuple(IndexTuple([.integer(Int64(value.count % 3)), .bytes(Array(value.prefix(1)))]))]
        }
    }

    static let names = ["P.first", "P.some", "Q.tuple"]

    static func definitions(_ reads: Reads, version: Int = 1) -> [IndexDefinition] {
        names.map { name in
            IndexDefinition(name: name, typeName: String(name.prefix(1)), isUnique: false, fingerprint: "\(name) v\(version)") { value in
                reads.count(name)
                return keys(name, value)
            }
        }
    }

    /// The entries `reference` gives the index `name`, in index order, each object's keys once.
    static func expected(_ name: String, _ reference: CheckpointTests.Reference) -> [IndexEntry] {
        var entries: [IndexEntry] = []
        for (key, value) in reference[String(name.prefix(1))] ?? [:] {
            var seen = Set<IndexKey>()
            for indexKey in keys(name, value) where seen.insert(indexKey).inserted {
                entries.append(IndexEntry(key: indexKey, object: key))
            }
        }
        return entries.sorted(by: IndexEntry.precedes)
    }

    /// `entries` with the groups of equal keys in reverse order, each in object-key order.
    static func groupsReversed(_ entries: [IndexEntry]) -> [IndexEntry] {
        var groups: [[IndexEntry]] = []
        for entry in entries {
            if groups.last?.first?.key == entry.key { groups[groups.count - 1].append(entry) } else { groups.append([entry]) }
        }
        return groups.reversed().flatMap { $0 }
    }

    static func bound(_ entries: [IndexEntry], _ generator: inout SeededRandom) -> IndexBound? {
        guard !entries.isEmpty, !generator.chance(15) else { return nil }
        // Sometimes a number of another kind than the keys, which compares by value; a string
        // or byte string no entry holds, which a search compares with the keys in place.
        let number = Int64.random(in: -1...10, using: &generator)
        let key: IndexKey = switch Int.random(in: 0..<10, using: &generator) {
        case 0: .integer(number)
        case 1: .double(Double(number) + 0.5)
        case 2: .string(generator.pick(["", "s", "s2x", "t", "é"]))
        case 3: .bytes(generator.pick([[], [0], [200, 1]]))
        default: generator.pick(entries).key
        }
        return IndexBound(key, inclusive: generator.chance(50))
    }

    static func isInside(_ entry: IndexEntry, _ lower: IndexBound?, _ upper: IndexBound?) -> Bool {
        if let lower {
            let order = IndexKey.order(entry.key, lower.key)
            if order < 0 || (order == 0 && !lower.isInclusive) { return false }
        }
        if let upper {
            let order = IndexKey.order(entry.key, upper.key)
            if order > 0 || (order == 0 && !upper.isInclusive) { return false }
        }
        return true
    }

    /// Checks every read of every index against `reference`.
    static func check(_ snapshot: EngineSnapshot, _ reference: CheckpointTests.Reference, _ generator: inout SeededRandom, _ context: String) throws {
        for name in names {
            let expected = expected(name, reference)
            let index = try #require(snapshot.index(named: name), "\(context): \(name) is defined")
            #expect(index.count == expected.count, "\(context): count of \(name)")
            var forward: [IndexEntry] = []
            try index.forEach(from: nil, to: nil) { forward.append($0); return true }
            #expect(forward == expected, "\(context): entries of \(name)")
            var backward: [IndexEntry] = []
            try index.forEachReversed(from: nil, to: nil) { backward.append($0); return true }
            #expect(backward == expected.reversed(), "\(context): reversed entries of \(name)")
            #expect(try index.positions(ascending: true).objects() == expected.map(\.object), "\(context): positions of \(name)")
            let descending = index.positions(ascending: false)
            let newest = groupsReversed(expected)
            #expect(try descending.entry(at: 0) == newest.first, "\(context): first descending position of \(name)")
            #expect(try descending.objects() == newest.map(\.object), "\(context): descending positions of \(name)")
            // Read by position in steps, as a prefix of sorted results is: each read goes on from
            // the last group read, and a step may end inside a group.
            let ascending = generator.chance(50)
            let inOrder = ascending ? expected : newest
            let stepping = index.positions(ascending: ascending)
            var position = Int.random(in: 0..<3, using: &generator)
            while position < inOrder.count {
                #expect(try stepping.entry(at: position) == inOrder[position], "\(context): position \(position) of \(name)")
                #expect(try stepping.object(at: position) == inOrder[position].object, "\(context): object at \(position) of \(name)")
                position += Int.random(in: 1...40, using: &generator)
            }
            #expect(try stepping.entry(at: inOrder.count) == nil, "\(context): past the positions of \(name)")
            #expect(try stepping.objects() == inOrder.map(\.object), "\(context): positions of \(name) after reading some")
            // After a read ahead, the positions it read are read without the lock, the others
            // with it: every position gives the same object either way.
            let ahead = index.positions(ascending: ascending)
            try ahead.readAhead(Int.random(in: 1...60, using: &generator))
            if generator.chance(50) { try ahead.readAhead(Int.random(in: 1...80, using: &generator)) }
            for position in -1...inOrder.count {
                let object = inOrder.indices.contains(position) ? inOrder[position].object : nil
                #expect(try ahead.object(at: position) == object, "\(context): object at \(position) of \(name) after a read ahead")
            }
            #expect(try ahead.objects() == inOrder.map(\.object), "\(context): positions of \(name) after a read ahead")
            for _ in 0..<12 {
                let (lower, upper) = (bound(expected, &generator), bound(expected, &generator))
                let inside = expected.filter { isInside($0, lower, upper) }
                var found: [IndexEntry] = []
                try index.forEach(from: lower, to: upper) { found.append($0); return true }
                #expect(found == inside, "\(context): \(name) from \(String(describing: lower)) to \(String(describing: upper))")
                // A sole run answers this without decoding keys: the same objects as the entries'.
                #expect(try index.objects(from: lower, to: upper) == inside.map(\.object), "\(context): \(name) objects within the bounds")
                var reversed: [IndexEntry] = []
                try index.forEachReversed(from: upper, to: lower) { reversed.append($0); return true }
                #expect(reversed == inside.reversed(), "\(context): \(name) reversed within the bounds")
                // A walk stopped early gives the first entries and no more.
                let stop = Int.random(in: 1...5, using: &generator)
                var first: [IndexEntry] = []
                try index.forEach(from: lower, to: upper) { first.append($0); return first.count < stop }
                #expect(first == Array(inside.prefix(stop)), "\(context): \(name) first \(stop) within the bounds")
                var last: [IndexEntry] = []
                try index.forEachReversed(from: upper, to: lower) { last.append($0); return last.count < stop }
                #expect(last == Array(inside.reversed().prefix(stop)), "\(context): \(name) last \(stop) within the bounds")
                #expect(try index.count(from: lower, to: upper) == inside.count, "\(context): \(name) count within the bounds")
            }
        }
    }

    /// Run once more on an encrypted store (`encrypted`), where the index runs are sealed pages.
    @Test(arguments: [(UInt64(0x1D5), false), (0x1D6, false), (0x1D7, false), (0x1D5, true), (0x1D6, true)])
    func randomOperationsAgreeWithAReference(seed: UInt64, encrypted: Bool) throws {
        var generator = SeededRandom(seed: SeededRandom.seed(default: seed))
        let directory = TemporaryDirectory()
        let path = directory.file("indexes.store")
        let reads = Reads()
        var configuration = encrypting(CheckpointTests.checkpointing(Int.random(in: 64...900, using: &generator)), encrypted)
        var engine = try StorageEngine(path: path, configuration: configuration)
        try engine.defineIndexes(Self.definitions(reads))
        var defined = true
        var reference: CheckpointTests.Reference = [:]
        var mostIndexRuns = 0
        var reusedOpens = 0
        for step in 0..<300 {
            try engine.commit(CheckpointTests.randomBatch(&generator, applyingTo: &reference, deletesBelow: 98))
            #expect(engine.statistics.lastCheckpointError == nil, "step \(step)")
            mostIndexRuns = max(mostIndexRuns, engine.statistics.persistedIndexRuns)
            if !defined, generator.chance(30) {
                try engine.defineIndexes(Self.definitions(reads))
                defined = true
            }
            if defined, step % 7 == 0 { try Self.check(engine.snapshot(), reference, &generator, "seed \(seed), step \(step)") }
            if generator.chance(6) {
                try engine.close()
                configuration.checkpointInterval = Int.random(in: 64...900, using: &generator)
                engine = try StorageEngine(path: path, configuration: configuration)
                // Sometimes the indexes stay undefined for a few commits (checkpoints then drop
                // those whose type changed), sometimes one definition changes (and is rebuilt).
                defined = !generator.chance(20)
                guard defined else { continue }
                let changed = generator.chance(15)
                let memory = engine.snapshot().index.types.mapValues(\.memoryCount)
                _ = reads.take()
                try engine.defineIndexes(changed ? Self.definitions(reads, version: 2) : Self.definitions(reads))
                let counted = reads.take()
                if !changed {
                    for name in Self.names {
                        let changedObjects = memory[String(name.prefix(1))] ?? 0
                        let objects = reference[String(name.prefix(1))]?.count ?? 0
                        if objects > 20, changedObjects < objects / 2, (counted[name] ?? 0) <= 2 * changedObjects { reusedOpens += 1 }
                    }
                }
                try Self.check(engine.snapshot(), reference, &generator, "seed \(seed), step \(step), reopened")
            }
            if defined, generator.chance(2) {
                try engine.compact()
                try Self.check(engine.snapshot(), reference, &generator, "seed \(seed), step \(step), compacted")
            }
        }
        if !defined { try engine.defineIndexes(Self.definitions(reads)) }
        try Self.check(engine.snapshot(), reference, &generator, "seed \(seed), last step")
        try engine.close()
        #expect(mostIndexRuns > 2 && reusedOpens > 0, "index runs were merged and reused: \(mostIndexRuns), \(reusedOpens)")
        let report = try verifyStoreFile(at: path, encryption: encrypted ? .key(testEncryptionKey) : nil)
        #expect(report.isIntact, "\(report)")
        engine = try StorageEngine(path: path, configuration: configuration)
        try engine.defineIndexes(Self.definitions(reads))
        try Self.check(engine.snapshot(), reference, &generator, "seed \(seed), final")
        try engine.close()
    }

    @Test func aPersistedUniqueIndexRefusesADuplicateOfAnObjectInItsRuns() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("unique.store")
        let byName = IndexDefinition(name: "P.name", typeName: "P", isUnique: true, fingerprint: "name v1") { [.bytes($0)] }
        var engine = try StorageEngine(path: path, configuration: CheckpointTests.checkpointing(1))
        try engine.defineIndexes([byName])
        var batch = WriteBatch()
        for number in 0..<500 { batch.put(type: "P", key: .integer(Int64(number)), value: Array("name \(number)".utf8)) }
        try engine.commit(batch)
        #expect(engine.statistics.persistedIndexRuns == 1)
        try engine.close()
        engine = try StorageEngine(path: path, configuration: CheckpointTests.checkpointing(0))
        try engine.defineIndexes([byName])
        #expect(engine.snapshot().secondary.indexes["P.name"]?.runs.count == 1, "the index is read from its run")
        var duplicate = WriteBatch()
        duplicate.put(type: "P", key: .integer(1_000), value: Array("name 250".utf8))
        let error = try #require(throws: StorageError.self) { try engine.commit(duplicate) }
        guard case .uniqueConstraint(let refusing, _) = error.kind else { Issue.record("\(error)"); return }
        #expect(refusing == "P.name")
        // Moving the name away first frees it, though the run still holds the old entry.
        var rename = WriteBatch()
        rename.put(type: "P", key: .integer(250), value: Array("renamed".utf8))
        rename.put(type: "P", key: .integer(1_000), value: Array("name 250".utf8))
        try engine.commit(rename)
        let index = try #require(engine.snapshot().index(named: "P.name"))
        let bound = IndexBound(.bytes(Array("name 250".utf8)), inclusive: true)
        #expect(try index.objects(from: bound, to: bound) == [.integer(1_000)])
        try engine.close()
    }

    /// An index built at this open (after a rewrite, as a migration makes, or for a changed
    /// definition) is persisted when the store closes, so the next open reads it from its runs.
    @Test func anIndexBuiltAtThisOpenIsPersistedWhenTheStoreCloses() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("rewritten.store")
        let reads = Reads()
        var engine = try StorageEngine(path: path, configuration: CheckpointTests.checkpointing(1 << 20))
        var batch = WriteBatch()
        for number in 0..<300 { batch.put(type: "P", key: .integer(Int64(number)), value: [UInt8(number % 200), 1, 2]) }
        try engine.commit(batch)
        try engine.rewrite(indexes: Self.definitions(reads)) { snapshot, rewriter in
            try snapshot.forEachEntry(type: "P") { key, value in try rewriter.put(type: "P", key: key, value: value + [9]) }
        }
        try engine.defineIndexes(Self.definitions(reads))
        try engine.close()
        _ = reads.take()
        engine = try StorageEngine(path: path, configuration: CheckpointTests.checkpointing(1 << 20))
        try engine.defineIndexes(Self.definitions(reads))
        #expect(reads.take().isEmpty, "no value was read to build an index")
        #expect(engine.snapshot().secondary.indexes["P.first"]?.runs.isEmpty == false)
        var generator = SeededRandom(seed: 0x1D8)
        var reference: CheckpointTests.Reference = [:]
        for number in 0..<300 { reference["P", default: [:]][.integer(Int64(number))] = [UInt8(number % 200), 1, 2, 9] }
        try Self.check(engine.snapshot(), reference, &generator, "after the rewrite")
        try engine.close()
    }

    /// A store with a persisted index, recorded commit by commit.
    static func recordWithIndex(at path: String, commits: Int, seed: UInt64) throws -> RecordedCommits {
        var generator = SeededRandom(seed: seed)
        let engine = try StorageEngine(path: path, configuration: CheckpointTests.checkpointing(150))
        try engine.defineIndexes(Self.definitions(Reads()))
        var recorded = try RecordedCommits(startingFrom: engine)
        for _ in 1...commits {
            var batch = WriteBatch()
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                if generator.chance(25), let key = generator.pick(from: recorded.states.last?.objects["P"]?.keys ?? [:].keys, by: StorageKey.precedes) {
                    batch.delete(type: "P", key: key)
                } else {
                    batch.put(type: "P", key: .integer(Int64.random(in: 0..<12, using: &generator)), value: CheckpointTests.value(&generator))
                }
            }
            try recorded.commit(batch, to: engine, at: path)
        }
        #expect(engine.statistics.persistedIndexRuns > 0)
        try engine.close()
        try recorded.finish(readingFrom: path)
        return recorded
    }

    /// Opens `path`, defines the indexes and checks each against the objects the store holds;
    /// the state, or the typed error that stopped it.
    static func openAndCheck(_ path: String, _ configuration: EngineConfiguration, _ context: String) throws -> StoreState {
        let engine = try StorageEngine(path: path, configuration: configuration)
        defer { try? engine.close() }
        let state = try StoreState(engine.snapshot())
        try engine.defineIndexes(Self.definitions(Reads()))
        let snapshot = engine.snapshot()
        for name in names {
            let index = try #require(snapshot.index(named: name))
            var found: [IndexEntry] = []
            try index.forEach(from: nil, to: nil) { found.append($0); return true }
            #expect(found == expected(name, state.objects), "\(context): \(name) agrees with the objects")
            #expect(try index.objects(from: nil, to: nil) == found.map(\.object), "\(context): \(name) objects agree with its entries")
            #expect(try index.count(from: nil, to: nil) == found.count, "\(context): \(name) count")
            // Damage met walking backward or by position is an error too, never other entries.
            var backward: [IndexEntry] = []
            try index.forEachReversed(from: nil, to: nil) { backward.append($0); return true }
            #expect(backward == found.reversed(), "\(context): \(name) reversed agrees with its entries")
            #expect(try index.positions(ascending: true).objects() == found.map(\.object), "\(context): \(name) positions")
            #expect(try index.positions(ascending: false).objects() == groupsReversed(found).map(\.object), "\(context): \(name) descending positions")
            // Positions a read ahead read are read without the lock: the same objects.
            let ahead = index.positions(ascending: false)
            try ahead.readAhead(found.count / 2 + 1)
            let read = try (0..<found.count).map { try ahead.object(at: $0) }
            #expect(read == groupsReversed(found).map { Optional($0.object) }, "\(context): \(name) descending positions after a read ahead")
        }
        return state
    }

    @Test func truncationAtEveryOffsetGivesACommittedPrefixAndMatchingIndexes() throws {
        let directory = TemporaryDirectory()
        let recorded = try Self.recordWithIndex(at: directory.file("source.store"), commits: 30, seed: 0x1DC)
        let path = directory.file("cut.store")
        for length in Int(LogHeader().unitsStart)...recorded.bytes.count {
            try replaceStore(at: path, with: Array(recorded.bytes[0..<length]))
            let state = try Self.openAndCheck(path, CheckpointTests.checkpointing(150), "cut at \(length)")
            #expect(state == recorded.state(upTo: length).state, "cut at \(length)")
        }
    }

    @Test func bitFlipsGiveACommittedStateWithMatchingIndexesOrATypedError() throws {
        let directory = TemporaryDirectory()
        let recorded = try Self.recordWithIndex(at: directory.file("source.store"), commits: 30, seed: 0x1DF)
        let path = directory.file("flipped.store")
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x1DF1))
        var outcomes: [String: Int] = [:]
        for round in 0..<400 {
            var damaged = recorded.bytes
            let at = flipRandomBit(of: &damaged, from: Int(LogHeader().unitsStart), using: &generator)
            try replaceStore(at: path, with: damaged)
            do {
                let state = try Self.openAndCheck(path, CheckpointTests.checkpointing(150), "round \(round), flip at \(at)")
                #expect(recorded.states.contains(state), "round \(round), flip at \(at): a state no commit made")
                outcomes["state", default: 0] += 1
            } catch is StorageError {
                outcomes["typed error", default: 0] += 1
            }
        }
        #expect((outcomes["typed error"] ?? 0) > 0 && (outcomes["state"] ?? 0) > 0, "\(outcomes)")
    }
}
