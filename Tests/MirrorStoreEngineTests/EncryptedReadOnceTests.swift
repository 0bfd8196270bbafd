import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// `EncryptedLog.readOnce(at:count:)`, which decrypts stretches of pages from one `pread`
/// without keeping them, beside `read(at:count:)`, which reads a page at a time through the
/// cache: random reads of random writes give the same bytes through both, whatever pages are
/// cached at the time; a flipped bit in a page neither holds in memory is `corrupted` through
/// `readOnce` too, never other bytes.
@Suite struct EncryptedReadOnceTests {
    static func log(scratch: Bool) throws -> (log: EncryptedLog, file: FileLog) {
        let file = try #require(ScratchFile.make())
        let log = scratch
            ? try EncryptedLog.scratch(in: file)
            : try EncryptedLog.create(in: file, keys: EncryptionKeys(.key(testEncryptionKey)))
        return (log, file)
    }

    @Test(arguments: [(0, false), (1, false), (2, true), (3, true)])
    func readOnceReadsAsRead(seed: UInt64, scratch: Bool) throws {
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x0ACE_0000 + seed))
        let (log, file) = try Self.log(scratch: scratch)
        var written: [UInt8] = []
        while written.count < (EncryptedLog.cachedScratchPages + 100) * EncryptedLog.dataPageCapacity {
            let piece = (0..<Int.random(in: 1...20_000, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            try log.write(piece, at: UInt64(written.count))
            written += piece
        }
        var readThroughCache = Set<Int>()
        for step in 0..<300 {
            let offset = Int.random(in: 0..<written.count, using: &generator)
            let count = Int.random(in: 1...min(written.count - offset, Int.random(in: 1...5, using: &generator) == 1 ? 200_000 : 9_000), using: &generator)
            let expected = Array(written[offset..<(offset + count)])
            let context = "seed \(seed), step \(step), \(count) bytes at \(offset)"
            #expect(try log.readOnce(at: UInt64(offset), count: count) == expected, "\(context)")
            if step % 3 == 0 {
                #expect(try log.read(at: UInt64(offset), count: count) == expected, "\(context), read")
                let first = EncryptedLog.page(containing: UInt64(offset))
                readThroughCache.formUnion(first...EncryptedLog.page(containing: UInt64(offset + count - 1)))
            }
        }
        #expect(throws: StorageError.self) { try log.readOnce(at: UInt64(written.count - 10), count: 11) }
        // Damage: a page that no read kept reads as `corrupted`; one still cached reads as written.
        let pages = EncryptedLog.page(containing: UInt64(written.count))
        for _ in 0..<12 {
            let page = Int.random(in: EncryptedLog.regionPages..<(pages - 1), using: &generator)
            let sealedCount = EncryptedLog.overhead + EncryptedLog.capacity(ofPage: page)
            let physical = log.homeOffset(page) + UInt64(Int.random(in: 0..<sealedCount, using: &generator))
            let byte = try file.readOnce(at: physical, count: 1)[0]
            try file.write([byte ^ (1 << UInt8.random(in: 0...7, using: &generator))], at: physical)
            let start = Int(EncryptedLog.start(ofPage: page - 1))
            let count = Int(EncryptedLog.start(ofPage: page + 2)) - start
            let context = "seed \(seed), page \(page)"
            do {
                let bytes = try log.readOnce(at: UInt64(start), count: count)
                #expect(bytes == Array(written[start..<(start + count)]), "\(context): other bytes")
                #expect(readThroughCache.contains(page), "\(context): a damaged page read without an error")
            } catch let error as StorageError {
                guard case .corrupted = error.kind else {
                    Issue.record("\(context): \(error)")
                    continue
                }
            }
        }
    }
}
