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

    @Test func mutatedStoreFilesGiveACommittedStateOrATypedError() throws {
        let seed = SeededRandom.seed(default: 0xE4C0_0002)
        var generator = SeededRandom(seed: seed)
        let directory = TemporaryDirectory()
        let source = directory.file("source.store")
        var configuration = encrypting(fastConfiguration())
        configuration.checkpointInterval = 500
        let engine = try StorageEngine(path: source, configuration: configuration)
        var states = [try StoreState(engine.snapshot())]
        for number in 0..<60 {
            var batch = WriteBatch()
            batch.put(type: "F", key: .integer(Int64(number % 17)), value: Array(repeating: UInt8(number), count: number * 13 % 300))
            try engine.commit(batch)
            states.append(try StoreState(engine.snapshot()))
        }
        try engine.close()
        let original = try readFile(source)
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
        let source = directory.file("source.store")
        var configuration = encrypting(fastConfiguration())
        configuration.checkpointInterval = 1 << 30
        let engine = try StorageEngine(path: source, configuration: configuration)
        var states = [try StoreState(engine.snapshot())]
        for number in 0..<40 {
            var batch = WriteBatch()
            batch.put(type: "F", key: .integer(Int64(number % 11)), value: Array(repeating: UInt8(number), count: number * 97 % 900))
            try engine.commit(batch)
            states.append(try StoreState(engine.snapshot()))
        }
        try engine.close()
        let original = try readFile(source)
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
                        bytes[at] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
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
}
