import Testing
import TestSupport
@testable import MirrorStoreEngine

/// `ByteKeyMap` against a `Dictionary`: random sets, replacements, removals and reads of byte
/// keys of several lengths (empty, UUID-sized, long, sharing prefixes) and of strings (ASCII,
/// precomposed and decomposed accents, which are one key); after every step the same answers
/// and count, and at checkpoints the same entries in byte order.
@Suite struct ByteKeyMapTests {
    @Test("byte keys: the map answers as a dictionary does, its entries in byte order", arguments: 0..<4)
    func bytesAgainstDictionary(shape: Int) {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0xB7E_0000) &+ UInt64(shape))
        var map = ByteKeyMap()
        var reference = PickableDictionary<[UInt8], UInt64>()
        func key() -> [UInt8] {
            switch shape {
            case 0: return (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
            case 1: return (0..<Int.random(in: 0...3, using: &random)).map { _ in UInt8.random(in: 0...3, using: &random) }
            case 2: return [7, 7, 7] + (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...1, using: &random) }
            default: return (0..<Int.random(in: 0...8, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            }
        }
        let steps = 20_000
        for step in 0..<steps {
            let chosen = random.chance(30) && !reference.isEmpty ? reference.randomKey(using: &random) ?? key() : key()
            switch Int.random(in: 0..<10, using: &random) {
            case 0, 1, 2:
                #expect(map.removeValue(for: chosen) == reference.removeValue(forKey: chosen), "step \(step): remove \(chosen)")
            case 3:
                #expect(map.value(for: chosen) == reference[chosen], "step \(step): read \(chosen)")
            case 4:
                let new = UInt64.random(in: 1...UInt64.max, using: &random)
                let old = reference[chosen]
                if old == nil { reference[chosen] = new }
                #expect(map.valueOrInsert(new, for: chosen) == old, "step \(step): read or insert \(chosen)")
            default:
                let new = random.chance(10) ? 0 : UInt64.random(in: 1...UInt64.max, using: &random)
                #expect(map.updateValue(new, for: chosen) == reference.updateValue(new, forKey: chosen), "step \(step): set \(chosen)")
            }
            #expect(map.count == reference.count, "step \(step)")
            if step % 1_000 == 0 || step == steps - 1 {
                let entries = map.sortedEntries().map { (Array(map.key(at: Int($0))), map.value(at: Int($0))) }
                let expected = reference.sorted { $0.lexicographicallyPrecedes($1) }
                #expect(entries.map(\.0) == expected.map(\.key), "step \(step): keys in byte order")
                #expect(entries.map(\.1) == expected.map(\.value), "step \(step): values")
                var seen = 0
                map.forEachEntry { entry in
                    seen += 1
                    #expect(reference[Array(map.key(at: entry))] == map.value(at: entry))
                }
                #expect(seen == reference.count)
                for probe in reference.orderedKeys.prefix(50) { #expect(map.value(for: probe) == reference[probe], "step \(step): read \(probe)") }
            }
        }
    }

    @Test("a key whose bytes lie together is found as the same key read a byte at a time is", arguments: 0..<3)
    func contiguousFindEqualsByteLoop(shape: Int) {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0xB7E_F1D0) &+ UInt64(shape))
        // Keys that share their first eight bytes or differ only past them, or only in length,
        // around the word the comparison reads first: of one width (shape 0) or of many.
        func key() -> [UInt8] {
            let stem: [UInt8] = random.pick([[], [1], [1, 2, 3, 4, 5, 6, 7], [1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 8, 9]])
            switch shape {
            case 0: return [9, 9, 9, 9, 9, 9, 9] + (0..<9).map { _ in UInt8.random(in: 0...2, using: &random) }
            case 1: return stem + (0..<Int.random(in: 0...12, using: &random)).map { _ in UInt8.random(in: 0...2, using: &random) }
            default: return Array("ev-\(String(UInt64.random(in: 0...36_000_000, using: &random), radix: 36))-\(Int.random(in: 1...999, using: &random))".utf8)
            }
        }
        var map = ByteKeyMap()
        var held: [[UInt8]] = []
        for step in 0..<6_000 {
            let chosen = random.chance(40) && !held.isEmpty ? random.pick(held) : key()
            if random.chance(20) {
                // The contiguous find and the byte loop's, through a removal each.
                var other = map
                #expect(map.removeValue(for: chosen) == other.removeValue(for: chosen.lazy.map { $0 }), "step \(step): remove \(chosen)")
            } else {
                map.updateValue(UInt64(step + 1), for: chosen)
                held.append(chosen)
            }
            for probe in [chosen, key()] + (0..<3).compactMap({ _ in held.isEmpty ? nil : random.pick(held) }) {
                #expect(map.value(for: probe) == map.value(for: probe.lazy.map { $0 }), "step \(step): read \(probe)")
            }
        }
    }

    @Test("the hash of contiguous bytes, a word at a time, equals the byte loop's, at every length and offset")
    func contiguousHashEqualsByteLoop() {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0xB7E_4A54))
        for length in 0..<80 {
            for _ in 0..<8 {
                let bytes = (0..<(length + 3)).map { _ in UInt8.random(in: 0...255, using: &random) }
                let offset = Int.random(in: 0...3, using: &random)
                let key = bytes[offset..<(offset + length)]
                // A lazy map has no contiguous storage: it takes the byte loop.
                let byteLoop = ByteKeyMap.hash(key.lazy.map { $0 })
                #expect(ByteKeyMap.hash(key) == byteLoop, "length \(length), offset \(offset)")
                #expect(ByteKeyMap.hash(Array(key)) == byteLoop, "length \(length)")
            }
        }
    }

    @Test("string keys: canonically equal strings are one key, read back in NFC in StorageKey order")
    func stringsAgainstDictionary() {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0xB7E_1000))
        var map = ByteKeyMap()
        var reference: [String: UInt64] = [:]
        let pieces = ["a", "e", "\u{E9}", "e\u{301}", "z", "\u{1F600}", "\u{212B}", "A\u{30A}", "1"]
        func key() -> String { (0..<Int.random(in: 0...4, using: &random)).map { _ in random.pick(pieces) }.joined() }
        for step in 0..<10_000 {
            let chosen = key()
            switch Int.random(in: 0..<6, using: &random) {
            case 0:
                #expect(map.removeValue(forString: chosen) == reference.removeValue(forKey: chosen), "step \(step): remove \(chosen.debugDescription)")
            case 1:
                #expect(map.value(forString: chosen) == reference[chosen], "step \(step): read \(chosen.debugDescription)")
            default:
                let new = UInt64.random(in: 1...1_000, using: &random)
                #expect(map.updateValue(new, forString: chosen) == reference.updateValue(new, forKey: chosen), "step \(step): set")
            }
            #expect(map.count == reference.count, "step \(step)")
        }
        let keys = map.sortedEntries().map { String(decoding: map.key(at: Int($0)), as: UTF8.self) }
        #expect(keys == reference.keys.sorted { StorageKey.stringPrecedes($0, $1) })
        for key in keys { #expect(map.value(forString: key) == reference[key]) }
    }

    @Test("UUID-sized keys take about 40 bytes each, under half a dictionary's")
    func uuidKeysAreCompact() {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0xB7E_2000))
        var map = ByteKeyMap()
        for value in 1...100_000 {
            map.updateValue(UInt64(value), for: (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
        #expect(map.count == 100_000)
        // Arrays grow by a quarter; the table doubles: the bound leaves the allocator room.
        #expect(map.byteCapacity < 100_000 * 56)
    }
}
