import Foundation
import Testing
import TestSupport
@_spi(Testing) @testable import MirrorStoreEngine

/// What a compaction and a migration's rewrite hold in memory at once (`Compaction.Held`, which
/// the engine counts; nothing here is timed or measured) is the same for a store four times as
/// large: the key table goes to runs `rewriteKeysInMemory` keys at a time (plus the keys of the
/// one unit just written), the old file is read in windows of that many locations, index
/// entries are gathered that many at a time, and index runs are merged at most
/// `RewriteIndexRuns.mergeWidth` at once, each entry at most twice. The states they write are
/// checked against a reference.
@Suite struct BoundedMemoryTests {
    static let bound = 16
    /// Values this long put about a thousand objects in one unit of `Compaction.chunkSize` bytes.
    static let valueLength = 1_000

    static func value(_ number: Int, _ generator: inout SeededRandom) -> [UInt8] {
        [UInt8(number & 0xFF), UInt8.random(in: 0...255, using: &generator)]
            + [UInt8](repeating: UInt8(number % 7), count: valueLength - 2)
    }

    /// The keys of one unit and the bound: what a rewrite may hold of one type at once.
    static var keysHeldAtMost: Int { bound + Compaction.chunkSize / valueLength + 1 }

    @Test func aCompactionHoldsAsMuchForAStoreFourTimesAsLarge() throws {
        var held: [Compaction.Held] = []
        for count in [1_500, 6_000] {
            let directory = TemporaryDirectory()
            let path = directory.file("compacted.store")
            var generator = SeededRandom(seed: SeededRandom.seed(default: 0xB0DE))
            let configuration = RewriteKeyRunTests.streaming(Self.bound)
            let engine = try StorageEngine(path: path, configuration: configuration)
            try engine.defineIndexes(PersistedIndexTests.definitions(PersistedIndexTests.Reads()))
            var reference: CheckpointTests.Reference = [:]
            // Shuffled keys, so that the old file's order is not the keys'.
            let keys = (0..<count).map { StorageKey.integer(Int64($0)) }.shuffled(using: &generator)
            for chunk in stride(from: 0, to: count, by: 500) {
                var batch = WriteBatch()
                for (offset, key) in keys[chunk..<min(count, chunk + 500)].enumerated() {
                    let value = Self.value(chunk + offset, &generator)
                    batch.put(type: "P", key: key, value: value)
                    reference["P", default: [:]][key] = value
                }
                try engine.commit(batch)
            }
            try engine.compact()
            held.append(engine.lastRewriteHeld)
            #expect(try StoreState(engine.snapshot()).objects == reference, "\(count) objects")
            try engine.close()
            #expect(try verifyStoreFile(at: path).isIntact, "\(count) objects")
            #expect(try PersistedIndexTests.openAndCheck(path, configuration, "\(count) objects, reopened").objects == reference)
        }
        for (count, one) in zip([1_500, 6_000], held) {
            #expect(one.placements == Self.bound, "\(count) objects: a window of the keys in memory")
            #expect(one.keys <= Self.keysHeldAtMost, "\(count) objects: \(one.keys) keys held")
        }
    }

    @Test func aMigrationHoldsAsMuchForAStoreFourTimesAsLarge() throws {
        var held: [Compaction.Held] = []
        for count in [1_500, 6_000] {
            let directory = TemporaryDirectory()
            let path = directory.file("migrated.store")
            var generator = SeededRandom(seed: SeededRandom.seed(default: 0x319A))
            let configuration = RewriteKeyRunTests.streaming(Self.bound)
            let engine = try StorageEngine(path: path, configuration: configuration)
            var reference: CheckpointTests.Reference = [:]
            let keys = (0..<count).map { StorageKey.integer(Int64($0) * 3) }.shuffled(using: &generator)
            try engine.rewrite(indexes: PersistedIndexTests.definitions(PersistedIndexTests.Reads())) { _, rewriter in
                for (number, key) in keys.enumerated() {
                    let value = Self.value(number, &generator)
                    try rewriter.put(type: "P", key: key, value: value)
                    reference["P", default: [:]][key] = value
                    try rewriter.put(type: "Q", key: .integer(Int64(number)), value: value)
                    reference["Q", default: [:]][.integer(Int64(number))] = value
                }
            }
            held.append(engine.lastRewriteHeld)
            try engine.close()
            #expect(try verifyStoreFile(at: path).isIntact, "\(count) objects")
            #expect(try PersistedIndexTests.openAndCheck(path, configuration, "\(count) objects, migrated").objects == reference)
        }
        // An object gives "P.some" up to four entries, so a run may take three past the bound.
        for (count, one) in zip([1_500, 6_000], held) {
            #expect(one.indexEntries >= Self.bound && one.indexEntries <= Self.bound + 3, "\(count) objects: \(one.indexEntries) entries")
            #expect(one.mergedRuns > 1 && one.mergedRuns <= RewriteIndexRuns.mergeWidth, "\(count) objects: \(one.mergedRuns) runs merged at once")
            // Merged once all runs are written, and only as many early as leave `mergeWidth`
            // for the last merge: no entry is merged more than twice, however many runs (here
            // more than `mergeWidth` at either size, so some entries are merged twice).
            #expect(one.mergedIndexEntries > one.builtIndexEntries, "\(count) objects")
            #expect(one.mergedIndexEntries <= 2 * one.builtIndexEntries, "\(count) objects: \(one.mergedIndexEntries) entries merged of \(one.builtIndexEntries)")
            #expect(one.keys <= 2 * Self.keysHeldAtMost, "\(count) objects: \(one.keys) keys held")
        }
    }

    /// A store of `count` objects of three types, written in commits of 100 with overwrites,
    /// deletions, a `deleteAll` and checkpoints between them.
    static func verifiedStore(_ path: String, count: Int, _ generator: inout SeededRandom) throws {
        let engine = try StorageEngine(path: path, configuration: CheckpointTests.checkpointing(64 << 10))
        let keys = (0..<count).map { StorageKey.integer(Int64($0)) }.shuffled(using: &generator)
        for chunk in stride(from: 0, to: count, by: 100) {
            var batch = WriteBatch()
            for key in keys[chunk..<min(count, chunk + 100)] {
                batch.put(type: "P", key: key, value: [UInt8](repeating: UInt8(chunk % 251), count: Int.random(in: 1...300, using: &generator)))
                if generator.chance(30) { batch.put(type: "S", key: .string("s\(Int.random(in: 0..<count, using: &generator))"), value: [1, 2]) }
                if generator.chance(10) { batch.delete(type: "P", key: generator.pick(keys)) }
                if generator.chance(10) { batch.delete(type: "S", key: .string("s\(Int.random(in: 0..<count, using: &generator))")) }
            }
            if chunk == count / 2 { batch.deleteAll(type: "S") }
            try engine.commit(batch)
        }
        try engine.close()
    }

    /// `verifyStoreFile` replays the whole log holding at most its bound of keys per type (plus
    /// one unit's), and reports what a replay holding every key reports: on stores four times
    /// apart in size, intact and with a byte changed.
    @Test func verifyHoldsAsMuchForAStoreFourTimesAsLarge() throws {
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x7E21F))
        for count in [1_500, 6_000] {
            let directory = TemporaryDirectory()
            let path = directory.file("verified.store")
            try Self.verifiedStore(path, count: count, &generator)
            for damaged in [false, true] {
                if damaged {
                    let file = FileLog(path: path, descriptor: FileSystem.open(path, flags: O_RDWR), faults: nil)
                    let offset = UInt64.random(in: 4_096..<(try file.size()), using: &generator)
                    try file.write([try file.read(at: offset, count: 1)[0] ^ 0x10], at: offset)
                }
                let bounded = try verifyStoreFile(at: path, encryption: nil, replayKeysInMemory: Self.bound)
                var whole = try verifyStoreFile(at: path, encryption: nil, replayKeysInMemory: .max)
                #expect(damaged || bounded.isIntact, "\(count) objects: \(bounded)")
                #expect(damaged || bounded.checkpointSequence != nil, "\(count) objects: a checkpoint to compare with: \(bounded.persistedRuns) runs")
                #expect(whole.replayKeysHeld > 500, "\(count) objects")
                #expect(bounded.replayKeysHeld <= Self.bound + 200, "\(count) objects: \(bounded.replayKeysHeld) keys held")
                whole.replayKeysHeld = bounded.replayKeysHeld
                #expect(bounded == whole, "\(count) objects, damaged: \(damaged)")
            }
        }
    }

    /// Keys put in order, many to a commit, make dense puts whose locations the store's key runs
    /// walk (format 4); the replay's runs in the scratch file must not walk, as the values they
    /// locate lie in the store, not in the scratch file.
    @Test func verifyOfKeysPutInOrderReadsTheStoresValues() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("ordered.store")
        let engine = try StorageEngine(path: path, configuration: CheckpointTests.checkpointing(64 << 10))
        for chunk in stride(from: 0, to: 20_000, by: 5_000) {
            var batch = WriteBatch()
            for key in chunk..<chunk + 5_000 {
                batch.put(type: "P", key: .integer(Int64(key)), value: [UInt8](repeating: UInt8(key % 251), count: 1 + key % 40))
            }
            try engine.commit(batch)
        }
        try engine.close()
        let bounded = try verifyStoreFile(at: path, encryption: nil, replayKeysInMemory: 1_000)
        var whole = try verifyStoreFile(at: path, encryption: nil, replayKeysInMemory: .max)
        #expect(bounded.isIntact, "\(bounded)")
        whole.replayKeysHeld = bounded.replayKeysHeld
        #expect(bounded == whole)
    }
}
