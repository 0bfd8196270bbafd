import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// The walked key-run layout of format 4 beside the packed one format 3 keeps writing: the same
/// commits (dense and stepped runs of puts, updates spread over many commits, deletions, other
/// kinds of keys) read the same through checkpoints, merges, replays and compaction, key by key
/// and in passes; a damaged file reads each value as written or throws.
@Suite struct WalkedLayoutTests {
    static func configuration(_ mode: EngineConfiguration.RecoveryMode = .strict) -> EngineConfiguration {
        CheckpointTests.checkpointing(24 << 10, mode)
    }

    /// A commit of runs of new keys counting up, keys with gaps, updates and deletions of keys
    /// written before, now and then a string key; values short, and some past 127 bytes.
    static func randomBatch(_ generator: inout SeededRandom, next: inout Int64, written: [Int64]) -> WriteBatch {
        var batch = WriteBatch()
        func value() -> [UInt8] {
            let length = generator.chance(8) ? Int.random(in: 128...600, using: &generator) : Int.random(in: 0...60, using: &generator)
            return (0..<length).map { _ in generator.integer(UInt8.self) }
        }
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            switch Int.random(in: 0..<100, using: &generator) {
            case 0..<40:
                for _ in 0..<Int.random(in: 1...400, using: &generator) {
                    batch.put(type: "P", key: .integer(next), value: value())
                    next += 1
                }
            case 40..<60:
                for _ in 0..<Int.random(in: 1...120, using: &generator) {
                    next += Int64.random(in: 2...70, using: &generator)
                    batch.put(type: "P", key: .integer(next), value: value())
                }
                next += 1
            case 60..<85 where !written.isEmpty:
                for _ in 0..<Int.random(in: 1...60, using: &generator) {
                    batch.put(type: "P", key: .integer(generator.pick(written)), value: value())
                }
            case 85..<95 where !written.isEmpty:
                for _ in 0..<Int.random(in: 1...20, using: &generator) { batch.delete(type: "P", key: .integer(generator.pick(written))) }
            default:
                batch.put(type: generator.chance(50) ? "P" : "Q", key: .string("k\(Int.random(in: 0..<30, using: &generator))"), value: value())
            }
        }
        return batch
    }

    /// Every object read key by key: each value as `state` holds it, or a `StorageError`.
    static func lookUpEach(_ snapshot: EngineSnapshot, _ state: StoreState) -> (read: Int, failed: Int, wrong: [String]) {
        var read = 0
        var failed = 0
        var wrong: [String] = []
        for (type, objects) in state.objects.sorted(by: { $0.key < $1.key }) {
            for (key, value) in objects {
                do {
                    let found = try snapshot.value(type: type, key: key)
                    if found == value { read += 1 } else { wrong.append("\(type) \(key)") }
                } catch is StorageError {
                    failed += 1
                } catch {
                    wrong.append("\(type) \(key): \(error)")
                }
            }
        }
        return (read, failed, wrong)
    }

    /// Whether any key-run block of the plain log `bytes` takes the walked layout.
    static func holdsWalkedBlocks(_ bytes: [UInt8]) -> Bool {
        PlainLogUnits.keyRunBlockLayouts(of: bytes).contains(RunBlockReader.walkedLayout)
    }

    /// The same random commits to a store of format 3 and one of format 4: the same objects after
    /// every commit, by pass and by lookup, and after reopening from checkpoints or by replays;
    /// the format-3 file holds no walked block, the format-4 one does; compaction keeps them alike.
    @Test(arguments: 0..<6) func walkedAndPackedStoresReadTheSame(seed: Int) throws {
        var generator = SeededRandom(seed: UInt64(seed) &+ 0x3A1E)
        let directory = TemporaryDirectory()
        let older = directory.file("format3.store")
        let newer = directory.file("format4.store")
        try writeFile(older, LogHeader(version: 3).encoded())
        let engines = [
            try StorageEngine(path: older, configuration: Self.configuration()), try StorageEngine(path: newer, configuration: Self.configuration()),
        ]
        #expect(engines.map(\.statistics.formatVersion) == [3, LogHeader.currentVersion])
        var next: Int64 = Int64.random(in: -50...50, using: &generator)
        var written: [Int64] = []
        for round in 0..<Int.random(in: 25...45, using: &generator) {
            let batch = Self.randomBatch(&generator, next: &next, written: written)
            for case .put(_, .integer(let key), _) in batch.operations { written.append(key) }
            for engine in engines { try engine.commit(batch) }
            if round % 5 == 0 {
                let states = try engines.map { try StoreState($0.snapshot()) }
                #expect(states[0] == states[1])
                for engine in engines { #expect(Self.lookUpEach(engine.snapshot(), states[1]).wrong.isEmpty) }
            }
        }
        #expect(engines.allSatisfy { $0.statistics.checkpoints > 1 })
        let expected = try StoreState(engines[1].snapshot())
        #expect(try StoreState(engines[0].snapshot()) == expected)
        for engine in engines { try engine.close() }
        let bytes = try [older, newer].map(readFile)
        #expect(!Self.holdsWalkedBlocks(bytes[0]))
        #expect(Self.holdsWalkedBlocks(bytes[1]))
        #expect(bytes[0][8] == 3 && UInt32(bytes[1][8]) == LogHeader.currentVersion)
        for path in [older, newer] {
            for mode in [EngineConfiguration.RecoveryMode.strict, .recoverValidPrefix] {
                let engine = try StorageEngine(path: path, configuration: Self.configuration(mode))
                #expect(try StoreState(engine.snapshot()) == expected)
                let looked = Self.lookUpEach(engine.snapshot(), expected)
                #expect(looked.wrong.isEmpty && looked.failed == 0)
                try engine.close()
            }
            #expect(try verifyStoreFile(at: path).isIntact)
            let engine = try StorageEngine(path: path, configuration: Self.configuration())
            try engine.compact()
            #expect(try StoreState(engine.snapshot()) == expected)
            try engine.close()
            #expect(try openState(path, Self.configuration()) == expected)
            #expect(Self.lookUpEach(try StorageEngine(path: path, configuration: Self.configuration()).snapshot(), expected).wrong.isEmpty)
        }
    }

    /// A store of dense runs, its key runs walked, with one bit flipped anywhere after the header
    /// region: opened strictly, each object read by its key is the value written or a
    /// `StorageError`, never another value, also where the flip hit a length a walk reads.
    @Test func aDamagedWalkedStoreReadsEachValueOrThrows() throws {
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x3A1F))
        let directory = TemporaryDirectory()
        let path = directory.file("walked.store")
        let engine = try StorageEngine(path: path, configuration: Self.configuration())
        var next: Int64 = 1
        var written: [Int64] = []
        for _ in 0..<12 {
            let batch = Self.randomBatch(&generator, next: &next, written: written)
            for case .put(_, .integer(let key), _) in batch.operations { written.append(key) }
            try engine.commit(batch)
        }
        let expected = try StoreState(engine.snapshot())
        try engine.close()
        let bytes = try readFile(path)
        #expect(Self.holdsWalkedBlocks(bytes))
        let damagedPath = directory.file("damaged.store")
        var outcomes: [String: Int] = [:]
        for round in 0..<60 {
            var damaged = bytes
            let at = flipRandomBit(of: &damaged, from: LogHeader.regionSize, using: &generator)
            try replaceStore(at: damagedPath, with: damaged)
            let opened: StorageEngine
            do {
                opened = try StorageEngine(path: damagedPath, configuration: Self.configuration())
            } catch is StorageError {
                outcomes["refused", default: 0] += 1
                continue
            }
            let looked = Self.lookUpEach(opened.snapshot(), expected)
            #expect(looked.wrong.isEmpty, "round \(round), flip at \(at): \(looked.wrong.prefix(5))")
            outcomes[looked.failed > 0 ? "some reads failed" : "all read", default: 0] += 1
            try opened.close()
        }
        #expect((outcomes["some reads failed"] ?? 0) > 0, "\(outcomes)")
    }

    /// A length a walk reads, in a region of the log before the region of the value it leads to,
    /// flipped: the lookup of that value checks the region it walked through and throws, where
    /// the value's own region alone would have let a wrong location through.
    @Test func aWalkThroughADamagedRegionThrows() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("walked.store")
        let engine = try StorageEngine(path: path, configuration: Self.configuration())
        var batch = WriteBatch()
        // Zeros, so that a walk misled by a length one too long still decodes: into the next
        // value, as an empty one.
        for key in 0..<3_000 { batch.put(type: "P", key: .integer(Int64(key)), value: Array(repeating: 0, count: 100)) }
        try engine.commit(batch)
        try engine.close()
        let opened = try StorageEngine(path: path, configuration: Self.configuration())
        let objects = try #require(opened.snapshot().index.types["P"])
        let run = try #require(objects.runs.first)
        #expect(objects.memoryCount == 0 && objects.runs.count == 1)
        let locations = try (0..<3_000).map { try #require(try objects.location(for: .integer(Int64($0)))) >> 24 }
        try opened.close()
        // The first entry of each block restarts, and every `interval`-th after it.
        var restarts: [Int] = []
        var first = 0
        for count in run.blockCounts {
            for index in 0..<Int(count) { restarts.append(first + index / WalkedIntegerBlock.interval * WalkedIntegerBlock.interval) }
            first += Int(count)
        }
        let start = LogHeader().unitsStart
        func region(_ offset: UInt64) -> UInt64 { (offset - start) / CoveredRegions.size }
        // An entry whose value lies in a later region than the length of the follower before it.
        let wanted = try #require((0..<3_000).first { index in
            restarts[index] < index - 1 && region(locations[index - 1] - 1) < region(locations[index])
        })
        let flipped = Int(locations[wanted - 1] - 1)
        var bytes = try readFile(path)
        #expect(bytes[flipped] == 100)
        bytes[flipped] ^= 1
        try writeFile(path, bytes)
        let damaged = try StorageEngine(path: path, configuration: Self.configuration())
        defer { try? damaged.close() }
        let error = try #require(throws: StorageError.self) { try damaged.snapshot().value(type: "P", key: .integer(Int64(wanted))) }
        guard case .corrupted = error.kind else {
            Issue.record("\(error)")
            return
        }
    }

    /// A file of format 3 (`Fixtures/customers-v3.store`, written at 8164e1d by the format-3
    /// writers, which are those of b8cd116: 1,000 customers in one commit, then a stepped run,
    /// updates and a deletion, and a checkpoint at close whose key run is in the packed layout)
    /// reads as it did, from its checkpoint and by a replay, goes on being written in format 3
    /// without walked blocks, and takes them at its compaction.
    @Test func aFileOfFormat3ReadsAndIsWrittenAsBefore() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/customers-v3.store")
        let original = Array(try Data(contentsOf: fixture))
        #expect(original[8] == 3)
        #expect(PackedEncodingTests.holdsPackedEncodings(original))
        #expect(!Self.holdsWalkedBlocks(original))
        let directory = TemporaryDirectory()
        let path = directory.file("customers.store")
        try writeFile(path, original)
        var expected = try openState(path, Self.configuration())
        #expect(try openState(path, Self.configuration(.recoverValidPrefix)) == expected)
        var customers: [StorageKey: [UInt8]] = [:]
        for key in 1...1_000 { customers[.integer(Int64(key))] = Array("customer \(key)".utf8) }
        for key in stride(from: 2_000, to: 2_600, by: 3) { customers[.integer(Int64(key))] = Array("customer \(key)".utf8) }
        for key in stride(from: 10, to: 1_000, by: 97) { customers[.integer(Int64(key))] = Array("updated \(key)".utf8) }
        customers[.integer(500)] = nil
        #expect(expected.objects == ["Customer": customers])

        let engine = try StorageEngine(path: path, configuration: Self.configuration())
        #expect(engine.statistics.formatVersion == 3)
        #expect(Self.lookUpEach(engine.snapshot(), expected).read == customers.count)
        var batch = WriteBatch()
        for key in 3_000..<6_000 { batch.put(type: "Customer", key: .integer(Int64(key)), value: Array("customer \(key)".utf8)) }
        try engine.commit(batch)
        #expect(engine.statistics.checkpoints > 0)
        for key in 3_000..<6_000 { expected.objects["Customer"]?[.integer(Int64(key))] = Array("customer \(key)".utf8) }
        expected.sequence += 1
        #expect(try StoreState(engine.snapshot()) == expected)
        try engine.close()
        let written = try readFile(path)
        #expect(written[8] == 3)
        #expect(!Self.holdsWalkedBlocks(written))
        #expect(try openState(path, Self.configuration()) == expected)
        #expect(try openState(path, Self.configuration(.recoverValidPrefix)) == expected)

        let compacting = try StorageEngine(path: path, configuration: Self.configuration())
        try compacting.compact()
        #expect(compacting.statistics.formatVersion == LogHeader.currentVersion)
        try compacting.close()
        let compacted = try readFile(path)
        #expect(UInt32(compacted[8]) == LogHeader.currentVersion)
        #expect(Self.holdsWalkedBlocks(compacted))
        #expect(try openState(path, Self.configuration()) == expected)
        let reopened = try StorageEngine(path: path, configuration: Self.configuration())
        #expect(Self.lookUpEach(reopened.snapshot(), expected).read == expected.objects["Customer"]?.count)
        try reopened.close()
    }
}
