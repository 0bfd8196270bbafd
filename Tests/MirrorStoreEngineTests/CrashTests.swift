import Foundation
import Testing
import TestSupport
@testable import EngineCrashChild
@testable import MirrorStoreEngine

/// kill -9 a child that commits (and compacts) in a loop at seeded random moments; every
/// commit it acknowledged must be there after reopening, and the state must be exactly the
/// first n transactions for some n no smaller than the last acknowledged one.
@Suite(.serialized) struct CrashTests {
    struct Acknowledgement {
        var sequence: UInt64
        var transaction: Int
    }

    static func acknowledgements(_ lines: [String]) -> [Acknowledgement] {
        lines.compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 3, parts[0] == "ack", let sequence = UInt64(parts[1]), let n = Int(parts[2]) else { return nil }
            return Acknowledgement(sequence: sequence, transaction: n)
        }
    }

    static func killRepeatedly(mode: String, rounds: Int, seed: UInt64) throws {
        let child = try #require(crashChildURL(), "EngineCrashChild must be built next to the tests")
        let directory = TemporaryDirectory()
        let path = directory.file("crash.store")
        var generator = SeededRandom(seed: seed)
        var highestAcknowledged = 0
        var highestSequence: UInt64 = 0
        var model: [String: [StorageKey: [UInt8]]] = [:]
        var modelTransactions = 0
        for round in 0..<rounds {
            let context = "seed \(seed), mode \(mode), round \(round)"
            let process = try ChildProcess(executable: child, mode: mode, store: path)
            // The kill moment counts from the child having opened the store, so a slow start
            // (sanitizer builds start slowly) does not leave it no time to commit.
            _ = process.waitForLine(startingWith: "ready")
            let delay = UInt32.random(in: 5_000...120_000, using: &generator)
            usleep(delay)
            process.kill()
            let lines = process.lines()
            #expect(!lines.contains { $0.hasPrefix("error") }, "\(context): \(lines.filter { $0.hasPrefix("error") })")
            let acknowledged = Self.acknowledgements(lines)
            if let last = acknowledged.last {
                highestAcknowledged = max(highestAcknowledged, last.transaction)
                highestSequence = max(highestSequence, last.sequence)
            }
            let encrypted = mode == "encrypted" || mode == "rekey" || mode == "stream-spill-encrypted"
            let engine = encrypted
                ? try CrashWorkload.openEncrypted(path: path, configuration: EngineConfiguration(autoCompaction: .disabled)).0
                : mode == "convert"
                ? try CrashWorkload.openPlainOrEncrypted(path: path, configuration: EngineConfiguration(autoCompaction: .disabled)).0
                : try StorageEngine(path: path, configuration: EngineConfiguration(autoCompaction: .disabled))
            let snapshot = engine.snapshot()
            let committed = CrashWorkload.decode(snapshot.metadata(key: CrashWorkload.counterKey))
            // At most the one commit in flight at the kill may have landed unacknowledged.
            #expect(committed >= highestAcknowledged && committed <= highestAcknowledged + 1, "\(context): committed \(committed), acknowledged \(highestAcknowledged)")
            #expect(snapshot.sequence >= highestSequence, "\(context)")
            let state = try StoreState(snapshot)
            while modelTransactions < committed {
                modelTransactions += 1
                CrashWorkload.apply(modelTransactions, to: &model)
            }
            #expect(state.objects == model, "\(context): state is not the first \(committed) transactions")
            #expect(!FileManager.default.fileExists(atPath: path + ".compact-tmp"), "\(context): stale compaction file survived an open")
            if mode == "checkpoint" || mode == "encrypted" || mode.hasPrefix("stream") {
                let report = try verifyStoreFile(at: path, encryption: encrypted ? .key(CrashWorkload.encryptionKeys[0]) : nil)
                #expect(report.isIntact && report.checkpointDisagreement == nil, "\(context): \(report)")
                #expect(round < 3 || report.checkpointSequence != nil, "\(context): no checkpoint was written")
                #expect(round < 3 || report.persistedIndexRuns > 0, "\(context): no index run was written")
                // The persisted indexes, brought up to date with the tail, agree with the objects.
                try engine.defineIndexes(CrashWorkload.indexes)
                for definition in CrashWorkload.indexes {
                    let index = try #require(engine.snapshot().index(named: definition.name))
                    #expect(try index.objects(from: nil, to: nil) == CrashWorkload.entries(definition, model).map(\.object), "\(context): \(definition.name)")
                }
            }
            highestAcknowledged = committed
            highestSequence = snapshot.sequence
            try engine.close()
        }
        #expect(highestAcknowledged > rounds, "the child should commit between kills")
    }

    /// Streamed commits (pieces, then the unit naming them), abandoned streams and checkpoints
    /// between them: every acknowledged transaction is there, no stream shows in part or when
    /// abandoned, and the indexes agree with the objects after every reopen.
    @Test func killedStreamerLosesNoAcknowledgedCommit() throws {
        try Self.killRepeatedly(mode: "stream", rounds: 60, seed: SeededRandom.seed(default: 0x5EED_0057))
    }

    /// The same with each commit's stream keys going to scratch runs as they are published
    /// (`StreamSpill`), and its index entries as they are checked (`StreamIndexSpill`), the
    /// child checking its indexes against its objects after each commit: the file holds what it
    /// holds without them, and a kill loses the scratch files.
    @Test func killedSpillingStreamerLosesNoAcknowledgedCommit() throws {
        try Self.killRepeatedly(mode: "stream-spill", rounds: 50, seed: SeededRandom.seed(default: 0x5EED_0058))
    }

    /// The same on an encrypted store, whose scratch files are sealed under keys of their own.
    @Test func killedEncryptedSpillingStreamerLosesNoAcknowledgedCommit() throws {
        try Self.killRepeatedly(mode: "stream-spill-encrypted", rounds: 50, seed: SeededRandom.seed(default: 0x5EED_0059))
    }

    @Test func killedCommitterLosesNoAcknowledgedCommit() throws {
        try Self.killRepeatedly(mode: "commit", rounds: 50, seed: SeededRandom.seed(default: 0x5EED_0001))
    }

    /// Kills land in the middle of writing key runs, a checkpoint unit or a header slot: the
    /// reopened store reads from the newest checkpoint that is whole, and agrees with its log.
    @Test func killedCheckpointerLosesNothing() throws {
        try Self.killRepeatedly(mode: "checkpoint", rounds: 60, seed: SeededRandom.seed(default: 0x5EED_0004))
    }

    /// Kills land in a page write, a key slot's nonce reservation, a checkpoint or a compaction
    /// under a new data key: the encrypted store opens with every acknowledged commit.
    @Test func killedEncryptedCommitterLosesNothing() throws {
        try Self.killRepeatedly(mode: "encrypted", rounds: 40, seed: SeededRandom.seed(default: 0x5EED_0005))
    }

    /// Kills land in a key change (new key slot, sync, wipe of the old one): the store opens with
    /// the old key or the new one, never neither, and holds every acknowledged commit.
    @Test func killedKeyChangesLeaveOneKeyOpeningTheStore() throws {
        try Self.killRepeatedly(mode: "rekey", rounds: 40, seed: SeededRandom.seed(default: 0x5EED_0006))
    }

    /// Kills land in encrypting a plain store or decrypting an encrypted one (each a rewrite into
    /// a new file, renamed over the old): the store opens, plain or encrypted, with every
    /// acknowledged commit, and no temporary file survives the open.
    @Test func killedEncryptionAndDecryptionLoseNothing() throws {
        try Self.killRepeatedly(mode: "convert", rounds: 30, seed: SeededRandom.seed(default: 0x5EED_0007))
    }

    @Test func killedCompactorLosesNothing() throws {
        try Self.killRepeatedly(mode: "compact", rounds: 50, seed: SeededRandom.seed(default: 0x5EED_0002))
    }

    /// Eight threads commit at once, so their commits share syncs; killed at seeded moments,
    /// each thread's stored keys are exactly 1...k with k at least its last acknowledged commit.
    @Test func killedGroupCommittersLoseNoAcknowledgedCommit() throws {
        let child = try #require(crashChildURL(), "EngineCrashChild must be built next to the tests")
        let directory = TemporaryDirectory()
        let path = directory.file("group.store")
        let seed = SeededRandom.seed(default: 0x5EED_0003)
        var generator = SeededRandom(seed: seed)
        var acknowledged = Array(repeating: 0, count: CrashWorkload.groupThreads)
        for round in 0..<20 {
            let context = "seed \(seed), round \(round)"
            let process = try ChildProcess(executable: child, mode: "group", store: path)
            _ = process.waitForLine(startingWith: "ready")
            usleep(UInt32.random(in: 5_000...80_000, using: &generator))
            process.kill()
            let lines = process.lines()
            #expect(!lines.contains { $0.hasPrefix("error") }, "\(context): \(lines.filter { $0.hasPrefix("error") })")
            for line in lines {
                let parts = line.split(separator: " ")
                guard parts.count == 3, parts[0] == "ack", let thread = Int(parts[1]), let n = Int(parts[2]),
                      acknowledged.indices.contains(thread) else { continue }
                acknowledged[thread] = max(acknowledged[thread], n)
            }
            let engine = try StorageEngine(path: path, configuration: EngineConfiguration(autoCompaction: .disabled))
            let snapshot = engine.snapshot()
            for thread in acknowledged.indices {
                let keys = Set(try snapshot.keys(type: "Thread\(thread)"))
                let count = keys.count
                #expect(keys == Set((0..<count).map { StorageKey.integer(Int64($0 + 1)) }), "\(context): thread \(thread) has a gap")
                #expect(count >= acknowledged[thread], "\(context): thread \(thread) stored \(count), acknowledged \(acknowledged[thread])")
                acknowledged[thread] = count
            }
            try engine.close()
        }
        let idleThreads = acknowledged.filter { $0 == 0 }.count
        #expect(idleThreads == 0, "every thread should commit between kills")
    }

    @Test func staleCompactionFileIsDeletedOnOpen() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("stale.store")
        let engine = try StorageEngine(path: path, configuration: fastConfiguration())
        try engine.commit(CrashWorkload.batch(1))
        try engine.close()
        try writeFile(path + ".compact-tmp", [1, 2, 3])
        let reopened = try StorageEngine(path: path, configuration: fastConfiguration())
        #expect(!FileManager.default.fileExists(atPath: path + ".compact-tmp"))
        var expected: [String: [StorageKey: [UInt8]]] = [:]
        CrashWorkload.apply(1, to: &expected)
        #expect(try StoreState(reopened.snapshot()).objects == expected)
        try reopened.close()
    }
}
