import Testing
import TestSupport
@testable import MirrorStoreEngine

/// `IntegerKeyMap` against a `Dictionary`: random sets, replacements, removals and reads, with
/// keys ascending, descending, random and clustered, values including the one the map uses as its
/// mark; after every step the same answers, the same count and the same entries in key order.
@Suite struct IntegerKeyMapTests {
    @Test("the map answers as a dictionary does, its entries in key order", arguments: 0..<6)
    func againstDictionary(shape: Int) {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x1_4E7_0000) &+ UInt64(shape))
        var map = IntegerKeyMap()
        var reference = PickableDictionary<Int64, UInt64>()
        var next: Int64 = shape == 1 ? 1_000_000 : 0
        func key() -> Int64 {
            switch shape {
            case 0: next += Int64.random(in: 1...3, using: &random); return random.chance(90) ? next : Int64.random(in: 0...next, using: &random)
            case 1: next -= 1; return random.chance(90) ? next : Int64.random(in: next...1_000_000, using: &random)
            case 2: return random.integer(Int64.self)
            case 3: return Int64.random(in: -300...300, using: &random)
            case 4: return random.pick([Int64.min, Int64.max, 0, -1, 1]) &+ Int64.random(in: -2...2, using: &random)
            default: return Int64.random(in: 0...5_000, using: &random)
            }
        }
        func value() -> UInt64 {
            random.chance(2) ? IntegerKeyMap.absent : random.chance(10) ? 0 : UInt64.random(in: 1...1_000_000, using: &random)
        }
        let steps = 12_000
        for step in 0..<steps {
            let chosen = random.chance(30) && !reference.isEmpty ? reference.randomKey(using: &random) ?? key() : key()
            switch Int.random(in: 0..<10, using: &random) {
            case 0, 1:
                #expect(map.removeValue(forKey: chosen) == reference.removeValue(forKey: chosen), "step \(step): remove \(chosen)")
            case 2:
                #expect(map[chosen] == reference[chosen], "step \(step): read \(chosen)")
            case 3:
                let new = value()
                map[chosen] = new
                reference[chosen] = new
            default:
                let new = value()
                #expect(map.updateValue(new, forKey: chosen) == reference.updateValue(new, forKey: chosen), "step \(step): set \(chosen)")
            }
            #expect(map.count == reference.count, "step \(step)")
            if step % 500 == 0 || step == steps - 1 {
                let entries = map.map { [$0.key: $0.value] }
                #expect(entries == reference.sorted(by: <).map { [$0.key: $0.value] }, "step \(step): entries in key order")
                for probe in reference.orderedKeys.prefix(50) { #expect(map[probe] == reference[probe], "step \(step): read \(probe)") }
            }
        }
    }

    @Test("ascending keys take 16 bytes each with room to grow, under the 32 a dictionary takes")
    func ascendingKeysAreCompact() {
        var map = IntegerKeyMap()
        for key in 1...200_000 { map[Int64(key)] = UInt64(key) << 24 | 100 }
        #expect(map.count == 200_000)
        // The map grows its arrays by a quarter; the allocator may round each block up further
        // (how far depends on what the process allocated before), so the bound leaves it room.
        #expect(map.byteCapacity < 200_000 * 16 * 2)
        let expected: UInt64? = 150_000 << 24 | 100
        #expect(map[150_000] == expected)
    }
}
