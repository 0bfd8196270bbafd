import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// `EncryptedLog.read(at:count:)` answered from the page cache (`EncryptedPageCache.copy`): a
/// read of pages the cache holds goes to the file no more (counted by `FileLog.fileReadCount`),
/// and every read, cached or not, gives the bytes last written there, through writes and cuts
/// that change cached pages.
@Suite struct EncryptedReadCacheTests {
    static func log() throws -> (log: EncryptedLog, file: FileLog) {
        let file = try #require(ScratchFile.make())
        return (try EncryptedLog.create(in: file, keys: EncryptionKeys(.key(testEncryptionKey))), file)
    }

    /// A read within one page, across two, or longer.
    static func range(in size: Int, using generator: inout SeededRandom) -> (offset: Int, count: Int) {
        let offset = Int.random(in: 0..<size, using: &generator)
        let longest = switch Int.random(in: 0..<4, using: &generator) {
        case 0: EncryptedLog.dataPageCapacity * 3
        case 1: EncryptedLog.dataPageCapacity
        default: 300
        }
        return (offset, Int.random(in: 1...min(size - offset, longest), using: &generator))
    }

    @Test("reads of cached pages go to the file no more", arguments: [0, 1, 2] as [UInt64])
    func repeatedReadsAreAnsweredFromTheCache(seed: UInt64) throws {
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0xCA_C4ED_0000 + seed))
        let (log, file) = try Self.log()
        let written = (0..<(40 * EncryptedLog.dataPageCapacity + 123)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try log.write(written, at: 0)
        let ranges = (0..<200).map { _ in Self.range(in: written.count, using: &generator) }
        for (offset, count) in ranges {
            #expect(try log.read(at: UInt64(offset), count: count) == Array(written[offset..<(offset + count)]))
        }
        // Far fewer pages than the cache holds: every page read once is held.
        let reads = file.fileReadCount
        #expect(reads > 0, "the pages a write filled are not kept: the first reads decrypt them")
        for (offset, count) in ranges.shuffled(using: &generator) {
            #expect(try log.read(at: UInt64(offset), count: count) == Array(written[offset..<(offset + count)]))
        }
        #expect(file.fileReadCount == reads, "seed \(seed): a read of cached pages went to the file")
    }

    /// Random writes (over cached pages, across the end, past it), cuts and reads against an
    /// array: a read gives the bytes last written, whether its pages were cached before the change.
    @Test("reads after writes and cuts give the new bytes", arguments: [0, 1, 2, 3] as [UInt64])
    func readsAfterWritesSeeTheNewBytes(seed: UInt64) throws {
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x5EE_0000 + seed))
        let (log, _) = try Self.log()
        var reference = (0..<(12 * EncryptedLog.dataPageCapacity)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try log.write(reference, at: 0)
        for step in 0..<400 {
            let context = "seed \(seed), step \(step)"
            switch Int.random(in: 0..<10, using: &generator) {
            case 0 ... 2:
                // Over bytes the reads may have cached, sometimes past the end.
                let offset = Int.random(in: 0...reference.count, using: &generator)
                let bytes = (0..<Int.random(in: 1...(2 * EncryptedLog.dataPageCapacity), using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
                try log.write(bytes, at: UInt64(offset))
                if offset + bytes.count > reference.count { reference += [UInt8](repeating: 0, count: offset + bytes.count - reference.count) }
                reference.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
            case 3:
                let size = Int.random(in: (reference.count / 2)...reference.count, using: &generator)
                try log.truncate(to: UInt64(size))
                reference.removeSubrange(size...)
                if reference.count < EncryptedLog.dataPageCapacity {
                    let bytes = (0..<(4 * EncryptedLog.dataPageCapacity)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                    try log.write(bytes, at: UInt64(reference.count))
                    reference += bytes
                }
            default:
                let (offset, count) = Self.range(in: reference.count, using: &generator)
                #expect(try log.read(at: UInt64(offset), count: count) == Array(reference[offset..<(offset + count)]), "\(context): \(count) at \(offset)")
            }
            #expect(try log.size() == UInt64(reference.count), "\(context)")
        }
        #expect(throws: StorageError.self) { try log.read(at: UInt64(reference.count - 5), count: 6) }
    }

    /// Through the engine: a value read (its pages then cached) and replaced by a commit reads as
    /// the new value, in the open engine and after reopening.
    @Test func aValueReplacedByACommitReadsAsTheNewValue() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("replaced.store")
        let configuration = encrypting(fastConfiguration())
        let engine = try StorageEngine(path: path, configuration: configuration)
        var expected: [Int64: [UInt8]] = [:]
        for round in 0..<6 {
            var batch = WriteBatch()
            for key in Int64(0)..<300 where round == 0 || key % Int64(round + 1) == 0 {
                let value = Array("value \(key) of round \(round) ".utf8) + [UInt8](repeating: UInt8(round), count: Int(key % 50))
                batch.put(type: "Item", key: .integer(key), value: value)
                expected[key] = value
            }
            try engine.commit(batch)
            let snapshot = engine.snapshot()
            for key in Int64(0)..<300 {
                #expect(try snapshot.value(type: "Item", key: .integer(key)) == expected[key], "round \(round), key \(key)")
            }
        }
        try engine.close()
        let reopened = try StorageEngine(path: path, configuration: configuration)
        defer { try? reopened.close() }
        let snapshot = reopened.snapshot()
        for key in Int64(0)..<300 {
            #expect(try snapshot.value(type: "Item", key: .integer(key)) == expected[key], "reopened, key \(key)")
        }
    }
}
