import Testing
import TestSupport
@testable import MirrorStoreEngine

/// The run block reader on damaged and random blocks: every read of every layout either
/// decodes or says it cannot, never traps, whatever the bytes (the checksum is what keeps such
/// blocks from being read in a store; this is the reader's own guard).
@Suite struct RunBlockFuzzTests {
    /// A valid block of `layout` built by the writers, as a starting point for mutations.
    static func validBlocks() throws -> [[UInt8]] {
        let log = MemoryLog(LogHeader().encoded())
        var keys = KeyRunWriter(log: log, sequence: 1, offset: LogHeader().unitsStart, packsIntegers: true)
        for number in 100..<140 { try keys.append(.string("key \(number)"), packed: UInt64(number)) }
        let keyRun = try #require(try keys.finish())
        var integers = KeyRunWriter(log: log, sequence: 1, offset: log.size(), packsIntegers: false)
        for number in 0..<40 { try integers.append(.integer(Int64(number)), packed: UInt64(number + 1)) }
        let integerRun = try #require(try integers.finish())
        // Packed blocks: dense keys, then keys with gaps (a key width), long offsets and lengths.
        var dense = KeyRunWriter(log: log, sequence: 1, offset: log.size(), packsIntegers: true)
        for number in 0..<40 { try dense.append(.integer(Int64(number) - 3), packed: UInt64(4_096 + 70 * number) << 24 | 70) }
        let denseRun = try #require(try dense.finish())
        var sparse = KeyRunWriter(log: log, sequence: 1, offset: log.size(), packsIntegers: true)
        for number in 0..<40 { try sparse.append(.integer(Int64(number) * 300_000), packed: UInt64(1 << 30 + 1_000 * number) << 24 | UInt64(70_000 + number)) }
        let sparseRun = try #require(try sparse.finish())
        var index = IndexRunWriter(log: log, sequence: 1, offset: log.size())
        let keysOfIndex: [IndexKey] = [.null, .bool(false), .bool(true), .integer(-3), .double(2.5), .unsigned(7), .string("é"), .bytes([0, 1]),
                                       .tuple(IndexTuple([.string("a"), .integer(1)]))]
        for (position, key) in keysOfIndex.enumerated() {
            try index.append(IndexEntry(key: key, object: .integer(Int64(position))), isLive: position % 3 != 0)
        }
        let run = try #require(try index.finish())
        let bytes = try log.read(at: 0, count: Int(log.size()))
        var blocks: [[UInt8]] = []
        for offset in keyRun.blocks.offsets + integerRun.blocks.offsets + denseRun.blocks.offsets + sparseRun.blocks.offsets + run.blocks.offsets {
            let start = Int(offset)
            let length = Int(bytes[start]) | Int(bytes[start + 1]) << 8 | Int(bytes[start + 2]) << 16 | Int(bytes[start + 3]) << 24
            blocks.append(Array(bytes[start..<(start + 4 + length + RunBlockReader.checksumSize)]))
        }
        return blocks
    }

    /// Reads everything a block can be asked for.
    static func readEverything(_ block: [UInt8]) {
        block.withUnsafeBytes { bytes in
            guard bytes.count >= RunBlockReader.prefixSize + RunBlockReader.checksumSize else { return }
            let reader = RunBlockReader(bytes: bytes)
            guard reader.isWellFormed else { return }
            for position in 0..<reader.count {
                _ = reader.entry(position)
                _ = reader.indexEntry(position)
                _ = reader.indexFlag(position)
                for key: IndexKey in [.null, .integer(3), .double(-1), .string("key"), .bytes([1]), .tuple(IndexTuple([.string("a")])), .greatest] {
                    _ = reader.indexKeyOrder(position, against: key)
                }
            }
            for wanted: Int64 in [5, -3, 36, 300_000, .min, .max] {
                _ = reader.location(ofInteger: wanted)
                _ = reader.location(ofInteger: wanted, guess: 2)
                _ = reader.location(ofInteger: wanted, guess: 39)
            }
        }
    }

    @Test func damagedAndRandomBlocksNeverTrap() throws {
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0xB10C))
        let valid = try Self.validBlocks()
        #expect(valid.count >= 5)
        #expect(valid.map { $0[4] }.sorted() == [0, 1, 2, 3, 3])
        for block in valid {
            block.withUnsafeBytes { #expect(RunBlockReader(bytes: $0).isWellFormed) }
            Self.readEverything(block)
        }
        for _ in 0..<4_000 {
            var block = generator.pick(valid)
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                let at = Int.random(in: 0..<block.count, using: &generator)
                block[at] = generator.integer(UInt8.self)
            }
            if generator.chance(10) { block = Array(block.prefix(Int.random(in: 0...block.count, using: &generator))) }
            Self.readEverything(block)
        }
        for _ in 0..<1_000 {
            Self.readEverything((0..<Int.random(in: 0...200, using: &generator)).map { _ in generator.integer(UInt8.self) })
        }
    }
}
