import Testing
import TestSupport
@testable import MirrorStoreEngine

/// The encrypted file's decoders on bytes nobody wrote: random first pages (some with the magic
/// and a matching checksum, to reach the key slots), whole store files mutated (bits flipped,
/// ends cut off, bytes inserted), and tail slots damaged (one or both). Each ends in a typed
/// error or, for a file, a state some commit made; none traps. Replay with MIRRORSTORE_SEED.
@Suite struct EncryptedFileFuzzTests {
    @Test func randomFirstPagesNeverTrap() {
        let seed = SeededRandom.seed(default: 0xE4C0_0001)
        var generator = SeededRandom(seed: seed)
        let pageSize = EncryptedFileHeader.pageSize
        for round in 0..<3_000 {
            let count = generator.chance(80) ? pageSize : Int.random(in: 0...(pageSize + 8), using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if generator.chance(70), bytes.count >= EncryptedFileHeader.fixedByteCount {
                bytes.replaceSubrange(0..<8, with: EncryptedFileHeader.magic)
                if generator.chance(50) { bytes.replaceSubrange(8..<16, with: [1, 0, 0, 0, 0, 0x10, 0, 0]) }
                let checksum = CRC32C.mask(CRC32C.checksum(Array(bytes[0..<60])))
                bytes.replaceSubrange(60..<64, with: (0..<4).map { UInt8(truncatingIfNeeded: checksum >> (8 * $0)) })
            }
            do {
                _ = try EncryptedFileHeader.decode(bytes, path: "fuzz.store")
            } catch let error as StorageError {
                switch error.kind {
                case .notAStore, .corrupted, .newerFormat: break
                default: Issue.record("seed \(seed), round \(round): \(error)")
                }
            } catch {
                Issue.record("seed \(seed), round \(round): an untyped error \(error)")
            }
        }
    }

    /// A store at `path` given `commits` commits of one put each (commit `number` puts
    /// `length(number)` bytes of `number` under key `number % keys`): its bytes, and its state
    /// before the first commit and after each.
    static func source(
        at path: String, _ configuration: EngineConfiguration, commits: Int, keys: Int, length: (Int) -> Int
    ) throws -> (bytes: [UInt8], states: [StoreState]) {
        let engine = try StorageEngine(path: path, configuration: configuration)
        var states = [try StoreState(engine.snapshot())]
        for number in 0..<commits {
            var batch = WriteBatch()
            batch.put(type: "F", key: .integer(Int64(number % keys)), value: Array(repeating: UInt8(number), count: length(number)))
            try engine.commit(batch)
            states.append(try StoreState(engine.snapshot()))
        }
        try engine.close()
        return (try readFile(path), states)
    }

    @Test func mutatedStoreFilesGiveACommittedStateOrATypedError() throws {
        let seed = SeededRandom.seed(default: 0xE4C0_0002)
        var generator = SeededRandom(seed: seed)
        let directory = TemporaryDirectory()
        var configuration = encrypting(fastConfiguration())
        configuration.checkpointInterval = 500
        let (original, states) = try Self.source(
            at: directory.file("source.store"), configuration, commits: 60, keys: 17, length: { $0 * 13 % 300 })
        let path = directory.file("fuzzed.store")
        for round in 0..<400 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...3, using: &generator) { bytes = generator.damaged(bytes) }
            try writeFile(path, bytes)
            configuration.recoveryMode = generator.chance(50) ? .strict : .recoverValidPrefix
            do {
                let state = try openState(path, configuration)
                #expect(states.contains(state), "seed \(seed), round \(round): a state no commit made")
            } catch is StorageError {
            }
        }
    }

    /// Flips and zeroed spans in the tail slots (physical pages 1 to 4), often in their clear
    /// page number, version and length: a damaged slot reads as a torn one (the other slot's
    /// version, a committed state), both damaged is a typed error, and nothing is a wrong state.
    @Test func damagedTailSlotsGiveACommittedStateOrATypedError() throws {
        let seed = SeededRandom.seed(default: 0xE4C0_0003)
        var generator = SeededRandom(seed: seed)
        let directory = TemporaryDirectory()
        var configuration = encrypting(fastConfiguration())
        configuration.checkpointInterval = 1 << 30
        let (original, states) = try Self.source(
            at: directory.file("source.store"), configuration, commits: 40, keys: 11, length: { $0 * 97 % 900 })
        let slots = (0..<2).map { Int(EncryptedLog.tailSlotOffset($0)) }
        let slotBytes = EncryptedLog.tailSlotPages * EncryptedFileHeader.pageSize
        let path = directory.file("damaged.store")
        var outcomes: [String: Int] = [:]
        for round in 0..<400 {
            var bytes = original
            let damagedSlots = generator.chance(25) ? slots : [slots[Int.random(in: 0..<2, using: &generator)]]
            for slot in damagedSlots {
                if generator.chance(20) {
                    let start = slot + Int.random(in: 0..<64, using: &generator)
                    for at in start..<min(bytes.count, start + Int.random(in: 1...64, using: &generator)) { bytes[at] = 0 }
                } else {
                    for _ in 0..<Int.random(in: 1...3, using: &generator) {
                        // Half the flips in the clear fields: page number, version, length.
                        let at = slot + (generator.chance(50) ? Int.random(in: 0..<18, using: &generator) : Int.random(in: 0..<slotBytes, using: &generator))
                        flipRandomBit(of: &bytes, at: at, using: &generator)
                    }
                }
            }
            try writeFile(path, bytes)
            configuration.recoveryMode = generator.chance(50) ? .strict : .recoverValidPrefix
            do {
                let state = try openState(path, configuration)
                if let index = states.firstIndex(of: state) {
                    outcomes[index == states.count - 1 ? "last" : "earlier", default: 0] += 1
                } else {
                    Issue.record("seed \(seed), round \(round): a state no commit made")
                }
            } catch is StorageError {
                outcomes["typed error", default: 0] += 1
            }
        }
        #expect(outcomes["earlier", default: 0] > 0 && outcomes["typed error", default: 0] > 0, "\(outcomes)")
    }

    /// Flips and zeroed spans in the header region's checkpoint slot pages (logical pages 1 and
    /// 2, physical pages 6 and 7), one or both: a slot page that does not authenticate reads as
    /// an invalid slot, so opening takes the other slot's checkpoint or replays the whole log,
    /// and the state is the last commit's, never another. Damage to the region's other pages
    /// (its header, the rest of it) stays `corrupted`.
    @Test func damagedCheckpointSlotPagesGiveTheLastState() throws {
        let seed = SeededRandom.seed(default: 0xE4C0_0004)
        var generator = SeededRandom(seed: seed)
        let directory = TemporaryDirectory()
        let source = directory.file("source.store")
        var configuration = encrypting(fastConfiguration())
        configuration.checkpointInterval = 2_000
        let engine = try StorageEngine(path: source, configuration: configuration)
        for number in 0..<40 {
            var batch = WriteBatch()
            batch.put(type: "F", key: .integer(Int64(number % 11)), value: Array(repeating: UInt8(number), count: 200 + number * 37 % 400))
            try engine.commit(batch)
        }
        #expect(engine.statistics.checkpoints >= 2)
        let last = try StoreState(engine.snapshot())
        try engine.close()
        let original = try readFile(source)
        let pageSize = EncryptedFileHeader.pageSize
        // Logical page i lies at physical page i + 5, after the header page and the tail slots.
        let place = { (page: Int) in pageSize * (page + 1 + 2 * EncryptedLog.tailSlotPages) }
        // A sealed slot page: length (2), nonce (12), ciphertext (64), tag (16).
        let sealed = 2 + 12 + CheckpointSlot.size + 16
        let path = directory.file("damaged.store")
        var outcomes: [String: Int] = [:]
        for round in 0..<300 {
            var bytes = original
            let pages = generator.chance(25) ? [1, 2] : [Int.random(in: 1...2, using: &generator)]
            for page in pages {
                if generator.chance(20) {
                    let start = place(page) + Int.random(in: 0..<sealed, using: &generator)
                    for at in start..<min(place(page) + sealed, start + Int.random(in: 1...64, using: &generator)) { bytes[at] = 0 }
                } else {
                    for _ in 0..<Int.random(in: 1...3, using: &generator) {
                        // Mostly in the sealed bytes; some in the length, where a larger one overruns.
                        let at = place(page) + (generator.chance(20) ? Int.random(in: 0..<2, using: &generator) : Int.random(in: 0..<sealed, using: &generator))
                        flipRandomBit(of: &bytes, at: at, using: &generator)
                    }
                }
            }
            guard bytes != original else { continue }
            try writeFile(path, bytes)
            configuration.recoveryMode = generator.chance(50) ? .strict : .recoverValidPrefix
            do {
                let engine = try StorageEngine(path: path, configuration: configuration)
                let state = try StoreState(engine.snapshot())
                let fromCheckpoint = engine.statistics.checkpointEnd != nil
                try engine.close()
                #expect(state == last, "seed \(seed), round \(round), pages \(pages): \(state), not the last state")
                outcomes[fromCheckpoint ? "from a checkpoint" : "whole log", default: 0] += 1
            } catch {
                Issue.record("seed \(seed), round \(round), pages \(pages): \(error)")
            }
        }
        #expect(outcomes["from a checkpoint", default: 0] > 0 && outcomes["whole log", default: 0] > 0, "\(outcomes)")
        // Both slots unreadable: the whole log is replayed, and the next checkpoint is written
        // whole over one of them and opened from.
        var bytes = original
        for page in [1, 2] { bytes[place(page) + 40] ^= 0x04 }
        try writeFile(path, bytes)
        configuration.recoveryMode = .strict
        #expect(try verifyStoreFile(at: path, encryption: configuration.encryption).isIntact)
        let writer = try StorageEngine(path: path, configuration: configuration)
        #expect(writer.statistics.checkpointEnd == nil)
        var key = 100
        while writer.statistics.checkpoints == 0, key < 120 {
            var batch = WriteBatch()
            batch.put(type: "F", key: .integer(Int64(key)), value: Array(repeating: 7, count: 600))
            try writer.commit(batch)
            key += 1
        }
        let final = try StoreState(writer.snapshot())
        let finalEnd = writer.statistics.checkpointEnd
        try writer.close()
        #expect(finalEnd != nil)
        let reopened = try StorageEngine(path: path, configuration: configuration)
        #expect(reopened.statistics.checkpointEnd == finalEnd)
        #expect(try StoreState(reopened.snapshot()) == final)
        try reopened.close()
        #expect(try verifyStoreFile(at: path, encryption: configuration.encryption).checkpointSequence == final.sequence)
        // The header's page and the rest of the region are no slots: damage there is `corrupted`.
        for page in [0, 3] {
            var bytes = original
            bytes[place(page) + 20] ^= 0x01
            try writeFile(path, bytes)
            #expect(throws: StorageError.self, "page \(page)") { try openState(path, configuration) }
            #expect(throws: StorageError.self, "page \(page)") { try verifyStoreFile(at: path, encryption: configuration.encryption) }
        }
    }

    /// `verify` judges a damaged checkpoint slot alike in a plain file (a bad checksum) and an
    /// encrypted one (a page that does not authenticate): no damage, the other slot's checkpoint
    /// checked against the replay.
    @Test(arguments: [false, true])
    func aDamagedCheckpointSlotIsNoDamageToVerify(encrypted: Bool) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("verified.store")
        var configuration = encrypting(fastConfiguration(), encrypted)
        configuration.checkpointInterval = 2_000
        let engine = try StorageEngine(path: path, configuration: configuration)
        var number = 0
        while engine.statistics.checkpoints < 2, number < 100 {
            var batch = WriteBatch()
            batch.put(type: "F", key: .integer(Int64(number % 5)), value: Array(repeating: UInt8(number), count: 700))
            try engine.commit(batch)
            number += 1
        }
        let last = try StoreState(engine.snapshot())
        try engine.close()
        let pageSize = EncryptedFileHeader.pageSize
        // The newest checkpoint, number 2, is in slot 0: logical page 1, or bytes 64 to 128.
        let slot = encrypted ? pageSize * (1 + 1 + 2 * EncryptedLog.tailSlotPages) + 40 : Int(CheckpointSlot.offsets[0]) + 20
        var bytes = try readFile(path)
        bytes[slot] ^= 0x08
        try writeFile(path, bytes)
        let report = try verifyStoreFile(at: path, encryption: configuration.encryption)
        #expect(report.isIntact, "\(report)")
        #expect(report.checkpointSequence != nil && report.checkpointSequence != last.sequence, "the other slot's checkpoint: \(report)")
        #expect(try openState(path, configuration) == last)
    }
}
