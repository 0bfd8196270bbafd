import Foundation
import Testing
import TestSupport
@_spi(Testing) @testable import MirrorStoreEngine

/// An encrypted store's scratch files (`ScratchFile.make(sealed:)`, `EncryptedLog.scratch(in:)`):
/// what is written reads back as written, a changed byte anywhere in a page is a typed error
/// when that page is read (never other bytes, never an empty checkpoint slot's zeros), and the
/// file holds none of the keys or values in the clear.
@Suite struct SealedScratchTests {
    /// A sealed scratch log and the plain file beneath it, which the tests damage.
    static func sealedScratch() throws -> (log: EncryptedLog, file: FileLog) {
        let file = try #require(ScratchFile.make())
        return (try EncryptedLog.scratch(in: file), file)
    }

    /// Writes in run-block-sized pieces more pages than the log keeps decrypted, so that the
    /// first ones are read from the file again; each page, the header region's included, with
    /// one bit flipped where it is sealed, fails to read with `corrupted`, and the others still
    /// read as written.
    @Test(arguments: 0..<3) func aFlippedBitInAScratchPageIsATypedError(seed: UInt64) throws {
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x5CA7_0000 + seed))
        let (log, file) = try Self.sealedScratch()
        var written: [UInt8] = []
        while written.count < (EncryptedLog.cachedScratchPages + 64) * EncryptedLog.dataPageCapacity {
            let piece = (0..<Int.random(in: 1...5_000, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            try log.write(piece, at: UInt64(written.count))
            written += piece
        }
        #expect(try log.size() == UInt64(written.count))
        #expect(try log.read(at: 0, count: written.count) == written, "seed \(seed)")
        // The header region's pages (the checkpoint slots among them) and pages after it, all
        // long out of the cache.
        let damaged = [0, 1, 2, 3, EncryptedLog.regionPages + 1, EncryptedLog.regionPages + 20]
        for page in damaged {
            let sealedCount = EncryptedLog.overhead + EncryptedLog.capacity(ofPage: page)
            let physical = log.homeOffset(page) + UInt64(Int.random(in: 0..<sealedCount, using: &generator))
            let byte = try file.readOnce(at: physical, count: 1)[0]
            try file.write([byte ^ (1 << UInt8.random(in: 0...7, using: &generator))], at: physical)
        }
        for page in 0..<(EncryptedLog.regionPages + 30) {
            let start = EncryptedLog.start(ofPage: page)
            let count = EncryptedLog.capacity(ofPage: page)
            let context = "seed \(seed), page \(page)"
            if damaged.contains(page) {
                let error = #expect(throws: StorageError.self, "\(context)") { try log.read(at: start, count: count) }
                guard case .corrupted = error?.kind else {
                    Issue.record("\(context): \(String(describing: error)) is not a damaged file's error")
                    continue
                }
            } else {
                #expect(try log.read(at: start, count: count) == Array(written[Int(start)..<(Int(start) + count)]), "\(context)")
            }
        }
    }

    /// Key runs written to a sealed scratch file (as `StreamSpill` and `StreamKeyTable` write
    /// them), then bits flipped in pages of the file: every lookup gives the key's value or
    /// throws a `StorageError`, never another value, and some throw.
    @Test func damagedSealedKeyRunsGiveTheValueOrAnError() throws {
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x5CA7_0100))
        let (log, file) = try Self.sealedScratch()
        var runs = RewriteKeyRuns(bound: 500, log: log, sequence: 1, valuesInLog: false)
        var index = KeyIndex()
        var reference: [Int64: UInt64] = [:]
        var end: UInt64 = 0
        for _ in 0..<40_000 {
            let key = Int64.random(in: 0..<1_000_000, using: &generator)
            let value = UInt64.random(in: 1...UInt64(1 << 40), using: &generator)
            index.types["", default: TypeIndex()].overwrite(.integer(key), value)
            reference[key] = value
            if (index.types[""]?.memoryCount ?? 0) >= runs.bound { end = try runs.spill(&index, at: end) }
        }
        let objects = try #require(index.types[""])
        #expect(!objects.runs.isEmpty)
        for (key, value) in reference { #expect(try objects.location(for: .integer(key)) == value, "\(key)") }
        let pages = EncryptedLog.page(containing: end)
        // Written after the runs and read, so that none of the runs' pages is still decrypted in memory.
        let filler = (EncryptedLog.cachedScratchPages + 8) * EncryptedLog.dataPageCapacity
        try log.write([UInt8](repeating: 0xA5, count: filler), at: end)
        _ = try log.read(at: end, count: filler)
        for _ in 0..<20 {
            let page = Int.random(in: 0..<pages, using: &generator)
            let sealedCount = EncryptedLog.overhead + EncryptedLog.capacity(ofPage: page)
            let physical = log.homeOffset(page) + UInt64(Int.random(in: 0..<sealedCount, using: &generator))
            let byte = try file.readOnce(at: physical, count: 1)[0]
            try file.write([byte ^ (1 << UInt8.random(in: 0...7, using: &generator))], at: physical)
        }
        var failures = 0
        for (key, value) in reference {
            do {
                let found = try objects.location(for: .integer(key))
                #expect(found == value, "\(key): a damaged scratch file gave another value")
            } catch is StorageError {
                failures += 1
            }
        }
        #expect(failures > 0, "the damaged pages were read")
    }

    #if os(Linux)
    /// The contents of the unnamed scratch files this process holds open (`/proc/self/fd`).
    static func openScratchFiles() -> [[UInt8]] {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.compactMap { descriptor in
            let link = "/proc/self/fd/" + descriptor
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: link),
                  target.contains("mirrorstore-scratch"), let data = FileManager.default.contents(atPath: link) else { return nil }
            return Array(data)
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: String) -> Bool {
        let needle = Array(needle.utf8)
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { start in
            haystack[start] == needle[0] && Array(haystack[start..<(start + needle.count)]) == needle
        }
    }

    /// A streamed commit whose keys and index entries spill (`StreamSpill`, `StreamIndexSpill`)
    /// and a transaction's key table (`StreamKeyTable`): sealed, their scratch files hold none of
    /// the keys or indexed values; plain, they hold them (the search finds what is there).
    @Test(arguments: [false, true]) func sealedScratchFilesHoldNoKeyOrValueInTheClear(sealed: Bool) throws {
        let marker = sealed ? "sealed-marker" : "plain-marker"
        let directory = TemporaryDirectory()
        let path = directory.file("\(marker).store")
        var configuration = StreamSpillTests.configuration(interval: 1 << 30, keysInMemory: 3, encrypted: sealed)
        configuration.autoCompaction = .disabled
        let engine = try StorageEngine(path: path, configuration: configuration)
        #expect(engine.sealsScratchFiles == sealed)
        try engine.defineIndexes([IndexDefinition(name: "T.value", typeName: "T", isUnique: false) { value in [.bytes(value)] }])
        let stream = try #require(try engine.beginStream())
        for chunk in 0..<10 {
            var piece = WriteBatch()
            for number in (chunk * 20)..<(chunk * 20 + 20) {
                piece.put(type: "T", key: .string("\(marker)-key-\(number)"), value: Array("\(marker)-value-\(number)".utf8))
            }
            _ = try stream.write(piece)
        }
        try engine.wait(for: engine.submit(WriteBatch(), completing: stream))
        var table = StreamKeyTable(keysInMemory: 4, sealed: sealed)
        for number in 0..<100 { table.set(.string("\(marker)-table-\(number)"), UInt64(number + 1)) }
        #expect(table.runCount > 0)
        #expect(try table.value(for: .string("\(marker)-table-7")) == 8)
        let snapshot = engine.snapshot()
        #expect(try snapshot.value(type: "T", key: .string("\(marker)-key-150")) == Array("\(marker)-value-150".utf8))
        let files = Self.openScratchFiles()
        for text in ["\(marker)-key-", "\(marker)-value-", "\(marker)-table-"] {
            let found = files.contains { Self.contains($0, text) }
            #expect(found != sealed, "\(text) \(found ? "is" : "is not") in a scratch file")
        }
        try engine.close()
    }
    #endif
}
