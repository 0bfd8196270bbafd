import Testing
import TestSupport
@testable import MirrorStoreEngine

/// The search of a general key-run block in place (`RunBlockReader.location(of:)`, which
/// compares byte-string and ASCII keys where they lie, byte strings of a block in one piece by
/// `location(ofByteKey:)`, 16-byte ones as two words) against the search that decodes every
/// probed entry as a `StorageKey`, on random keys of every kind, intact and damaged blocks.
@Suite struct InPlaceKeySearchTests {
    /// Keys that stress the order: byte strings that begin one another, ASCII and non-ASCII
    /// strings (composed, decomposed, a Kelvin sign whose NFC form is ASCII "K"), integers.
    static func randomKey(_ generator: inout SeededRandom) -> StorageKey {
        let alphabet: [String] = ["a", "b", "K", "z", "0", "é", "e\u{301}", "\u{212A}", "ß", "~"]
        switch Int.random(in: 0..<10, using: &generator) {
        case 0: return .integer(Int64.random(in: -50...50, using: &generator))
        case 1..<5:
            let count = Int.random(in: 0...18, using: &generator)
            return .bytes((0..<count).map { _ in generator.chance(50) ? UInt8.random(in: 0...3, using: &generator) : generator.integer(UInt8.self) })
        default:
            let count = Int.random(in: 0...6, using: &generator)
            return .string((0..<count).map { _ in generator.pick(alphabet) }.joined())
        }
    }

    /// The blocks of a key run holding `keys` (sorted and made distinct here), as byte arrays.
    static func blocks(of keys: [StorageKey]) throws -> (blocks: [[UInt8]], entries: [(StorageKey, UInt64)]) {
        var distinct: [StorageKey] = []
        for key in keys.sorted(by: StorageKey.precedes) where distinct.last.map({ StorageKey.precedes($0, key) }) ?? true {
            distinct.append(key)
        }
        let log = MemoryLog(LogHeader().encoded())
        var writer = KeyRunWriter(log: log, sequence: 1, offset: LogHeader().unitsStart, packsIntegers: true)
        var entries: [(StorageKey, UInt64)] = []
        for (position, key) in distinct.enumerated() {
            let packed = UInt64(position + 1) << 24 | UInt64(position % 7)
            try writer.append(key, packed: packed)
            entries.append((key, packed))
        }
        let run = try #require(try writer.finish())
        let bytes = try log.read(at: 0, count: Int(log.size()))
        let blocks = run.blocks.offsets.map { offset -> [UInt8] in
            let start = Int(offset)
            let length = Int(bytes[start]) | Int(bytes[start + 1]) << 8 | Int(bytes[start + 2]) << 16 | Int(bytes[start + 3]) << 24
            return Array(bytes[start..<(start + 4 + length + RunBlockReader.checksumSize)])
        }
        return (blocks, entries)
    }

    /// The search as it was before keys were compared in place: every probed entry decoded.
    static func decodingSearch(_ reader: RunBlockReader, _ key: StorageKey) -> RunBlockReader.KeySearch {
        var low = 0
        var high = reader.count
        while low < high {
            let middle = (low + high) / 2
            guard let found = reader.entry(middle) else { return .damaged }
            if found.key == key { return .found(found.packed) }
            if StorageKey.precedes(found.key, key) { low = middle + 1 } else { high = middle }
        }
        return .absent
    }

    /// Both searches of `block` for every probe agree, and every in-place comparison agrees with
    /// the entry decoded: returns how many probes found their key.
    static func compare(_ block: [UInt8], probes: [StorageKey]) -> Int {
        block.withUnsafeBytes { bytes -> Int in
            guard bytes.count >= RunBlockReader.prefixSize + RunBlockReader.checksumSize else { return 0 }
            let reader = RunBlockReader(bytes: bytes)
            guard reader.isWellFormed, reader.layout != RunBlockReader.walkedLayout else { return 0 }
            var found = 0
            for probe in probes {
                let search = reader.location(of: probe)
                #expect(search == decodingSearch(reader, probe), "probe \(probe)")
                if case .found = search { found += 1 }
                let wanted: (tag: UInt8, body: [UInt8])? = switch probe {
                case .bytes(let body): (OperationCodec.KeyTag.bytes.rawValue, body)
                case .string(let text) where text.utf8.allSatisfy({ $0 < 0x80 }): (OperationCodec.KeyTag.string.rawValue, Array(text.utf8))
                default: nil
                }
                guard let wanted else { continue }
                for index in 0..<reader.count {
                    guard let order = wanted.body.withUnsafeBytes({ reader.entryOrder(index, tag: wanted.tag, against: $0) }) else { continue }
                    guard let entry = reader.entry(index) else {
                        Issue.record("entry \(index) compared in place but does not decode")
                        continue
                    }
                    let expected = entry.key == probe ? 0 : StorageKey.precedes(entry.key, probe) ? -1 : 1
                    #expect(order.order == expected && order.packed == entry.packed, "entry \(entry.key) against \(probe)")
                }
            }
            return found
        }
    }

    @Test func inPlaceSearchAgreesWithDecodingOnRandomKeys() throws {
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x5EA4C4))
        var found = 0
        for _ in 0..<40 {
            let keys = (0..<Int.random(in: 1...600, using: &generator)).map { _ in Self.randomKey(&generator) }
            let (blocks, entries) = try Self.blocks(of: keys)
            // Every stored key, its canonical equivalents and random others.
            let probes = entries.map(\.0) + [.string("K"), .string("\u{212A}"), .string("é"), .string("e\u{301}")]
                + (0..<60).map { _ in Self.randomKey(&generator) }
            for block in blocks { found += Self.compare(block, probes: probes) }
            // Each stored key is found in the block its fences would pick, the last one starting at or before it.
            for (key, packed) in entries {
                let holding = blocks.last { block in
                    block.withUnsafeBytes { bytes in
                        RunBlockReader(bytes: bytes).entry(0).map { !StorageKey.precedes(key, $0.key) } ?? false
                    }
                }
                let search = try #require(holding).withUnsafeBytes { RunBlockReader(bytes: $0).location(of: key) }
                #expect(search == .found(packed), "key \(key)")
            }
        }
        #expect(found > 1_000)
    }

    @Test func inPlaceSearchAgreesWithDecodingOnDamagedBlocks() throws {
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0xDA4A6E))
        let keys = (0..<400).map { _ in Self.randomKey(&generator) }
        let (blocks, entries) = try Self.blocks(of: keys)
        let probes = entries.map(\.0)
        for _ in 0..<1_500 {
            var block = generator.pick(blocks)
            for _ in 0..<Int.random(in: 1...3, using: &generator) { block = generator.damaged(block) }
            _ = Self.compare(block, probes: Array(probes.shuffled(using: &generator).prefix(40)))
        }
    }

    /// A key of 16 bytes (a UUID's), most beginning with one of `prefixes`, so that the two
    /// words the in-place search compares decide in turn; now and then a key of another kind or
    /// length.
    static func uuidKey(_ generator: inout SeededRandom, prefixes: [[UInt8]]) -> StorageKey {
        switch Int.random(in: 0..<10, using: &generator) {
        case 0: return randomKey(&generator)
        case 1, 2: return .bytes((0..<16).map { _ in generator.integer(UInt8.self) })
        default: return .bytes(generator.pick(prefixes) + (0..<8).map { _ in generator.chance(30) ? 0 : generator.integer(UInt8.self) })
        }
    }

    @Test func inPlaceSearchOfUUIDKeysAgreesWithDecoding() throws {
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x0A1D_5EA4))
        let prefixes = (0..<4).map { _ in (0..<8).map { _ in generator.integer(UInt8.self) } }
        var found = 0
        var damagedBlocks: [[UInt8]] = []
        var damagedProbes: [StorageKey] = []
        for _ in 0..<20 {
            let keys = (0..<Int.random(in: 1...900, using: &generator)).map { _ in Self.uuidKey(&generator, prefixes: prefixes) }
            let (blocks, entries) = try Self.blocks(of: keys)
            let probes = entries.map(\.0) + (0..<60).map { _ in Self.uuidKey(&generator, prefixes: prefixes) }
            for block in blocks { found += Self.compare(block, probes: probes) }
            damagedBlocks += blocks
            damagedProbes += entries.map(\.0).prefix(50)
        }
        #expect(found > 2_000)
        for _ in 0..<1_000 {
            var block = generator.pick(damagedBlocks)
            for _ in 0..<Int.random(in: 1...3, using: &generator) { block = generator.damaged(block) }
            _ = Self.compare(block, probes: (0..<30).map { _ in generator.pick(damagedProbes) })
        }
    }

    /// The fence search as it was before keys were compared in place.
    static func decodingFenceSearch(_ fences: [StorageKey], _ key: StorageKey) -> Int? {
        var low = 0
        var high = fences.count
        while low < high {
            let middle = (low + high) / 2
            if !StorageKey.precedes(key, fences[middle]) { low = middle + 1 } else { high = middle }
        }
        return low > 0 ? low - 1 : nil
    }

    @Test func inPlaceFenceSearchAgreesWithOrderingKeys() {
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0xFE4CE5))
        for _ in 0..<200 {
            var fences: [StorageKey] = []
            for key in (0..<Int.random(in: 0...80, using: &generator)).map({ _ in Self.randomKey(&generator) }).sorted(by: StorageKey.precedes)
            where fences.last.map({ StorageKey.precedes($0, key) }) ?? true {
                fences.append(key)
            }
            let probes = fences + [.string("K"), .string("\u{212A}"), .string("é"), .string("e\u{301}"), .string(""), .bytes([])]
                + (0..<40).map { _ in Self.randomKey(&generator) }
            for probe in probes {
                #expect(KeyRun.Fences.keys(fences).block(for: probe) == Self.decodingFenceSearch(fences, probe), "probe \(probe)")
            }
        }
    }
}
