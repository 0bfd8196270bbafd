import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Power cuts that tear an encrypted store's writes (docs/FILE_FORMAT.md, "Encryption"): a write
/// in flight may reach the disk as any mix of its 512-byte sectors, new and old. The file is
/// copied after commit *k* (state A) and after commit *k* + 1's writes (state B); every mix of the
/// sectors of the physical pages that differ must open as commit *k*'s state or commit *k* + 1's,
/// never as less and never as a `corrupted` error. Replay with MIRRORSTORE_SEED.
@Suite struct EncryptedTearTests {
    static let sector = 512
    static let pageSize = EncryptedFileHeader.pageSize
    static let sectorsPerPage = pageSize / sector

    /// Encrypted, unsynced (the copies stand for what reached the disk), and no checkpoint in
    /// the commits torn here: a checkpoint rewrites a header region page in place.
    static func configuration() -> EngineConfiguration {
        var configuration = encrypting(fastConfiguration())
        configuration.checkpointInterval = 1 << 30
        return configuration
    }

    /// A commit of one value of `length` bytes under `key`.
    static func batch(key: Int, length: Int) -> WriteBatch {
        var batch = WriteBatch()
        batch.put(type: "Torn", key: .integer(Int64(key)), value: (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ key) })
        return batch
    }

    /// Opens every tear of the writes that turned `before` into `after` and expects one of
    /// `allowed`. A tear keeps each sector of a differing page from `before` or from `after`
    /// (zeros where a file was not yet written); the file is as long as one of `lengths` (a
    /// growth or a cut that reached the disk or not). Tried: every mix of one page's sectors
    /// with the other differing pages all old or all new (which includes every prefix and suffix
    /// split), at the longest length; then `samples` seeded mixes over all the differing pages
    /// at once, each at every length.
    static func checkTears(
        before: [UInt8], after: [UInt8], lengths: [Int], allowed: [StoreState], samples: Int, seed: UInt64, label: String
    ) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("torn.store")
        let length = max(before.count, after.count)
        let old = before + [UInt8](repeating: 0, count: length - before.count)
        let new = after + [UInt8](repeating: 0, count: length - after.count)
        let pages = stride(from: 0, to: length, by: pageSize).filter { old[$0..<min(length, $0 + pageSize)] != new[$0..<min(length, $0 + pageSize)] }
        #expect(!pages.isEmpty, "\(label): the commit changed no page")
        var outcomes: [String: Int] = [:]
        func check(_ sectors: Set<Int>, lengths: [Int], description: @autoclosure () -> String) throws {
            var bytes = old
            for start in sectors {
                let end = min(length, start + sector)
                bytes.replaceSubrange(start..<end, with: new[start..<end])
            }
            for cut in lengths {
                try writeFile(path, Array(bytes.prefix(cut)))
                do {
                    let state = try openState(path, configuration())
                    if let which = allowed.firstIndex(of: state) {
                        outcomes["state \(which)", default: 0] += 1
                    } else {
                        Issue.record("\(label), \(description()), \(cut) bytes: opened as \(state), which no allowed commit made")
                    }
                } catch {
                    Issue.record("\(label), \(description()), \(cut) bytes: \(error)")
                }
            }
        }
        let allSectors = pages.flatMap { page in (0..<sectorsPerPage).map { page + $0 * sector }.filter { $0 < length } }
        for page in pages {
            let own = (0..<sectorsPerPage).map { page + $0 * sector }.filter { $0 < length }
            let others = Set(allSectors).subtracting(own)
            for mask in 0..<(1 << own.count) {
                let chosen = Set(own.indices.filter { mask & (1 << $0) != 0 }.map { own[$0] })
                let longest = [lengths.max() ?? length]
                try check(chosen, lengths: longest, description: "page \(page / pageSize) sectors \(String(mask, radix: 2)), other pages old")
                try check(chosen.union(others), lengths: longest, description: "page \(page / pageSize) sectors \(String(mask, radix: 2)), other pages new")
            }
        }
        var generator = SeededRandom(seed: seed)
        for round in 0..<samples {
            let chosen = Set(allSectors.filter { _ in generator.chance(50) })
            try check(chosen, lengths: lengths, description: "seed \(seed) round \(round)")
        }
        // Both ends must be reachable, or the test shows nothing.
        #expect(outcomes.count == allowed.count, "\(label): \(outcomes)")
    }

    /// A store with `commits` small commits, open; the file and state after each is what the
    /// scenarios tear from.
    static func store(at path: String, commits: Int, length: Int) throws -> (StorageEngine, StoreState) {
        let engine = try StorageEngine(path: path, configuration: configuration())
        for number in 0..<commits { try engine.commit(batch(key: number, length: length)) }
        return (engine, try StoreState(engine.snapshot()))
    }

    @Test func aCommitWithinThePartialLastPage() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("extend.store")
        // 30 commits of 100 bytes: the units end inside a data page, well before its end.
        let (engine, stateA) = try Self.store(at: path, commits: 30, length: 100)
        let before = try readFile(path)
        try engine.commit(Self.batch(key: 1000, length: 100))
        let stateB = try StoreState(engine.snapshot())
        let after = try readFile(path)
        try engine.close()
        try Self.checkTears(
            before: before, after: after, lengths: [before.count, after.count], allowed: [stateA, stateB], samples: 150,
            seed: SeededRandom.seed(default: 0x7EA2_0001), label: "extend")
    }

    /// The same with the partial page nearly full, so that its tail slot spans both its pages.
    @Test func aCommitThatNearlyFillsThePartialPage() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("nearly.store")
        let (engine, _) = try Self.store(at: path, commits: 28, length: 100)
        // A unit's bytes besides its value, from the last commit.
        let sizeBefore = engine.statistics.fileSize
        try engine.commit(Self.batch(key: 500, length: 100))
        let unitOverhead = Int(engine.statistics.fileSize - sizeBefore) - 100
        let stateA = try StoreState(engine.snapshot())
        let before = try readFile(path)
        let logical = Int(engine.statistics.fileSize) - LogHeader.regionSize
        let tailLength = logical % EncryptedLog.dataPageCapacity
        // The new last page holds about 4,060 of its 4,066 bytes: sealed with its page number
        // and version, over 4,096 bytes, past the slot's first page.
        let length = 4_060 - tailLength - unitOverhead
        #expect(length > 0)
        try engine.commit(Self.batch(key: 1000, length: length))
        // (A unit's length varint may take a byte more.)
        #expect((4_051..<EncryptedLog.dataPageCapacity).contains(Int(engine.statistics.fileSize) - LogHeader.regionSize - logical + tailLength))
        let stateB = try StoreState(engine.snapshot())
        let after = try readFile(path)
        try engine.close()
        try Self.checkTears(
            before: before, after: after, lengths: Array(Set([before.count, after.count])).sorted(), allowed: [stateA, stateB],
            samples: 150, seed: SeededRandom.seed(default: 0x7EA2_0004), label: "nearly full")
    }

    @Test func aCommitThatFillsThePartialPageAndSpillsIntoNewOnes() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("spill.store")
        let (engine, stateA) = try Self.store(at: path, commits: 30, length: 100)
        let before = try readFile(path)
        // About two and a half pages: the partial page fills, a full page follows, then a partial one.
        try engine.commit(Self.batch(key: 1000, length: 10_000))
        let stateB = try StoreState(engine.snapshot())
        let after = try readFile(path)
        try engine.close()
        try Self.checkTears(
            before: before, after: after, lengths: Array(Set([before.count, after.count])).sorted(), allowed: [stateA, stateB],
            samples: 300, seed: SeededRandom.seed(default: 0x7EA2_0002), label: "spill")
    }

    /// Recovery cuts a torn tail (bytes that authenticate as pages but end in half a unit): the
    /// cut itself torn leaves the state before the torn unit. The torn bytes span a page boundary,
    /// so the cut both rewrites the last page shorter and removes pages.
    @Test func aTruncationOfATornTail() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("cut.store")
        let (engine, stateA) = try Self.store(at: path, commits: 30, length: 100)
        try engine.close()
        // Half a unit at the log's end, written below the engine: a frame that promises more
        // bytes than follow.
        let descriptor = open(path, O_RDWR)
        #expect(descriptor >= 0)
        let file = FileLog(path: path, descriptor: descriptor, faults: nil)
        let log = try EncryptedLog.storage(for: file, keys: EncryptionKeys(.key(testEncryptionKey)), writable: true)
        let end = try log.size()
        // Length 100,000 (little-endian), then filler where the checksum, sequence and payload go.
        let torn = [0xA0, 0x86, 0x01, 0x00] + [UInt8](repeating: 0xA5, count: 4_996)
        try log.write(torn, at: end)
        try log.sync()
        let before = try readFile(path)
        #expect(try openState(path, Self.configuration()) == stateA)
        let after = try readFile(path)
        #expect(after.count < before.count, "recovery cut the torn tail and the pages it filled")
        // The shortened page is written and synced before any page is cut: a cut never reaches
        // the disk before that write, so the tears keep the old length and the pages to be cut.
        try Self.checkTears(
            before: before, after: after + before.suffix(from: min(after.count, before.count)),
            lengths: [before.count], allowed: [stateA], samples: 150, seed: SeededRandom.seed(default: 0x7EA2_0003),
            label: "truncation")
        try writeFile(path, after)
        #expect(try openState(path, Self.configuration()) == stateA)
    }
}
