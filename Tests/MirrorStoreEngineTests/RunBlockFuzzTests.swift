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

    /// A log whose values lie as commits lay them (a dense run of puts, then a stepped one, values
    /// long and short), the entries that locate them, and a run of walked blocks over them written
    /// after them in the same log.
    static func walkedLog() throws -> (log: MemoryLog, run: KeyRun, expected: [(key: Int64, packed: UInt64)]) {
        var generator = SeededRandom(seed: 0x3A1C)
        var batch = WriteBatch()
        for key in 0..<300 {
            let length = generator.chance(10) ? Int.random(in: 128...400, using: &generator) : Int.random(in: 0...40, using: &generator)
            batch.put(type: "P", key: .integer(Int64(key)), value: (0..<length).map { _ in generator.integer(UInt8.self) })
        }
        var key: Int64 = 10_000
        for _ in 0..<200 {
            key += Int64.random(in: 2...9, using: &generator)
            batch.put(type: "P", key: .integer(key), value: (0..<Int.random(in: 0...30, using: &generator)).map { _ in generator.integer(UInt8.self) })
        }
        var types = TypeTable()
        let start = LogHeader().unitsStart
        let (payload, decoded) = OperationCodec.encode(batch.operations, types: &types, fileOffset: start, packing: .current)
        let log = MemoryLog(LogHeader().encoded() + payload)
        var expected: [(key: Int64, packed: UInt64)] = []
        for case .put(_, .integer(let key), let offset, let length) in decoded { expected.append((key, ValueLocation(offset: offset, length: length).packed)) }
        var writer = KeyRunWriter(log: log, sequence: 1, offset: log.size(), packsIntegers: true, walksLocations: true)
        for entry in expected { try writer.append(.integer(entry.key), packed: entry.packed) }
        return (log, try #require(try writer.finish()), expected)
    }

    /// The walked run reads back every location, by lookup and in a pass; then its blocks damaged,
    /// and the log they walk damaged, never trap: a walk that ends lands inside the block's values,
    /// and the dense lookup answers as the general one, intact and damaged.
    @Test func walkedBlocksAndTheirWalksNeverTrap() throws {
        let (log, run, expected) = try Self.walkedLog()
        var layouts: [UInt8] = []
        for block in run.blocks.offsets.indices { layouts.append(try run.withBlock(block) { $0.layout }) }
        #expect(layouts.filter { $0 == RunBlockReader.walkedLayout }.count >= 2, "\(layouts)")
        for entry in expected { #expect(try run.packed(forInteger: entry.key) == entry.packed) }
        var read: [(StorageKey, UInt64)] = []
        try run.forEachEntry { read.append(($0, $1)) }
        #expect(read.map(\.0) == expected.map { .integer($0.key) })
        #expect(read.map(\.1) == expected.map(\.packed))

        let bytes = try log.read(at: 0, count: Int(log.size()))
        var blocks: [[UInt8]] = []
        for offset in run.blocks.offsets {
            let start = Int(offset)
            let length = Int(bytes[start]) | Int(bytes[start + 1]) << 8 | Int(bytes[start + 2]) << 16 | Int(bytes[start + 3]) << 24
            blocks.append(Array(bytes[start..<(start + 4 + length + RunBlockReader.checksumSize)]))
        }
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x3A1D))
        let wanted = expected.map(\.key) + [-1, 299, 300, 9_999, .min, .max]
        for round in 0..<3_000 {
            var block = generator.pick(blocks)
            var values = bytes
            if round > 0 {
                if generator.chance(50) {
                    for _ in 0..<Int.random(in: 1...6, using: &generator) { block[Int.random(in: 0..<block.count, using: &generator)] = generator.integer(UInt8.self) }
                    if generator.chance(10) { block = Array(block.prefix(Int.random(in: 0...block.count, using: &generator))) }
                } else {
                    for _ in 0..<Int.random(in: 1...6, using: &generator) {
                        values[Int.random(in: Int(LogHeader().unitsStart)..<values.count, using: &generator)] = generator.integer(UInt8.self)
                    }
                }
            }
            Self.readEverything(block)
            block.withUnsafeBytes { blockBytes in
                values.withUnsafeBytes { logBytes in
                    guard blockBytes.count >= RunBlockReader.prefixSize + RunBlockReader.checksumSize else { return }
                    let reader = RunBlockReader(bytes: blockBytes)
                    guard reader.isWellFormed else { return }
                    for key in wanted.shuffled(using: &generator).prefix(20) {
                        // The dense route, where it answers, answers as the general one.
                        if let fast = reader.denseWalk(ofInteger: key) {
                            #expect(fast == reader.walkedLocation(ofInteger: key, guess: { -1 }), "round \(round), key \(key)")
                        }
                        guard case .walk(var walk) = reader.location(ofInteger: key) else { continue }
                        let end = walk.end
                        if walk.advance(in: logBytes, from: 0) == true {
                            #expect((walk.packed >> 24) + (walk.packed & 0xFF_FFFF) <= end)
                        }
                    }
                    if let span = reader.walkedSpan, span.end <= UInt64(logBytes.count) {
                        var entries: [(key: StorageKey, packed: UInt64)] = []
                        _ = reader.appendWalkedEntries(to: &entries, log: logBytes, from: 0)
                        #expect(entries.allSatisfy { ($0.packed >> 24) + ($0.packed & 0xFF_FFFF) <= span.end })
                    }
                }
            }
        }
    }
}
