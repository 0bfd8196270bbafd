import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// A walk of an index that keeps the objects of a set (`IndexMemberWalk`) reads a run alone in
/// place, its entries' keys and objects compared and hashed as stored (`ObjectKeySet`), beside
/// the route that reads any index decoded: both must give the objects the positions give, kept
/// by the set, in batches of any size, both ways, with every kind of index key (ties, -0.0 and
/// 0.0, NaNs, strings, byte strings, tuples, nil, Booleans) and of object key (integers, ASCII
/// and other strings, byte strings); across commits (a run read in place with the inserts,
/// updates and deletes since merged in), checkpoints (several runs, merges) and compactions;
/// and on damaged files, where each answers right or throws.
@Suite struct IndexMemberWalkTests {
    static let type = "E"
    /// The sort index: one key per object, of a kind the value's first byte picks.
    static let sort = IndexDefinition(name: "E.sort", typeName: type, isUnique: false, fingerprint: "E.sort v1") { sortKeys($0) }
    /// The filter index: a few values, so its ranges hold many objects.
    static let filter = IndexDefinition(name: "E.filter", typeName: type, isUnique: false, fingerprint: "E.filter v1") { filterKeys($0) }

    static func sortKeys(_ value: [UInt8]) -> [IndexKey] {
        guard value.count >= 3 else { return [.null] }
        let (kind, a) = (value[0], value[2])
        // Numbers of one kind each that no number of another kind equals: an index of one
        // property holds one kind, and keys of two kinds that order alike are two groups.
        switch kind % 9 {
        case 0: return [.integer(Int64(a % 7) + 10)]
        case 1: return [.double([0.0, -0.0, 1.5, -2.25, .nan, Double(bitPattern: Double.nan.bitPattern | 1), .infinity][Int(a % 7)])]
        case 2: return [.string(["", "a", "ab", "é", "zz", "b\u{0}"][Int(a % 6)])]
        case 3: return [.bytes(Array([1, 2, 3].prefix(Int(a % 4))))]
        case 4: return [.tuple(IndexTuple([.integer(Int64(a % 3)), .string(a % 2 == 0 ? "x" : "y")]))]
        case 5: return [.bool(a % 2 == 0)]
        case 6: return [.null]
        case 7: return [.unsigned(UInt64(a % 5) + 1_000)]
        default: return [.integer(Int64(a) + 2_000)]
        }
    }

    static func filterKeys(_ value: [UInt8]) -> [IndexKey] {
        [.integer(Int64((value.count >= 2 ? value[1] : 0) % 4))]
    }

    static func objectKey(_ generator: inout SeededRandom) -> StorageKey {
        let number = Int.random(in: 0..<120, using: &generator)
        switch Int.random(in: 0..<4, using: &generator) {
        case 0: return .integer(Int64(number) - 20)
        case 1: return .string("object-key-number-\(number)")
        case 2: return .string("é\(number)")
        default: return .bytes([UInt8(number), 7, UInt8(number % 3)])
        }
    }

    static func value(_ generator: inout SeededRandom) -> [UInt8] {
        (0..<3).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// The expected walk: the sort index's entries in position order, kept by `members`.
    static func expected(_ objects: [StorageKey: [UInt8]], ascending: Bool, members: Set<StorageKey>) -> [StorageKey] {
        let entries = objects.flatMap { key, value in sortKeys(value).map { IndexEntry(key: $0, object: key) } }.sorted(by: IndexEntry.precedes)
        let ordered = ascending ? entries : PersistedIndexTests.groupsReversed(entries)
        return ordered.map(\.object).filter(members.contains)
    }

    /// A random range of the filter index, as bounds, and the objects in it.
    static func filterRange(_ objects: [StorageKey: [UInt8]], using generator: inout SeededRandom) -> (IndexBound?, IndexBound?, Set<StorageKey>) {
        func bound() -> IndexBound? {
            generator.chance(20) ? nil : IndexBound(.integer(Int64.random(in: -1...4, using: &generator)), inclusive: generator.chance(60))
        }
        let (lower, upper) = (bound(), bound())
        var members = Set<StorageKey>()
        for (key, value) in objects {
            let entry = IndexEntry(key: filterKeys(value)[0], object: key)
            if lower.map({ KeysBelow(before: $0).contains(entry) }) ?? false { continue }
            if upper.map({ !KeysBelow(through: $0).contains(entry) }) ?? false { continue }
            members.insert(key)
        }
        return (lower, upper, members)
    }

    /// Walks `walk` to its end in random batches; returns the objects kept and checks the count walked.
    static func walkAll(_ walk: IndexMemberWalk, entries: Int, using generator: inout SeededRandom) throws -> [StorageKey] {
        var walk = walk
        var found: [StorageKey] = []
        var reads = 0
        while !walk.isComplete {
            found += try walk.next(reading: Int.random(in: 1...40, using: &generator))
            reads += 1
            guard reads <= entries + 1 else { break }
        }
        #expect(walk.walked == entries, "walked \(walk.walked) of \(entries) entries")
        return found
    }

    /// Both routes of the set and of the walk, both ways, against `objects`; returns whether the
    /// indexes were each a run read alone, which the first route reads in place.
    @discardableResult
    static func check(_ snapshot: EngineSnapshot, _ objects: [StorageKey: [UInt8]], using generator: inout SeededRandom, _ context: String) throws -> Bool {
        let sortIndex = try #require(snapshot.index(named: sort.name))
        let filterIndex = try #require(snapshot.index(named: filter.name))
        let (lower, upper, members) = filterRange(objects, using: &generator)
        let inPlace = try filterIndex.objectKeySet(from: lower, to: upper)
        let decoded = try filterIndex.objectKeySet(from: lower, to: upper, decoding: true)
        #expect(inPlace.count == members.count && decoded.count == members.count, "\(context): set counts")
        for key in objects.keys {
            #expect(inPlace.contains(key) == members.contains(key) && decoded.contains(key) == members.contains(key), "\(context): \(key) in the set")
        }
        for ascending in [true, false] {
            let expected = Self.expected(objects, ascending: ascending, members: members)
            let walked = try walkAll(sortIndex.memberWalk(ascending: ascending, members: inPlace), entries: objects.count, using: &generator)
            #expect(walked == expected, "\(context): walk in place, ascending \(ascending)")
            let read = try walkAll(sortIndex.decodingMemberWalk(ascending: ascending, members: decoded), entries: objects.count, using: &generator)
            #expect(read == expected, "\(context): walk decoded, ascending \(ascending)")
        }
        return sortIndex.storage.soleRun != nil && filterIndex.storage.soleRun != nil
    }

    /// Whether both indexes of `snapshot` are a run each with changes in memory beside it, at
    /// least one with some: what the route in place reads with the changes merged in.
    static func readsOverRuns(_ snapshot: EngineSnapshot) throws -> Bool {
        let indexes = [try #require(snapshot.index(named: sort.name)), try #require(snapshot.index(named: filter.name))].map(\.storage)
        return indexes.allSatisfy { $0.unmarkedSoleRun != nil } && indexes.contains { $0.hasChanges }
    }

    /// A few puts and deletes of objects of `objects`, applied to it.
    static func smallBatch(_ objects: inout [StorageKey: [UInt8]], using generator: inout SeededRandom) -> WriteBatch {
        var batch = WriteBatch()
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            if generator.chance(35), let key = generator.pick(from: objects.keys, by: StorageKey.precedes) {
                batch.delete(type: type, key: key)
                objects[key] = nil
            } else {
                // An update of an object held, or a new one.
                var key = objectKey(&generator)
                if generator.chance(50), let held = generator.pick(from: objects.keys, by: StorageKey.precedes) { key = held }
                let value = Self.value(&generator)
                batch.put(type: type, key: key, value: value)
                objects[key] = value
            }
        }
        return batch
    }

    @Test func walksInPlaceAgreeWithDecodedWalksAndTheReference() throws {
        let directory = TemporaryDirectory()
        let engine = try StorageEngine(path: directory.file("walk.store"), configuration: CheckpointTests.checkpointing(200))
        try engine.defineIndexes([Self.sort, Self.filter])
        var reference: [StorageKey: [UInt8]] = [:]
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x3A1C))
        var inPlace = 0
        var overRuns = 0
        for round in 0..<80 {
            var batch = WriteBatch()
            for _ in 0..<Int.random(in: 1...25, using: &generator) {
                if generator.chance(20), let key = generator.pick(from: reference.keys, by: StorageKey.precedes) {
                    batch.delete(type: Self.type, key: key)
                    reference[key] = nil
                } else {
                    let (key, value) = (Self.objectKey(&generator), Self.value(&generator))
                    batch.put(type: Self.type, key: key, value: value)
                    reference[key] = value
                }
            }
            try engine.commit(batch)
            if round % 29 == 28 { try engine.compact() }
            if try Self.check(engine.snapshot(), reference, using: &generator, "round \(round)") { inPlace += 1 }
            // A few small commits after: the runs and the changes beside them, read in place.
            for step in 0..<3 {
                try engine.commit(Self.smallBatch(&reference, using: &generator))
                if try Self.readsOverRuns(engine.snapshot()) { overRuns += 1 }
                try Self.check(engine.snapshot(), reference, using: &generator, "round \(round), small commit \(step)")
            }
        }
        #expect(inPlace > 0, "rounds whose indexes were runs read alone: \(inPlace)")
        #expect(overRuns > 20, "reads of runs with changes beside them: \(overRuns)")
        try engine.close()
    }

    @Test func canonicallyEqualStringsAreOneMember() {
        var set = ObjectKeySet()
        set.insert(.string("caf\u{E9}"))
        #expect(set.contains(.string("cafe\u{301}")))
        #expect(!set.contains(.string("cafe")) && !set.contains(.bytes(Array("caf\u{E9}".utf8))))
        set.insert(.integer(-3))
        #expect(set.contains(.integer(-3)) && !set.contains(.integer(3)) && set.count == 2)
    }

    /// On a damaged copy (a bit flipped in its second half, where the index runs lie), each route
    /// gives what the objects the store holds give, or throws.
    @Test func walksOfADamagedFileAreRightOrATypedError() throws {
        let directory = TemporaryDirectory()
        let source = directory.file("source.store")
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x3A1D))
        do {
            let engine = try StorageEngine(path: source, configuration: CheckpointTests.checkpointing(100))
            try engine.defineIndexes([Self.sort, Self.filter])
            for _ in 0..<12 {
                var batch = WriteBatch()
                for _ in 0..<30 { batch.put(type: Self.type, key: Self.objectKey(&generator), value: Self.value(&generator)) }
                try engine.commit(batch)
            }
            // Compacted: each index one run, read in place; its blocks lie at the file's end.
            try engine.compact()
            try engine.close()
        }
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: source)))
        let path = directory.file("flipped.store")
        var outcomes: [String: Int] = [:]
        for round in 0..<200 {
            var damaged = bytes
            flipRandomBit(of: &damaged, from: max(Int(LogHeader().unitsStart), damaged.count / 2), using: &generator)
            try replaceStore(at: path, with: damaged)
            let engine: StorageEngine
            var objects: [StorageKey: [UInt8]]
            do {
                engine = try StorageEngine(path: path, configuration: CheckpointTests.checkpointing(100))
                objects = try StoreState(engine.snapshot()).objects[Self.type] ?? [:]
                try engine.defineIndexes([Self.sort, Self.filter])
            } catch is StorageError {
                outcomes["not opened", default: 0] += 1
                continue
            }
            defer { try? engine.close() }
            do {
                let readInPlace = try Self.check(engine.snapshot(), objects, using: &generator, "round \(round)")
                outcomes[readInPlace ? "read in place" : "read", default: 0] += 1
                // Then with a small commit's changes beside the damaged runs.
                try engine.commit(Self.smallBatch(&objects, using: &generator))
                let overRuns = try Self.readsOverRuns(engine.snapshot())
                try Self.check(engine.snapshot(), objects, using: &generator, "round \(round), after a commit")
                outcomes[overRuns ? "read over runs" : "read after a commit", default: 0] += 1
            } catch is StorageError {
                outcomes["typed error", default: 0] += 1
            }
        }
        #expect((outcomes["typed error"] ?? 0) > 0 && (outcomes["read in place"] ?? 0) > 0 && (outcomes["read over runs"] ?? 0) > 0, "\(outcomes)")
    }
}
