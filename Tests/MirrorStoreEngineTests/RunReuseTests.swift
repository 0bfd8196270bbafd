import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// A checkpoint's merge of key runs that do not overlap the new entries lists the older runs'
/// blocks as they lie rather than writing them again (`Checkpoint.reusable`, docs/FILE_FORMAT.md,
/// "Key runs"): keys that count up are written once, and every read agrees with a reference.
@Suite struct RunReuseTests {
    /// The bytes of the file's key-run units (index units of kind 1), frames included.
    static func keyRunUnitBytes(at path: String) throws -> Int {
        PlainLogUnits.units(of: try readFile(path))
            .filter { $0.indexKind == IndexUnit.Kind.keyRun.rawValue }
            .reduce(0) { $0 + $1.size }
    }

    /// Batches of keys counting up, each followed by a checkpoint: every key-run unit the file
    /// holds belongs to a run in force, so no entry was written twice.
    @Test func appendedBatchesWriteEachEntryOnce() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("append.store")
        let engine = try StorageEngine(path: path, configuration: CheckpointTests.checkpointing(1_024))
        var key: Int64 = 0
        for round in 0..<12 {
            var batch = WriteBatch()
            // Dense keys (walked blocks), then keys two apart (packed blocks).
            let step: Int64 = round % 3 == 2 ? 2 : 1
            for _ in 0..<2_000 {
                key += step
                batch.put(type: "P", key: .integer(key), value: Array(repeating: UInt8(truncatingIfNeeded: key), count: 20))
            }
            try engine.commit(batch)
        }
        #expect(engine.statistics.checkpoints >= 12)
        let runs = try #require(engine.snapshot().index.types["P"]?.runs)
        #expect(runs.reduce(0) { $0 + $1.entryCount } == 24_000, "no key lies in two runs")
        let live = runs.reduce(0) { $0 + $1.byteCount }
        try engine.close()
        #expect(try Self.keyRunUnitBytes(at: path) == live, "every key-run unit is in a run in force")
        let report = try verifyStoreFile(at: path)
        #expect(report.isIntact, "\(report)")
        let reopened = try StorageEngine(path: path, configuration: CheckpointTests.checkpointing(1_024))
        #expect(try reopened.snapshot().value(type: "P", key: .integer(1)) == Array(repeating: 1, count: 20))
        #expect(try reopened.snapshot().value(type: "P", key: .integer(key)) == Array(repeating: UInt8(truncatingIfNeeded: key), count: 20))
        #expect(try reopened.snapshot().value(type: "P", key: .integer(key + 1)) == nil)
        try reopened.close()
    }

    /// Bit flips in a store whose runs list blocks of several checkpoints, half of them in those
    /// blocks: each reopening gives a state some commit made (the last one, or one that ends
    /// before the flip) or a typed error, never another state.
    @Test func bitFlipsInReusedBlocksGiveACommittedStateOrATypedError() throws {
        let directory = TemporaryDirectory()
        let source = directory.file("source.store")
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x5EED))
        let engine = try StorageEngine(path: source, configuration: CheckpointTests.checkpointing(150))
        var recorded = try RecordedCommits(startingFrom: engine)
        var key: Int64 = 0
        for _ in 0..<30 {
            var batch = WriteBatch()
            let step: Int64 = generator.chance(30) ? 3 : 1
            for _ in 0..<Int.random(in: 1...40, using: &generator) {
                key += step
                batch.put(type: "P", key: .integer(key), value: CheckpointTests.value(&generator))
            }
            try recorded.commit(batch, to: engine, at: source)
        }
        let runs = try #require(engine.snapshot().index.types["P"]?.runs)
        let blocks = runs.flatMap(\.blockOffsets)
        let live = runs.reduce(0) { $0 + $1.byteCount }
        try engine.close()
        #expect(try Self.keyRunUnitBytes(at: source) == live, "the runs reuse the blocks of earlier checkpoints")
        try recorded.finish(readingFrom: source)
        let path = directory.file("flipped.store")
        var outcomes: [String: Int] = [:]
        for round in 0..<400 {
            var damaged = recorded.bytes
            let at = round.isMultiple(of: 2)
                ? Int(generator.pick(blocks)) + Int.random(in: 0..<64, using: &generator)
                : Int.random(in: Int(LogHeader().unitsStart)..<damaged.count, using: &generator)
            flipRandomBit(of: &damaged, at: at, using: &generator)
            try recorded.expectCommittedStateOrTypedError(
                opening: damaged, flippedAt: at, as: path, configuration: { CheckpointTests.checkpointing(150, $0) },
                "round \(round)", outcomes: &outcomes)
        }
        #expect((outcomes["typed error"] ?? 0) > 0 && (outcomes["prefix"] ?? 0) > 0, "\(outcomes)")
    }

    /// Mostly keys counting up (integers, dense or stepped, and strings), with updates, deletes
    /// and deletes of a whole type between them, checkpoints after every few hundred bytes,
    /// reopening and compaction: every read agrees with a reference, and the file verifies.
    @Test(arguments: [(UInt64(0xA11E), false), (0xA11F, false), (0xA120, false), (0xA11E, true)])
    func appendedKeysAgreeWithAReference(seed: UInt64, encrypted: Bool) throws {
        var generator = SeededRandom(seed: SeededRandom.seed(default: seed))
        let directory = TemporaryDirectory()
        let path = directory.file("append.store")
        var configuration = encrypting(CheckpointTests.checkpointing(Int.random(in: 200...3_000, using: &generator)), encrypted)
        var engine = try StorageEngine(path: path, configuration: configuration)
        var reference: CheckpointTests.Reference = [:]
        var nextInteger: [String: Int64] = ["P": 0, "Q": -500]
        var nextString: [String: Int] = [:]
        var mostRuns = 0
        for step in 0..<300 {
            var batch = WriteBatch()
            let type = generator.pick(["P", "Q"])
            switch Int.random(in: 0..<100, using: &generator) {
            case 0..<65:
                let stride: Int64 = generator.chance(70) ? 1 : Int64.random(in: 2...40, using: &generator)
                for _ in 0..<Int.random(in: 1...60, using: &generator) {
                    let key = StorageKey.integer(nextInteger[type, default: 0] + stride)
                    nextInteger[type, default: 0] += stride
                    let value = CheckpointTests.value(&generator)
                    batch.put(type: type, key: key, value: value)
                    reference[type, default: [:]][key] = value
                }
            case 65..<75:
                for _ in 0..<Int.random(in: 1...20, using: &generator) {
                    nextString[type, default: 0] += 1
                    let key = StorageKey.string("k" + String(1_000_000 + nextString[type, default: 0]))
                    let value = CheckpointTests.value(&generator)
                    batch.put(type: type, key: key, value: value)
                    reference[type, default: [:]][key] = value
                }
            case 75..<87:
                guard let key = generator.pick(from: reference[type]?.keys ?? [:].keys, by: StorageKey.precedes) else { continue }
                let value = CheckpointTests.value(&generator)
                batch.put(type: type, key: key, value: value)
                reference[type, default: [:]][key] = value
            case 87..<98:
                guard let key = generator.pick(from: reference[type]?.keys ?? [:].keys, by: StorageKey.precedes) else { continue }
                batch.delete(type: type, key: key)
                reference[type]?[key] = nil
            default:
                batch.deleteAll(type: type)
                reference[type] = nil
            }
            try engine.commit(batch)
            mostRuns = max(mostRuns, engine.statistics.persistedRuns)
            #expect(engine.statistics.lastCheckpointError == nil)
            if step % 7 == 0 { try CheckpointTests.check(engine, reference, "seed \(seed), step \(step)") }
            if generator.chance(5) {
                try engine.close()
                configuration.checkpointInterval = Int.random(in: 200...3_000, using: &generator)
                engine = try StorageEngine(path: path, configuration: configuration)
                try CheckpointTests.check(engine, reference, "seed \(seed), step \(step), reopened")
            }
            if generator.chance(1) {
                try engine.compact()
                try CheckpointTests.check(engine, reference, "seed \(seed), step \(step), compacted")
            }
        }
        try engine.close()
        #expect(mostRuns > 2, "several runs were kept: \(mostRuns)")
        try CheckpointTests.checkClosed(at: path, configuration, encrypted: encrypted, reference, "seed \(seed)")
    }
}
