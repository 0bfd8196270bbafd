import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// Persisted key runs and checkpoints (docs/FILE_FORMAT.md, "Checkpoints"): checked against a
/// plain in-memory reference with checkpoints and merges forced often, and against truncation and
/// bit flips at every place of a small store that has them.
@Suite struct CheckpointTests {
    /// A configuration that checkpoints after every few hundred bytes of commits.
    static func checkpointing(_ interval: Int, _ mode: EngineConfiguration.RecoveryMode = .strict) -> EngineConfiguration {
        var configuration = fastConfiguration(mode)
        configuration.checkpointInterval = interval
        return configuration
    }

    /// A random key of one of the three kinds, from small ranges so that keys repeat.
    static func key(_ generator: inout SeededRandom) -> StorageKey {
        switch Int.random(in: 0..<10, using: &generator) {
        case 0..<6: .integer(Int64.random(in: -40...400, using: &generator))
        case 6..<9: .string(generator.pick(["a", "b", "é", "e\u{301}", "zz", "Élodie", "ß", "🙂", ""]) + String(Int.random(in: 0..<30, using: &generator)))
        default: .bytes((0..<Int.random(in: 0...3, using: &generator)).map { _ in UInt8.random(in: 0...3, using: &generator) })
        }
    }

    static func value(_ generator: inout SeededRandom) -> [UInt8] {
        (0..<Int.random(in: 0...40, using: &generator)).map { _ in generator.integer(UInt8.self) }
    }

    typealias Reference = [String: [StorageKey: [UInt8]]]

    /// One to six random puts (62 in 100), deletes (up to `deletesBelow`; mostly of stored keys)
    /// and deletes of a whole type of "P" and "Q", applied to `reference` as well; new keys from `key`.
    static func randomBatch(
        _ generator: inout SeededRandom, applyingTo reference: inout Reference, deletesBelow: Int,
        key: (inout SeededRandom) -> StorageKey = CheckpointTests.key
    ) -> WriteBatch {
        var batch = WriteBatch()
        for _ in 0..<Int.random(in: 1...6, using: &generator) {
            let type = generator.pick(["P", "Q"])
            switch Int.random(in: 0..<100, using: &generator) {
            case 0..<62:
                let key = key(&generator), value = Self.value(&generator)
                batch.put(type: type, key: key, value: value)
                reference[type, default: [:]][key] = value
            case 62..<deletesBelow:
                let key = generator.chance(70) ? (generator.pick(from: reference[type]?.keys ?? [:].keys, by: StorageKey.precedes) ?? key(&generator)) : key(&generator)
                batch.delete(type: type, key: key)
                reference[type]?[key] = nil
            default:
                batch.deleteAll(type: type)
                reference[type] = nil
            }
        }
        return batch
    }

    /// Checks every way a snapshot reads objects against `reference`.
    static func check(_ engine: StorageEngine, _ reference: Reference, _ context: String) throws {
        let snapshot = engine.snapshot()
        for type in ["P", "Q"] {
            let expected = reference[type] ?? [:]
            #expect(snapshot.count(type: type) == expected.count, "\(context): count of \(type)")
            #expect(Set(try snapshot.keys(type: type)) == Set(expected.keys), "\(context): keys of \(type)")
            for (key, value) in expected {
                #expect(try snapshot.value(type: type, key: key) == value, "\(context): \(type) \(key)")
                #expect(try snapshot.contains(type: type, key: key), "\(context): contains \(type) \(key)")
            }
            var ordered: [StorageKey] = []
            try snapshot.forEachEntryInKeyOrder(type: type) { key, value in
                ordered.append(key)
                #expect(expected[key] == value, "\(context): key order value of \(type) \(key)")
            }
            #expect(ordered == expected.keys.sorted(by: StorageKey.precedes), "\(context): key order of \(type)")
            var scanned = 0
            try snapshot.forEachValueInPlace(type: type) { key, _, bytes in
                scanned += 1
                #expect(expected[key] == Array(bytes), "\(context): scan of \(type) \(key)")
            }
            #expect(scanned == expected.count, "\(context): scan count of \(type)")
        }
        let absent = StorageKey.integer(1_000_000)
        #expect(try !snapshot.contains(type: "P", key: absent), "\(context): an absent key")
    }

    /// Run once more on an encrypted store (`encrypted`), where every page of the runs and
    /// checkpoints is sealed.
    @Test(arguments: [(UInt64(0xC4EC), false), (0xC4ED, false), (0xC4EE, false), (0xC4EC, true), (0xC4EF, true)])
    func randomOperationsAgreeWithAReference(seed: UInt64, encrypted: Bool) throws {
        var generator = SeededRandom(seed: SeededRandom.seed(default: seed))
        let directory = TemporaryDirectory()
        let path = directory.file("model.store")
        var configuration = encrypting(Self.checkpointing(Int.random(in: 64...900, using: &generator)), encrypted)
        var engine = try StorageEngine(path: path, configuration: configuration)
        var reference: Reference = [:]
        var checkpoints = 0
        var mostRuns = 0
        for step in 0..<400 {
            try engine.commit(Self.randomBatch(&generator, applyingTo: &reference, deletesBelow: 97))
            checkpoints = max(checkpoints, engine.statistics.checkpoints)
            mostRuns = max(mostRuns, engine.statistics.persistedRuns)
            #expect(engine.statistics.lastCheckpointError == nil)
            if step % 9 == 0 { try Self.check(engine, reference, "seed \(seed), step \(step)") }
            if generator.chance(6) {
                try engine.close()
                configuration.checkpointInterval = Int.random(in: 64...900, using: &generator)
                engine = try StorageEngine(path: path, configuration: configuration)
                try Self.check(engine, reference, "seed \(seed), step \(step), reopened")
            }
            if generator.chance(2) {
                try engine.compact()
                try Self.check(engine, reference, "seed \(seed), step \(step), compacted")
            }
        }
        try engine.close()
        #expect(checkpoints > 0 && mostRuns > 2, "checkpoints and delta runs were exercised: \(checkpoints), \(mostRuns)")
        let report = try Self.checkClosed(at: path, configuration, encrypted: encrypted, reference, "seed \(seed)")
        #expect(report.checkpointSequence != nil)
    }

    /// Checks the closed store at `path` against `reference`: it verifies intact, and reads the
    /// same reopened with `configuration` and replayed from the whole log.
    @discardableResult
    static func checkClosed(
        at path: String, _ configuration: EngineConfiguration, encrypted: Bool, _ reference: Reference, _ context: String
    ) throws -> VerificationReport {
        let report = try verifyStoreFile(at: path, encryption: encrypted ? .key(testEncryptionKey) : nil)
        #expect(report.isIntact, "\(context): \(report)")
        var engine = try StorageEngine(path: path, configuration: configuration)
        try check(engine, reference, "\(context), final")
        try engine.close()
        // A replay of the whole log gives the same state.
        engine = try StorageEngine(path: path, configuration: encrypting(checkpointing(0, .recoverValidPrefix), encrypted))
        try check(engine, reference, "\(context), replayed")
        try engine.close()
        return report
    }

    /// A store with checkpoints and runs, recorded commit by commit.
    static func record(at path: String, commits: Int, seed: UInt64) throws -> RecordedCommits {
        var generator = SeededRandom(seed: seed)
        let engine = try StorageEngine(path: path, configuration: checkpointing(150))
        var recorded = try RecordedCommits(startingFrom: engine)
        for number in 1...commits {
            var batch = WriteBatch()
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                if generator.chance(25), let key = generator.pick(from: recorded.states.last?.objects["P"]?.keys ?? [:].keys, by: StorageKey.precedes) {
                    batch.delete(type: "P", key: key)
                } else {
                    batch.put(type: "P", key: .integer(Int64.random(in: 0..<12, using: &generator)), value: value(&generator))
                }
            }
            if number % 7 == 0 { batch.setMetadata(key: "n", value: [UInt8(number)]) }
            try recorded.commit(batch, to: engine, at: path)
        }
        #expect(engine.statistics.checkpoints > 3)
        try engine.close()
        try recorded.finish(readingFrom: path)
        return recorded
    }

    @Test func truncationAtEveryOffsetGivesACommittedPrefix() throws {
        let directory = TemporaryDirectory()
        let recorded = try Self.record(at: directory.file("source.store"), commits: 40, seed: 0x7C)
        let path = directory.file("cut.store")
        let unitsStart = Int(LogHeader().unitsStart)
        let lengths = Array(stride(from: 0, to: unitsStart, by: 61)) + Array(unitsStart...recorded.bytes.count)
        for length in lengths {
            try replaceStore(at: path, with: Array(recorded.bytes[0..<length]))
            let expected = recorded.state(upTo: length)
            let engine = try StorageEngine(path: path, configuration: Self.checkpointing(150))
            let state = try StoreState(engine.snapshot())
            #expect(state == expected.state, "cut at \(length): \(state) against \(expected.state)")
            if length % 5 == 0 {
                // What a stale slot points at is now other bytes: new commits and checkpoints
                // must never be read through it.
                var batch = WriteBatch()
                for number in 0..<30 { batch.put(type: "P", key: .integer(Int64(100 + number)), value: Array(repeating: 7, count: 9)) }
                try engine.commit(batch)
                try engine.close()
                var after = try openState(path, Self.checkpointing(150))
                for number in 0..<30 { after.objects["P"]?[.integer(Int64(100 + number))] = nil }
                if after.objects["P"]?.isEmpty == true { after.objects["P"] = nil }
                after.sequence -= 1
                #expect(after == expected.state, "cut at \(length), then a commit")
            } else {
                try engine.close()
            }
        }
    }

    @Test func bitFlipsGiveACommittedStateOrATypedError() throws {
        let directory = TemporaryDirectory()
        let recorded = try Self.record(at: directory.file("source.store"), commits: 30, seed: 0xB17)
        let path = directory.file("flipped.store")
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0xF11F))
        var outcomes: [String: Int] = [:]
        for round in 0..<600 {
            var damaged = recorded.bytes
            let at = round < 200 ? Int.random(in: Int(LogHeader().unitsStart)..<damaged.count, using: &generator)
                : Int.random(in: 0..<damaged.count, using: &generator)
            flipRandomBit(of: &damaged, at: at, using: &generator)
            try recorded.expectCommittedStateOrTypedError(
                opening: damaged, flippedAt: at, as: path, configuration: { Self.checkpointing(150, $0) },
                "round \(round)", outcomes: &outcomes)
        }
        #expect((outcomes["typed error"] ?? 0) > 0 && (outcomes["prefix"] ?? 0) > 0)
    }

    @Test func aDamagedRunBlockIsATypedErrorInStrictModeAndReplayedInTheOther() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("runs.store")
        let engine = try StorageEngine(path: path, configuration: Self.checkpointing(1))
        var batch = WriteBatch()
        // Enough entries for several blocks in the walked layout, about 16,000 to a block.
        for number in 0..<70_000 { batch.put(type: "P", key: .integer(Int64(number)), value: Array("value \(number)".utf8)) }
        try engine.commit(batch)
        let runs = try #require(engine.snapshot().index.types["P"]?.runs.first)
        #expect(runs.blockOffsets.count > 3)
        let expected = try StoreState(engine.snapshot())
        try engine.close()
        var bytes = try readFile(path)
        bytes[Int(runs.blockOffsets[3]) + 40] ^= 0x10
        try writeFile(path, bytes)
        let strict = try StorageEngine(path: path, configuration: Self.checkpointing(1))
        let inDamagedBlock = runs.fences.key(3)
        let error = try #require(throws: StorageError.self) { try strict.snapshot().value(type: "P", key: inDamagedBlock) }
        guard case .corrupted = error.kind else { Issue.record("\(error)"); return }
        #expect(try strict.snapshot().value(type: "P", key: .integer(0)) == Array("value 0".utf8), "other blocks still read")
        try strict.close()
        let report = try verifyStoreFile(at: path)
        #expect(!report.isIntact && report.firstDamageOffset != nil, "\(report)")
        // Replaying the whole log finds the damaged run unit and keeps every commit before it.
        #expect(try openState(path, Self.checkpointing(1, .recoverValidPrefix)) == expected)
    }

    @Test func openingReadsTheCheckpointAndOnlyTheTail() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("tail.store")
        let engine = try StorageEngine(path: path, configuration: Self.checkpointing(4_096))
        for round in 0..<50 {
            var batch = WriteBatch()
            for number in 0..<20 { batch.put(type: "P", key: .integer(Int64(round * 20 + number)), value: Array(repeating: 1, count: 30)) }
            try engine.commit(batch)
        }
        let end = try #require(engine.statistics.checkpointEnd)
        try engine.close()
        let recovered = try Recovery.scan(FileLog(path: path, descriptor: FileSystem.open(path, flags: O_RDONLY), faults: nil))
        #expect(recovered.checkpoint.map { $0.unitOffset + UInt64($0.unitLength) } == end)
        #expect(recovered.index.types["P"]?.count == 1_000)
        #expect(recovered.index.types["P"].map { $0.memoryCount < 1_000 } == true, "objects before the checkpoint stay in runs")
    }
    /// `verify` scans from the checkpoint up to where its replay ended, so that a writer's later
    /// commits and checkpoints are not compared with a replay that did not see them: a scan
    /// ending at a commit boundary must read what a copy of the file cut there reads.
    @Test func aScanEndingEarlierReadsTheFileCutThere() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("whole.store")
        let engine = try StorageEngine(path: path, configuration: Self.checkpointing(2_048))
        var ends: [UInt64] = []
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0xE4D5))
        for _ in 0..<40 {
            var batch = WriteBatch()
            for _ in 0..<8 { batch.put(type: "P", key: Self.key(&generator), value: Self.value(&generator)) }
            try engine.commit(batch)
            ends.append(try #require((try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.uint64Value))
        }
        try engine.close()
        let bytes = try #require(FileManager.default.contents(atPath: path))
        for end in ends.enumerated().filter({ $0.offset % 3 == 0 }).map(\.element) {
            let whole = try Recovery.scan(FileLog(path: path, descriptor: FileSystem.open(path, flags: O_RDONLY), faults: nil), endingAt: end)
            let cutPath = directory.file("cut-\(end).store")
            #expect(FileManager.default.createFile(atPath: cutPath, contents: bytes.prefix(Int(end))))
            let cut = try Recovery.scan(FileLog(path: cutPath, descriptor: FileSystem.open(cutPath, flags: O_RDONLY), faults: nil))
            #expect(whole.lastSequence == cut.lastSequence, "end \(end)")
            #expect(whole.validEnd == cut.validEnd, "end \(end)")
            #expect(whole.checkpoint == cut.checkpoint, "end \(end)")
            #expect(try StateComparison.difference(whole.index, cut.index) == nil, "end \(end)")
        }
    }
}
