import Foundation
import Testing
import TestSupport
@_spi(Testing) @testable import MirrorStoreEngine

/// The key runs that merges replace are dead bytes of an append-only log. A compaction whose key
/// table goes to runs writes each window of keys at its end, so that whatever order the keys had
/// in the old file it writes them once, in one run, and leaves no run behind (and writes a
/// window's values in key order, so that a run's block spans few bytes of the log); and checkpoints
/// whose merges of keys in random order leave replaced runs behind start an automatic compaction
/// once those pass an eighth of the file (`Compaction.supersededIndexShare`), while keys that
/// count up, whose runs are listed as they lie, start none. Each state is checked against a
/// reference, reopened and verified.
@Suite struct SupersededRunTests {
    enum Order: CaseIterable {
        case randomBytes, shuffledStrings, shuffledIntegers, shuffledMixed
    }

    static func keys(_ order: Order, count: Int, _ generator: inout SeededRandom) -> [StorageKey] {
        switch order {
        case .randomBytes:
            return (0..<count).map { _ in .bytes((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }) }
        case .shuffledStrings:
            return (0..<count).map { StorageKey.string("user \($0 * 7_919 % 100_003) é") }.shuffled(using: &generator)
        case .shuffledIntegers:
            return (0..<count).map { StorageKey.integer(Int64($0) * 13 - 500) }.shuffled(using: &generator)
        case .shuffledMixed:
            return RewriteKeyRunTests.keys(.shuffledMixed, count: count, &generator)
        }
    }

    /// Commits `keys` in batches of `batch`, each with a random value of 8 to 40 bytes and
    /// `padding` more, into `engine` and `reference`.
    static func load(
        _ keys: [StorageKey], batch: Int, padding: Int = 0, into engine: StorageEngine, _ reference: inout CheckpointTests.Reference,
        _ generator: inout SeededRandom
    ) throws {
        for start in stride(from: 0, to: keys.count, by: batch) {
            var commit = WriteBatch()
            for key in keys[start..<min(keys.count, start + batch)] {
                let value = (0..<Int.random(in: 8...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                    + [UInt8](repeating: UInt8(start & 0xFF), count: padding)
                commit.put(type: "P", key: key, value: value)
                reference["P", default: [:]][key] = value
            }
            try engine.commit(commit)
        }
    }

    /// Dead bytes after loading `keys` in batches (a checkpoint after each) and compacting with
    /// `keysInMemory` keys per type in memory; checks the state, reopened and verified.
    static func compactedDeadBytes(_ keys: [StorageKey], keysInMemory: Int, seed: UInt64, _ label: String) throws -> UInt64 {
        let directory = TemporaryDirectory()
        let path = directory.file("compacted.store")
        var generator = SeededRandom(seed: seed)
        let configuration = RewriteKeyRunTests.streaming(keysInMemory)
        var checkpointing = configuration
        checkpointing.checkpointInterval = 1
        let engine = try StorageEngine(path: path, configuration: checkpointing)
        var reference: CheckpointTests.Reference = [:]
        // Values of about a kilobyte: a unit of `Compaction.chunkSize` ends in the middle of a window.
        try load(keys, batch: 500, padding: 1_000, into: engine, &reference, &generator)
        try engine.compact()
        let statistics = engine.statistics
        #expect(statistics.persistedRuns == 1, "\(label): one run")
        #expect(try StoreState(engine.snapshot()).objects == reference, "\(label)")
        try engine.close()
        #expect(try verifyStoreFile(at: path).isIntact, "\(label)")
        #expect(try openState(path, configuration).objects == reference, "\(label), reopened")
        return statistics.deadBytes
    }

    @Test(arguments: Order.allCases)
    func aCompactionWritesKeysInAnyOrderOnceInOneRun(order: Order) throws {
        let seed = SeededRandom.seed(default: 0x5C0D)
        var generator = SeededRandom(seed: seed)
        let keys = Self.keys(order, count: 3_000, &generator)
        let windows = UInt64(keys.count / 16 + 1)
        let streamed = try Self.compactedDeadBytes(keys, keysInMemory: 16, seed: seed, "\(order), 16 keys in memory")
        let inMemory = try Self.compactedDeadBytes(keys, keysInMemory: 1 << 16, seed: seed, "\(order), every key in memory")
        // A window's end closes a unit: its frame, nothing more (a merge would leave a run of
        // about 20 bytes an entry behind).
        #expect(streamed <= inMemory + windows * UInt64(LogFrame.headerSize + 8), "\(order): \(streamed) dead bytes against \(inMemory)")
    }

    @Test(arguments: [Order.randomBytes, .shuffledMixed])
    func aCompactionWritesValuesInKeyOrder(order: Order) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("ordered.store")
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x0DE5))
        var configuration = RewriteKeyRunTests.streaming(16)
        configuration.checkpointInterval = 1
        let engine = try StorageEngine(path: path, configuration: configuration)
        var reference: CheckpointTests.Reference = [:]
        try Self.load(Self.keys(order, count: 1_000, &generator), batch: 100, into: engine, &reference, &generator)
        try engine.compact()
        let snapshot = engine.snapshot()
        let keys = reference["P", default: [:]].keys.sorted(by: StorageKey.precedes)
        let offsets = try keys.map { try snapshot.index.location(type: "P", key: $0)?.offset ?? 0 }
        #expect(offsets.allSatisfy { $0 > 0 })
        #expect(zip(offsets, offsets.dropFirst()).allSatisfy { $0 < $1 }, "\(order): values in key order")
        #expect(try StoreState(snapshot).objects == reference)
        try engine.close()
        #expect(try verifyStoreFile(at: path).isIntact)
    }

    /// An engine that compacts only for the runs its checkpoints replace: the dead-byte share
    /// of 0.95 is never reached here.
    static func compactingForReplacedRuns() -> EngineConfiguration {
        var configuration = EngineConfiguration(durability: .none, autoCompaction: .whenDeadBytesExceed(ratio: 0.95, minimumFileSize: 0))
        configuration.checkpointInterval = 1
        return configuration
    }

    @Test(arguments: [Order.randomBytes, .shuffledStrings])
    func mergesOfKeysInRandomOrderStartACompaction(order: Order) throws {
        let directory = TemporaryDirectory()
        var sizes: [UInt64] = []
        for compacting in [false, true] {
            let path = directory.file("\(compacting).store")
            var generator = SeededRandom(seed: SeededRandom.seed(default: 0x5E9E))
            var configuration = Self.compactingForReplacedRuns()
            if !compacting { configuration.autoCompaction = .disabled }
            let engine = try StorageEngine(path: path, configuration: configuration)
            var reference: CheckpointTests.Reference = [:]
            try Self.load(Self.keys(order, count: 3_000, &generator), batch: 150, into: engine, &reference, &generator)
            let statistics = engine.statistics
            #expect((statistics.compactions > 0) == compacting, "\(order), compacting \(compacting): \(statistics.compactions)")
            #expect(statistics.lastAutoCompactionError == nil)
            #expect(try StoreState(engine.snapshot()).objects == reference)
            sizes.append(statistics.fileSize)
            try engine.close()
            #expect(try verifyStoreFile(at: path).isIntact)
            #expect(try openState(path, fastConfiguration()).objects == reference, "\(order), compacting \(compacting), reopened")
        }
        // Runs replaced since the last compaction stay below an eighth of the file.
        #expect(Double(sizes[1]) < Double(sizes[0]) * 0.9, "\(order): \(sizes[1]) bytes against \(sizes[0]) without compaction")
    }

    @Test func keysThatCountUpStartNoCompaction() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("ascending.store")
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0xA5C0))
        let engine = try StorageEngine(path: path, configuration: Self.compactingForReplacedRuns())
        var reference: CheckpointTests.Reference = [:]
        try Self.load((0..<3_000).map { StorageKey.integer(Int64($0)) }, batch: 150, into: engine, &reference, &generator)
        #expect(engine.statistics.compactions == 0)
        #expect(engine.statistics.checkpoints >= 20)
        #expect(try StoreState(engine.snapshot()).objects == reference)
        try engine.close()
        #expect(try openState(path, fastConfiguration()).objects == reference)
    }
}
