import Testing
import TestSupport
@testable import MirrorStoreEngine
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Run blocks read in two pieces, as an encrypted log lends a block from the two pages it lies
/// across (`LogStorage.withPieces`), against the same blocks read in one: random runs of every
/// layout, intact and damaged.
@Suite struct RunBlockPiecesTests {
    /// Random runs written to `log`: integer keys dense and sparse, string keys long enough to
    /// straddle a split, byte keys, mixed keys, and index runs of every key kind.
    static func randomRuns(_ random: inout SeededRandom, in log: MemoryLog) throws -> (keys: [KeyRun], indexes: [IndexRun]) {
        var keySets: [[StorageKey]] = []
        let dense = Int64.random(in: -1_000...1_000, using: &random)
        keySets.append((0..<900).map { .integer(dense + $0) })
        keySets.append(Set((0..<700).map { _ in Int64.random(in: .min ... .max, using: &random) }).map { .integer($0) })
        keySets.append(Set((0..<300).map { _ in randomText(&random) }).map { .string($0) })
        keySets.append(Set((0..<200).map { _ in randomBytes(&random, upTo: 200) }).map { .bytes($0) })
        // UUID-like keys, which blocks of format 6 pack.
        keySets.append(Set((0..<600).map { _ in (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) } }).map { .bytes($0) })
        keySets.append(
            Set((0..<200).map { _ in Int64.random(in: -50...50, using: &random) }).map { StorageKey.integer($0) }
                + Set((0..<200).map { _ in randomText(&random) }).map { .string($0) })
        var keys: [KeyRun] = []
        for keySet in keySets {
            var writer = KeyRunWriter(log: log, sequence: 1, offset: log.size(), packsIntegers: random.chance(50), packsBytes: random.chance(50))
            for key in keySet.sorted(by: StorageKey.precedes) {
                try writer.append(key, packed: random.chance(10) ? 0 : UInt64.random(in: 1...UInt64.max, using: &random))
            }
            keys.append(try #require(try writer.finish()))
        }
        var indexes: [IndexRun] = []
        for _ in 0..<2 {
            let entries = (0..<600).map { _ in IndexEntry(key: randomIndexKey(&random), object: .integer(Int64.random(in: 0...10_000, using: &random))) }
            var unique: [IndexEntry] = []
            for entry in entries.sorted(by: { IndexEntry.precedes($0, $1) }) where unique.last.map({ IndexEntry.precedes($0, entry) }) ?? true {
                unique.append(entry)
            }
            var writer = IndexRunWriter(log: log, sequence: 1, offset: log.size())
            for entry in unique { try writer.append(entry, isLive: !random.chance(20)) }
            indexes.append(try #require(try writer.finish()))
        }
        return (keys, indexes)
    }

    static func randomText(_ random: inout SeededRandom) -> String {
        let scalars: [Character] = ["a", "z", "é", "ß", "中", "🙂", " ", "0"]
        return String((0..<Int.random(in: 0...120, using: &random)).map { _ in scalars.randomElement(using: &random) ?? "a" })
    }

    static func randomBytes(_ random: inout SeededRandom, upTo count: Int) -> [UInt8] {
        (0..<Int.random(in: 0...count, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
    }

    static func randomIndexKey(_ random: inout SeededRandom) -> IndexKey {
        switch Int.random(in: 0..<8, using: &random) {
        case 0: .null
        case 1: .bool(random.chance(50))
        case 2: .integer(Int64.random(in: -100...100, using: &random))
        case 3: .unsigned(UInt64.random(in: 0...1_000, using: &random))
        case 4: .double(Double.random(in: -10...10, using: &random))
        case 5: .string(randomText(&random))
        case 6: .bytes(randomBytes(&random, upTo: 80))
        default: .tuple(IndexTuple([.string(randomText(&random)), .integer(Int64.random(in: 0...9, using: &random))]))
        }
    }

    /// Every read a block can be asked for, as text: two readers of the same bytes must give the
    /// same transcript.
    static func transcript(_ reader: RunBlockReader, probes: [IndexKey], integers: [Int64]) -> [String] {
        var lines = ["\(reader.size) \(String(describing: reader.declaredLength)) \(reader.checksumMatches)"]
        guard reader.size >= RunBlockReader.prefixSize + RunBlockReader.checksumSize else { return lines }
        lines.append("\(reader.layout) \(reader.count) \(reader.isWellFormed)")
        guard reader.isWellFormed else { return lines }
        // Bounds at the block's own keys too, where a search or a walk meets equal keys.
        var bounds = probes
        for position in Set([0, reader.count / 2, reader.count - 1]).sorted() where position >= 0 {
            if let (entry, _) = reader.indexEntry(position) { bounds.append(entry.key) }
        }
        for position in 0..<reader.count {
            lines.append(String(describing: reader.entry(position)))
            lines.append(String(describing: reader.indexEntry(position)))
            lines.append(String(describing: reader.indexFlag(position)))
            for probe in bounds {
                lines.append(String(describing: reader.indexKeyOrder(position, against: probe)))
                lines.append(String(describing: reader.indexObject(position, against: probe)))
            }
        }
        for key in bounds {
            for inclusive in [false, true] {
                lines.append(String(describing: reader.indexEntriesBelow(KeysBelow(before: IndexBound(key, inclusive: inclusive)))))
            }
        }
        // The block's own keys and neighbours of them, as a lookup of a key of any kind searches.
        var keys: [StorageKey] = []
        for position in Set([0, reader.count / 2, reader.count - 1]).sorted() where position >= 0 {
            guard let (key, _) = reader.entry(position) else { continue }
            keys.append(key)
            if case .bytes(var bytes) = key, !bytes.isEmpty {
                bytes[bytes.count - 1] ^= 1
                keys.append(.bytes(bytes))
            }
        }
        for key in keys { lines.append(String(describing: reader.location(of: key))) }
        for wanted in integers {
            lines.append(String(describing: reader.location(ofInteger: wanted)))
            lines.append(String(describing: reader.location(ofInteger: wanted, guess: Int(wanted & 0xFF))))
        }
        return lines
    }

    /// The blocks of `runs` as they lie in `log`, each with its length.
    static func blockBytes(_ offsets: [UInt64], in log: MemoryLog) throws -> [[UInt8]] {
        try offsets.map { offset in
            let prefix = try log.read(at: offset, count: 4)
            let length = Int(prefix[0]) | Int(prefix[1]) << 8 | Int(prefix[2]) << 16 | Int(prefix[3]) << 24
            return try log.read(at: offset, count: 4 + length + RunBlockReader.checksumSize)
        }
    }

    @Test("a block in two pieces reads as in one, at every kind of split, intact and damaged")
    func piecesReadAsOne() throws {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x91EC))
        let log = MemoryLog(LogHeader().encoded())
        let (keys, indexes) = try Self.randomRuns(&random, in: log)
        var blocks = try Self.blockBytes(keys.flatMap(\.blockOffsets) + indexes.flatMap(\.blocks.offsets), in: log)
        blocks += try RunBlockFuzzTests.validBlocks()
        #expect(blocks.count > 20)
        for (number, intact) in blocks.enumerated() {
            for damaged in [false, true] {
                var block = intact
                if damaged {
                    for _ in 0..<Int.random(in: 1...3, using: &random) {
                        block[Int.random(in: 0..<block.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
                    }
                }
                let probes = (0..<3).map { _ in Self.randomIndexKey(&random) } + [.greatest]
                let integers = (0..<6).map { _ in Int64.random(in: -60...1_000, using: &random) }
                let whole = block.withUnsafeBytes { Self.transcript(RunBlockReader(bytes: $0), probes: probes, integers: integers) }
                var splits = [0, 1, RunBlockReader.prefixSize - 1, block.count / 2, block.count - 2, block.count]
                splits += (0..<(number % 4 == 0 ? 30 : 6)).map { _ in Int.random(in: 0...block.count, using: &random) }
                for split in splits where (0...block.count).contains(split) {
                    // Two arrays, so that a read running past a piece is caught (under the address sanitizer too).
                    let head = Array(block[..<split])
                    let tail = Array(block[split...])
                    let pieces = head.withUnsafeBytes { head in
                        tail.withUnsafeBytes { tail in Self.transcript(RunBlockReader(head: head, tail: tail), probes: probes, integers: integers) }
                    }
                    #expect(pieces == whole, "block \(number), damaged \(damaged), split at \(split): \(firstDifference(whole, pieces) ?? "")")
                }
            }
        }
    }

    @Test("runs read through pieces a log lends equal runs read through copies, intact and damaged")
    func lentRunsEqualCopiedRuns() throws {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x1E4D))
        let log = MemoryLog(LogHeader().encoded())
        let (keys, indexes) = try Self.randomRuns(&random, in: log)
        let lending = PiecewiseLog(log)
        let intact = try log.read(at: 0, count: Int(log.size()))
        for round in 0..<12 {
            // Round 0 intact; then bytes flipped in the runs' blocks.
            log.write(intact, at: 0)
            if round > 0 {
                let offsets = keys.flatMap(\.blockOffsets) + indexes.flatMap(\.blocks.offsets)
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let offset = (offsets.randomElement(using: &random) ?? 0) + UInt64.random(in: 0..<64, using: &random)
                    log.write([UInt8.random(in: 0...255, using: &random)], at: offset)
                }
            }
            for run in keys {
                let copied = KeyRun(
                    blockOffsets: run.blockOffsets, blockCounts: run.blockCounts, fences: run.fences, entryCount: run.entryCount,
                    byteCount: run.byteCount, log: log, end: run.blocks.end)
                let lent = KeyRun(
                    blockOffsets: run.blockOffsets, blockCounts: run.blockCounts, fences: run.fences, entryCount: run.entryCount,
                    byteCount: run.byteCount, log: lending, end: run.blocks.end)
                var wanted = (0..<run.fences.count).map { run.fences.key($0) }
                if round == 0 { try run.forEachEntry { key, _ in wanted.append(key) } }
                wanted += (0..<40).map { _ in .integer(Int64.random(in: -2_000...2_000, using: &random)) }
                wanted += (0..<20).map { _ in .string(Self.randomText(&random)) }
                for key in wanted {
                    #expect(Self.outcome { try lent.packed(for: key) } == Self.outcome { try copied.packed(for: key) }, "round \(round), \(key)")
                    if case .integer(let number) = key {
                        #expect(
                            Self.outcome { try lent.packed(forInteger: number) } == Self.outcome { try copied.packed(forInteger: number) },
                            "round \(round), \(number)")
                    }
                }
                #expect(Self.entries(of: lent) == Self.entries(of: copied), "round \(round)")
            }
            for run in indexes {
                let copied = IndexRun(
                    blockOffsets: run.blocks.offsets, fences: run.fences, liveCounts: run.liveCounts, markCounts: run.markCounts,
                    byteCount: run.byteCount, log: log, end: run.blocks.end)
                let lent = IndexRun(
                    blockOffsets: run.blocks.offsets, fences: run.fences, liveCounts: run.liveCounts, markCounts: run.markCounts,
                    byteCount: run.byteCount, log: lending, end: run.blocks.end)
                for block in run.blocks.offsets.indices {
                    for forward in [true, false] {
                        let from = forward ? 0 : run.count(inBlock: block) - 1
                        #expect(
                            Self.outcome { try lent.entries(block, from: from, wanted: 1_000, forward: forward) }
                                == Self.outcome { try copied.entries(block, from: from, wanted: 1_000, forward: forward) },
                            "round \(round), block \(block)")
                    }
                }
            }
        }
    }

    @Test("an encrypted log's pieces are its bytes, those of two pages at most, intact and damaged")
    func encryptedPiecesEqualBytes() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("pieces.store")
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x9A9E5))
        let payload = (0..<60_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        try withEncryptedLog(at: path, holding: payload) { log, damaged in
            let size = try log.size()
            for _ in 0..<3_000 {
                let offset = UInt64.random(in: 0...size, using: &random)
                let count = Int.random(in: 0...min(9_000, Int(size - offset)), using: &random)
                // All of them, or what the first two pages they lie across hold.
                let firstTwo = Int(min(UInt64(count), EncryptedLog.start(ofPage: EncryptedLog.page(containing: offset) + 2) - offset))
                let lent = Result { () throws -> [UInt8] in
                    var bytes: [UInt8] = []
                    try log.withPieces(at: offset, count: count) { head, tail in bytes = Array(head) + Array(tail) }
                    return bytes
                }
                switch lent {
                case .success(let bytes):
                    let start = Int(offset)
                    #expect(bytes == Array(payload[start..<(start + bytes.count)]), "\(count) bytes at \(offset)")
                    #expect(bytes.count == firstTwo, "\(bytes.count) of \(count) bytes at \(offset)")
                case .failure:
                    // Only damage in the two pages the pieces come from: a read of them fails too.
                    #expect(damaged && (try? log.read(at: offset, count: firstTwo)) == nil, "\(count) bytes at \(offset)")
                }
            }
            #expect(throws: StorageError.self) { try log.withPieces(at: size, count: 1) { _, _ in } }
        }
    }

    /// A result or its error, as text.
    static func outcome<Value>(_ body: () throws -> Value) -> String {
        do { return String(describing: try body()) } catch { return "error: \(error)" }
    }

    static func entries(of run: KeyRun) -> String {
        outcome { () throws -> [String] in
            var entries: [String] = []
            try run.forEachEntry { entries.append("\($0) \($1)") }
            return entries
        }
    }
}

/// A log in memory that lends bytes in two pieces split at a place drawn from the offset, and for
/// one offset in three only a prefix of them (shorter than a page: more than `withPieces` asks
/// of a storage), as an encrypted log lends a block lying across its pages.
final class PiecewiseLog: LogStorage {
    let memory: MemoryLog
    var path: String { memory.path }

    init(_ memory: MemoryLog) {
        self.memory = memory
    }

    func size() -> UInt64 { memory.size() }
    func read(at offset: UInt64, count: Int) throws -> [UInt8] { try memory.read(at: offset, count: count) }
    func write(_ bytes: [UInt8], at offset: UInt64) { memory.write(bytes, at: offset) }
    func truncate(to size: UInt64) { memory.truncate(to: size) }
    func sync() {}

    func withPieces(at offset: UInt64, count: Int, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        let bytes = try memory.read(at: offset, count: count)
        let lent = offset % 3 == 0 ? min(count, 8 + Int(offset % 997)) : count
        let split = Int((offset &* 0x9E37_79B9_7F4A_7C15) >> 40) % (lent + 1)
        let head = Array(bytes[..<split])
        let tail = Array(bytes[split..<lent])
        try head.withUnsafeBytes { head in try tail.withUnsafeBytes { tail in try body(head, tail) } }
    }
}
