import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// The packed byte-string key-run layout of format 6 (byte-string keys of one length, as UUIDs
/// are) beside the general layout format 5 keeps writing: random operations against a reference,
/// the same commits to both formats, a file of format 5 written as before, and damaged files
/// (cut at every byte, bits flipped) that give a committed state or a typed error.
@Suite struct PackedByteKeyTests {
    /// A UUID-like key: 16 bytes, from a pool small enough that keys repeat, most sharing their
    /// first bytes with others; now and then a key of another length or kind, so that blocks mix.
    static func key(_ generator: inout SeededRandom) -> StorageKey {
        switch Int.random(in: 0..<20, using: &generator) {
        case 0: .integer(Int64.random(in: -20...20, using: &generator))
        case 1: .bytes((0..<Int.random(in: 1...20, using: &generator)).map { _ in UInt8.random(in: 0...2, using: &generator) })
        default: .bytes(uuid(Int.random(in: 0..<600, using: &generator)))
        }
    }

    /// Key number `number` of the pool: its first byte one of three, so that blocks share prefixes.
    static func uuid(_ number: Int) -> [UInt8] {
        var generator = SeededRandom(seed: UInt64(number) &+ 0x0BD1)
        return [UInt8(number % 3)] + (0..<15).map { _ in generator.integer(UInt8.self) }
    }

    /// Whether any key-run block of the plain log `bytes` takes the packed byte-string layout.
    static func holdsPackedByteBlocks(_ bytes: [UInt8]) -> Bool {
        PlainLogUnits.keyRunBlockLayouts(of: bytes).contains(RunBlockReader.packedBytesLayout)
    }

    @Test(arguments: [(UInt64(0xB7E5), false), (0xB7E6, false), (0xB7E7, true)])
    func randomOperationsAgreeWithAReference(seed: UInt64, encrypted: Bool) throws {
        var generator = SeededRandom(seed: SeededRandom.seed(default: seed))
        let directory = TemporaryDirectory()
        let path = directory.file("model.store")
        var configuration = encrypting(CheckpointTests.checkpointing(Int.random(in: 256...2_000, using: &generator)), encrypted)
        var engine = try StorageEngine(path: path, configuration: configuration)
        var reference: CheckpointTests.Reference = [:]
        for step in 0..<300 {
            var batch = CheckpointTests.randomBatch(&generator, applyingTo: &reference, deletesBelow: 90, key: Self.key)
            if step % 25 == 0 {
                // Many keys at once, so that runs span several blocks.
                for _ in 0..<400 {
                    let key = StorageKey.bytes(Self.uuid(Int.random(in: 600..<20_000, using: &generator)))
                    let value = CheckpointTests.value(&generator)
                    batch.put(type: "P", key: key, value: value)
                    reference["P", default: [:]][key] = value
                }
            }
            try engine.commit(batch)
            #expect(engine.statistics.lastCheckpointError == nil)
            if step % 10 == 0 { try CheckpointTests.check(engine, reference, "seed \(seed), step \(step)") }
            if generator.chance(5) {
                try engine.close()
                configuration.checkpointInterval = Int.random(in: 256...2_000, using: &generator)
                engine = try StorageEngine(path: path, configuration: configuration)
                try CheckpointTests.check(engine, reference, "seed \(seed), step \(step), reopened")
            }
            if generator.chance(2) {
                try engine.compact()
                try CheckpointTests.check(engine, reference, "seed \(seed), step \(step), compacted")
            }
        }
        try engine.close()
        if !encrypted { #expect(Self.holdsPackedByteBlocks(try readFile(path))) }
        try CheckpointTests.checkClosed(at: path, configuration, encrypted: encrypted, reference, "seed \(seed)")
    }

    /// The same random commits to a store of format 5 and one of format 6: the same objects after
    /// every few commits and after reopening; only the format-6 file holds packed byte-string
    /// blocks, and it is smaller.
    @Test(arguments: 0..<3) func storesOfBothFormatsReadTheSame(seed: Int) throws {
        var generator = SeededRandom(seed: UInt64(seed) &+ 0xB7E8)
        let directory = TemporaryDirectory()
        let older = directory.file("format5.store")
        let newer = directory.file("format6.store")
        try writeFile(older, LogHeader(version: 5).encoded())
        let configuration = CheckpointTests.checkpointing(8 << 10)
        let engines = [try StorageEngine(path: older, configuration: configuration), try StorageEngine(path: newer, configuration: configuration)]
        #expect(engines.map(\.statistics.formatVersion) == [5, LogHeader.currentVersion])
        for round in 0..<20 {
            var batch = WriteBatch()
            for _ in 0..<300 { batch.put(type: "P", key: .bytes(Self.uuid(Int.random(in: 0..<50_000, using: &generator))), value: CheckpointTests.value(&generator)) }
            for _ in 0..<10 { batch.delete(type: "P", key: .bytes(Self.uuid(Int.random(in: 0..<50_000, using: &generator)))) }
            for engine in engines { try engine.commit(batch) }
            if round % 5 == 4 {
                let states = try engines.map { try StoreState($0.snapshot()) }
                #expect(states[0] == states[1])
            }
        }
        let expected = try StoreState(engines[1].snapshot())
        for engine in engines { try engine.close() }
        let bytes = try [older, newer].map(readFile)
        #expect(!Self.holdsPackedByteBlocks(bytes[0]) && Self.holdsPackedByteBlocks(bytes[1]))
        #expect(bytes[0][8] == 5 && UInt32(bytes[1][8]) == LogHeader.currentVersion)
        #expect(bytes[1].count < bytes[0].count)
        for path in [older, newer] {
            for mode in [EngineConfiguration.RecoveryMode.strict, .recoverValidPrefix] {
                #expect(try openState(path, CheckpointTests.checkpointing(8 << 10, mode)) == expected)
            }
            let looked = WalkedLayoutTests.lookUpEach(try StorageEngine(path: path, configuration: configuration).snapshot(), expected)
            #expect(looked.wrong.isEmpty && looked.failed == 0)
            #expect(try verifyStoreFile(at: path).isIntact)
        }
    }

    /// A file of format 5 goes on being written in format 5, without packed byte-string blocks,
    /// until a compaction makes it format 6 and writes them.
    @Test func aFileOfFormat5IsWrittenAsBeforeUntilCompaction() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("older.store")
        try writeFile(path, LogHeader(version: 5).encoded())
        let configuration = CheckpointTests.checkpointing(4 << 10)
        var engine = try StorageEngine(path: path, configuration: configuration)
        var batch = WriteBatch()
        for number in 0..<2_000 { batch.put(type: "P", key: .bytes(Self.uuid(number)), value: Array("value \(number)".utf8)) }
        try engine.commit(batch)
        try engine.close()
        engine = try StorageEngine(path: path, configuration: configuration)
        #expect(engine.statistics.formatVersion == 5)
        batch = WriteBatch()
        for number in 2_000..<3_000 { batch.put(type: "P", key: .bytes(Self.uuid(number)), value: Array("value \(number)".utf8)) }
        try engine.commit(batch)
        let expected = try StoreState(engine.snapshot())
        try engine.close()
        let written = try readFile(path)
        #expect(written[8] == 5 && !Self.holdsPackedByteBlocks(written))
        #expect(try openState(path, configuration) == expected)

        engine = try StorageEngine(path: path, configuration: configuration)
        try engine.compact()
        #expect(engine.statistics.formatVersion == LogHeader.currentVersion)
        try engine.close()
        let compacted = try readFile(path)
        #expect(UInt32(compacted[8]) == LogHeader.currentVersion && Self.holdsPackedByteBlocks(compacted))
        #expect(try openState(path, configuration) == expected)
        #expect(try openState(path, CheckpointTests.checkpointing(4 << 10, .recoverValidPrefix)) == expected)
    }

    /// A small store of UUID keys with checkpoints and runs, recorded commit by commit.
    static func record(at path: String, commits: Int, seed: UInt64) throws -> RecordedCommits {
        var generator = SeededRandom(seed: seed)
        let engine = try StorageEngine(path: path, configuration: CheckpointTests.checkpointing(300))
        var recorded = try RecordedCommits(startingFrom: engine)
        for _ in 1...commits {
            var batch = WriteBatch()
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                if generator.chance(15), let key = generator.pick(from: recorded.states.last?.objects["P"]?.keys ?? [:].keys, by: StorageKey.precedes) {
                    batch.delete(type: "P", key: key)
                } else {
                    batch.put(type: "P", key: .bytes(uuid(Int.random(in: 0..<40, using: &generator))), value: CheckpointTests.value(&generator))
                }
            }
            try recorded.commit(batch, to: engine, at: path)
        }
        #expect(engine.statistics.checkpoints > 3)
        try engine.close()
        try recorded.finish(readingFrom: path)
        #expect(holdsPackedByteBlocks(recorded.bytes))
        return recorded
    }

    @Test func truncationAtEveryOffsetGivesACommittedPrefix() throws {
        let directory = TemporaryDirectory()
        let recorded = try Self.record(at: directory.file("source.store"), commits: 14, seed: 0xB7E9)
        let path = directory.file("cut.store")
        let unitsStart = Int(LogHeader().unitsStart)
        let lengths = Array(stride(from: 0, to: unitsStart, by: 61)) + Array(unitsStart...recorded.bytes.count)
        for length in lengths {
            try replaceStore(at: path, with: Array(recorded.bytes[0..<length]))
            let expected = recorded.state(upTo: length)
            let engine = try StorageEngine(path: path, configuration: CheckpointTests.checkpointing(300))
            let state = try StoreState(engine.snapshot())
            #expect(state == expected.state, "cut at \(length)")
            #expect(WalkedLayoutTests.lookUpEach(engine.snapshot(), expected.state).wrong.isEmpty, "cut at \(length)")
            try engine.close()
        }
    }

    @Test func bitFlipsGiveACommittedStateOrATypedError() throws {
        let directory = TemporaryDirectory()
        let recorded = try Self.record(at: directory.file("source.store"), commits: 30, seed: 0xB7EA)
        let path = directory.file("flipped.store")
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0xB7EB))
        var outcomes: [String: Int] = [:]
        let layouts = PlainLogUnits.keyRunBlocks(of: recorded.bytes).filter { $0.layout == RunBlockReader.packedBytesLayout }
        #expect(!layouts.isEmpty)
        for round in 0..<400 {
            var damaged = recorded.bytes
            // Half the flips in packed byte-string blocks.
            let at = if round % 2 == 0 {
                Int.random(in: generator.pick(layouts).range, using: &generator)
            } else {
                Int.random(in: Int(LogHeader().unitsStart)..<damaged.count, using: &generator)
            }
            flipRandomBit(of: &damaged, at: at, using: &generator)
            try recorded.expectCommittedStateOrTypedError(
                opening: damaged, flippedAt: at, as: path, configuration: { CheckpointTests.checkpointing(300, $0) },
                "round \(round)", outcomes: &outcomes)
            // Lookups by key agree with the pass that read the state, or throw.
            try replaceStore(at: path, with: damaged)
            guard let engine = try? StorageEngine(path: path, configuration: CheckpointTests.checkpointing(300)) else { continue }
            if let state = try? StoreState(engine.snapshot()) {
                #expect(WalkedLayoutTests.lookUpEach(engine.snapshot(), state).wrong.isEmpty, "round \(round), flip at \(at)")
            }
            try? engine.close()
        }
        #expect((outcomes["typed error"] ?? 0) > 0 && (outcomes["prefix"] ?? 0) > 0, "\(outcomes)")
    }
}
