import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

@Suite struct SecondaryIndexTests {
    /// Values are one byte, `byte % 16` is the indexed key, so many objects share a key.
    static let byValue = IndexDefinition(name: "T.value", typeName: "T", isUnique: false) { value in
        value.isEmpty ? [] : [.integer(Int64(value[0] % 16))]
    }
    static let uniqueValue = IndexDefinition(name: "U.value", typeName: "U", isUnique: true) { value in
        value.isEmpty ? [.null] : [.integer(Int64(value[0]))]
    }

    static func expectedEntries(_ objects: [Int64: UInt8]) -> [IndexEntry] {
        objects.map { IndexEntry(key: .integer(Int64($0.value % 16)), object: .integer($0.key)) }
            .sorted(by: IndexEntry.precedes)
    }

    static func entries(_ snapshot: EngineSnapshot, _ name: String) throws -> [IndexEntry] {
        let index = try #require(snapshot.index(named: name))
        var entries: [IndexEntry] = []
        try index.forEach(from: nil, to: nil) { entries.append($0); return true }
        #expect(try index.positions(ascending: true).objects() == entries.map(\.object), "positional access agrees with iteration")
        var reversed: [IndexEntry] = []
        try index.forEachReversed(from: nil, to: nil) { reversed.append($0); return true }
        #expect(reversed == entries.reversed(), "reversed iteration agrees with iteration")
        return entries
    }

    /// A batch of `count` writes to type "T" on keys below `keys`, one in five a delete, the rest a
    /// random one-byte value; `reference` follows it.
    static func randomBatch(
        count: Int, keys: Int64, reference: inout [Int64: UInt8], using random: inout SeededRandom
    ) -> WriteBatch {
        var batch = WriteBatch()
        for _ in 0..<count {
            let key = Int64.random(in: 0..<keys, using: &random)
            if Int.random(in: 0..<5, using: &random) == 0 {
                batch.delete(type: "T", key: .integer(key))
                reference[key] = nil
            } else {
                let value = UInt8.random(in: 0...255, using: &random)
                batch.put(type: "T", key: .integer(key), value: [value])
                reference[key] = value
            }
        }
        return batch
    }

    @Test func indexFollowsRandomCommitsCompactionAndReopen() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("index.store")
        var engine = try StorageEngine(path: path, configuration: fastConfiguration())
        try engine.defineIndexes([Self.byValue])
        var reference: [Int64: UInt8] = [:]
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x1DE5))
        for round in 0..<400 {
            var batch = WriteBatch()
            var next = reference
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let key = Int64.random(in: 0..<300, using: &random)
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<6:
                    let value = UInt8.random(in: 0...255, using: &random)
                    batch.put(type: "T", key: .integer(key), value: [value])
                    next[key] = value
                case 6..<9:
                    batch.delete(type: "T", key: .integer(key))
                    next[key] = nil
                default:
                    if Int.random(in: 0..<20, using: &random) == 0 {
                        batch.deleteAll(type: "T")
                        next = [:]
                    }
                }
            }
            try engine.commit(batch)
            reference = next
            if round % 97 == 96 { try engine.compact() }
            if round % 131 == 130 {
                try engine.close()
                engine = try StorageEngine(path: path, configuration: fastConfiguration())
                try engine.defineIndexes([Self.byValue])
            }
            #expect(try Self.entries(engine.snapshot(), "T.value") == Self.expectedEntries(reference), "round \(round)")
        }
        let index = try #require(engine.snapshot().index(named: "T.value"))
        let fives = try index.objects(from: IndexBound(.integer(5), inclusive: true), to: IndexBound(.integer(5), inclusive: true))
        #expect(fives == reference.filter { $0.value % 16 == 5 }.keys.sorted().map { StorageKey.integer($0) })
        #expect(try index.count(from: IndexBound(.integer(3), inclusive: false), to: IndexBound(.integer(7), inclusive: false))
                == reference.values.filter { (4...6).contains($0 % 16) }.count)
        try engine.close()
    }

    /// Batches of hundreds of writes add their entries in one merge, those of a few one at a
    /// time; puts of one key twice and deletes in the same batch must come out as the reference.
    @Test func largeBatchesMergeIntoTheIndex() throws {
        let engine = StorageEngine(inMemoryWith: fastConfiguration())
        try engine.defineIndexes([Self.byValue])
        var reference: [Int64: UInt8] = [:]
        var random = SeededRandom(seed: SeededRandom.seed(default: 0xB01C))
        for round in 0..<60 {
            let size = round % 3 == 0 ? Int.random(in: 1...4, using: &random) : Int.random(in: 100...900, using: &random)
            try engine.commit(Self.randomBatch(count: size, keys: 3_000, reference: &reference, using: &random))
            #expect(try Self.entries(engine.snapshot(), "T.value") == Self.expectedEntries(reference), "round \(round)")
        }
    }

    /// A batch large enough to be checked by one pass over the whole unique index still names
    /// the shared value and writes nothing, whether it clashes with a stored object or within.
    @Test func largeBatchUniqueViolationWritesNothing() throws {
        let engine = StorageEngine(inMemoryWith: fastConfiguration())
        try engine.defineIndexes([Self.uniqueValue])
        var first = WriteBatch()
        first.put(type: "U", key: .integer(1), value: [200])
        try engine.commit(first)
        let before = try StoreState(engine.snapshot())
        for clashing: UInt8 in [200, 42] {
            var batch = WriteBatch()
            for key in 2..<100 { batch.put(type: "U", key: .integer(Int64(key)), value: [UInt8(key)]) }
            batch.put(type: "U", key: .integer(100), value: [clashing])
            #expect(throws: StorageError(.uniqueConstraint(index: "U.value", value: "\(clashing)"))) { try engine.commit(batch) }
            #expect(try StoreState(engine.snapshot()) == before)
        }
    }

    /// Counting a range ranks its two bounds; it must agree with walking the range.
    @Test func countsAgreeWithWalkingTheRange() throws {
        let engine = StorageEngine(inMemoryWith: fastConfiguration())
        try engine.defineIndexes([Self.byValue])
        var random = SeededRandom(seed: SeededRandom.seed(default: 0xC0_0475))
        var batch = WriteBatch()
        for key in 0..<3_000 {
            batch.put(type: "T", key: .integer(Int64(key)), value: [UInt8.random(in: 0...255, using: &random)])
        }
        try engine.commit(batch)
        let index = try #require(engine.snapshot().index(named: "T.value"))
        func bound() -> IndexBound? {
            random.chance(15) ? nil : IndexBound(.integer(Int64.random(in: -2...18, using: &random)), inclusive: random.chance(50))
        }
        for _ in 0..<500 {
            let (lower, upper) = (bound(), bound())
            var walked = 0
            try index.forEach(from: lower, to: upper) { _ in walked += 1; return true }
            #expect(try index.count(from: lower, to: upper) == walked, "\(String(describing: lower)) to \(String(describing: upper))")
        }
    }

    /// A torn last commit is dropped on open; the index is built from what recovery kept.
    @Test func indexMatchesWhatRecoveryKept() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("torn.store")
        let engine = try StorageEngine(path: path, configuration: fastConfiguration())
        try engine.defineIndexes([Self.byValue])
        var reference: [Int64: UInt8] = [:]
        for key in Int64(0)..<40 {
            var batch = WriteBatch()
            batch.put(type: "T", key: .integer(key), value: [UInt8(key * 7 % 256)])
            try engine.commit(batch)
            reference[key] = UInt8(key * 7 % 256)
        }
        let intactLength = try readFile(path).count
        var last = WriteBatch()
        last.put(type: "T", key: .integer(1000), value: [5])
        last.delete(type: "T", key: .integer(3))
        try engine.commit(last)
        try engine.close()
        // Tear the last commit: keep all but its final bytes.
        let bytes = try readFile(path)
        try writeFile(path, Array(bytes[..<(intactLength + (bytes.count - intactLength) / 2)]))

        let reopened = try StorageEngine(path: path, configuration: fastConfiguration())
        try reopened.defineIndexes([Self.byValue])
        #expect(try Self.entries(reopened.snapshot(), "T.value") == Self.expectedEntries(reference))
        // And it keeps following commits made after recovery.
        var batch = WriteBatch()
        batch.put(type: "T", key: .integer(2000), value: [21])
        try reopened.commit(batch)
        reference[2000] = 21
        #expect(try Self.entries(reopened.snapshot(), "T.value") == Self.expectedEntries(reference))
        try reopened.close()
    }

    @Test func concurrentCommitsKeepTheIndexExact() throws {
        let engine = StorageEngine(inMemoryWith: fastConfiguration())
        try engine.defineIndexes([Self.byValue])
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for step in 0..<50 {
                var batch = WriteBatch()
                let key = Int64(worker * 1000 + step % 10)
                batch.put(type: "T", key: .integer(key), value: [UInt8(step)])
                _ = try? engine.commit(batch)
            }
        }
        var reference: [Int64: UInt8] = [:]
        for worker in 0..<8 {
            for slot in 0..<10 { reference[Int64(worker * 1000 + slot)] = UInt8(40 + slot) }
        }
        #expect(try Self.entries(engine.snapshot(), "T.value") == Self.expectedEntries(reference))
    }

    @Test func uniqueViolationWritesNothing() throws {
        let engine = StorageEngine(inMemoryWith: fastConfiguration())
        try engine.defineIndexes([Self.uniqueValue])
        var first = WriteBatch()
        first.put(type: "U", key: .integer(1), value: [7])
        first.put(type: "U", key: .integer(2), value: [8])
        first.put(type: "U", key: .integer(3), value: [])
        first.put(type: "U", key: .integer(4), value: [])
        try engine.commit(first)
        let before = try StoreState(engine.snapshot())

        var clash = WriteBatch()
        clash.put(type: "U", key: .integer(5), value: [9])
        clash.put(type: "U", key: .integer(2), value: [7])
        #expect(throws: StorageError(.uniqueConstraint(index: "U.value", value: "7"))) { try engine.commit(clash) }
        #expect(try StoreState(engine.snapshot()) == before)
        #expect(try Self.entries(engine.snapshot(), "U.value").map(\.object) == [.integer(3), .integer(4), .integer(1), .integer(2)])

        var swap = WriteBatch()
        swap.put(type: "U", key: .integer(1), value: [8])
        swap.put(type: "U", key: .integer(2), value: [7])
        try engine.commit(swap)
        #expect(try Self.entries(engine.snapshot(), "U.value").map(\.key) == [.null, .null, .integer(7), .integer(8)])
        #expect(StorageError(.uniqueConstraint(index: "U.value", value: "7")).description
                == "Two objects would share the value 7 in the unique index U.value; nothing was written.")
    }

    /// A key a batch writes and then replaces or deletes is not a key the batch leaves behind:
    /// the unique check looks at what the batch ends with, not at what it passed through.
    @Test func uniqueCheckIgnoresValuesTheBatchReplaced() throws {
        let engine = StorageEngine(inMemoryWith: fastConfiguration())
        try engine.defineIndexes([Self.uniqueValue])
        var first = WriteBatch()
        for key in 1...40 { first.put(type: "U", key: .integer(Int64(key)), value: [UInt8(key)]) }
        try engine.commit(first)

        var rewritten = WriteBatch()
        rewritten.put(type: "U", key: .integer(100), value: [7])
        rewritten.put(type: "U", key: .integer(100), value: [200])
        rewritten.put(type: "U", key: .integer(101), value: [8])
        rewritten.delete(type: "U", key: .integer(101))
        try engine.commit(rewritten)
        let keys = try Self.entries(engine.snapshot(), "U.value").filter { $0.object == .integer(100) }.map(\.key)
        #expect(keys == [.integer(200)])

        var clash = WriteBatch()
        clash.put(type: "U", key: .integer(102), value: [9])
        clash.put(type: "U", key: .integer(102), value: [10])
        clash.put(type: "U", key: .integer(9), value: [201])
        #expect(throws: StorageError(.uniqueConstraint(index: "U.value", value: "10"))) { try engine.commit(clash) }
    }

    @Test func definingAUniqueIndexOverDuplicatesFails() throws {
        let engine = StorageEngine(inMemoryWith: fastConfiguration())
        var batch = WriteBatch()
        batch.put(type: "U", key: .integer(1), value: [3])
        batch.put(type: "U", key: .integer(2), value: [3])
        try engine.commit(batch)
        #expect(throws: StorageError(.uniqueConstraint(index: "U.value", value: "3"))) {
            try engine.defineIndexes([Self.uniqueValue])
        }
        #expect(engine.snapshot().index(named: "U.value") == nil)
    }

    @Test func indexKeysOrderAcrossKinds() {
        let keys: [IndexKey] = [.bytes([1]), .string("b"), .double(.nan), .unsigned(UInt64.max), .double(2.5),
                                .integer(-3), .bool(true), .bool(false), .null, .string("a")]
        #expect(keys.sorted() == [.null, .bool(false), .bool(true), .integer(-3), .double(2.5), .unsigned(UInt64.max),
                                  .double(.nan), .string("a"), .string("b"), .bytes([1])])
    }
}
