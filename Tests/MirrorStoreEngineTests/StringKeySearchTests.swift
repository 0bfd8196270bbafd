import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// The search for a string key in a key run by its canonical bytes (`StringProbe`: the fences'
/// table, `StringFences`, and the block search that compares stored keys where they lie)
/// against the searches that decode every probed fence and entry as a `StorageKey`, on random
/// keys (ASCII and not, composed and decomposed, stored in NFC as the writer's memory keeps them
/// or as given, as files written before it did), in blocks in one piece and in two, intact and
/// damaged.
@Suite struct StringKeySearchTests {
    static let seed = SeededRandom.seed(default: 0x57_4B_E4)

    /// Text that stresses the order: shared prefixes around eight and sixteen bytes (where the
    /// search's words end), composed and decomposed accents, combining marks alone (which compose
    /// with the ASCII letter before them, in NFC), a Kelvin sign (NFC "K"), a zero byte, other
    /// scripts, keys long enough to straddle a block's pieces.
    static func randomText(_ random: inout SeededRandom) -> String {
        let stems = [
            "", "ev-", "abcdefg", "abcdefgh", "abcdefghi", "abcdefghijklmno", "abcdefghijklmnop", "abcdefghijklmnopq", "K", "\u{212A}", "é",
            "e\u{301}", "ab\u{0}", "abcdefge\u{301}", "abcdefgé",
        ]
        let scalars = ["a", "b", "h", "K", "\u{212A}", "é", "e\u{301}", "\u{301}", "\u{308}", "\u{0}", "中", "🙂", "ß", "~", "0", "z", "-"]
        let count = random.chance(10) ? Int.random(in: 20...90, using: &random) : Int.random(in: 0...12, using: &random)
        return random.pick(stems) + (0..<count).map { _ in random.pick(scalars) }.joined()
    }

    /// A key of another kind now and then: a run may mix them.
    static func randomKey(_ random: inout SeededRandom, mixed: Bool) -> StorageKey {
        guard mixed, random.chance(15) else { return .string(randomText(&random)) }
        return random.chance(50) ? .integer(Int64.random(in: -20...20, using: &random)) : .bytes((0..<Int.random(in: 0...4, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
    }

    /// `keys` made distinct and sorted, each string in NFC when `canonical` (as `ByteKeyMap` gives
    /// them to a checkpoint) or as it came.
    static func distinct(_ keys: [StorageKey], canonical: Bool) -> [StorageKey] {
        var result: [StorageKey] = []
        for key in keys.sorted(by: StorageKey.precedes) where result.last.map({ StorageKey.precedes($0, key) }) ?? true {
            if canonical, case .string(let text) = key {
                result.append(.string(String(decoding: text._nfcCodeUnits, as: UTF8.self)))
            } else {
                result.append(key)
            }
        }
        return result
    }

    /// The location a plain walk of `entries` finds for `probe`: the entry equal to it (`==` on
    /// strings is canonical equivalence).
    static func expected(_ entries: [(StorageKey, UInt64)], _ probe: StorageKey) -> UInt64? {
        entries.first { $0.0 == probe }?.1
    }

    /// Probes: the stored keys, their other forms (NFC and NFD), and random others.
    static func probes(_ keys: [StorageKey], _ random: inout SeededRandom) -> [String] {
        var probes: [String] = []
        for key in keys {
            guard case .string(let text) = key else { continue }
            probes.append(text)
            if random.chance(30) {
                probes.append(String(decoding: text._nfcCodeUnits, as: UTF8.self))
                probes.append(text.decomposedStringWithCanonicalMapping)
            }
        }
        return probes + ["", "K", "\u{212A}", "é", "e\u{301}"] + (0..<80).map { _ in randomText(&random) }
    }

    @Test("a run's lookup of a string key finds what a walk of its entries finds")
    func runLookupMatchesAWalk() throws {
        var random = SeededRandom(seed: Self.seed)
        var found = 0
        for round in 0..<24 {
            let mixed = round % 4 == 3
            let keys = Self.distinct((0..<Int.random(in: 1...1_500, using: &random)).map { _ in Self.randomKey(&random, mixed: mixed) }, canonical: round % 2 == 0)
            let log = MemoryLog(LogHeader().encoded())
            var writer = KeyRunWriter(log: log, sequence: 1, offset: LogHeader().unitsStart, packsIntegers: true)
            var entries: [(StorageKey, UInt64)] = []
            for (position, key) in keys.enumerated() {
                let packed: UInt64 = random.chance(5) ? 0 : UInt64(position + 1) << 24 | UInt64(position % 7)
                try writer.append(key, packed: packed)
                entries.append((key, packed))
            }
            let run = try #require(try writer.finish())
            #expect((run.stringFences != nil) == !keys.contains { if case .string = $0 { false } else { true } }, "seed \(Self.seed), round \(round)")
            for probe in Self.probes(keys, &random) {
                let expected = Self.expected(entries, .string(probe))
                if expected != nil { found += 1 }
                #expect(try run.packed(for: .string(probe)) == expected, "seed \(Self.seed), round \(round), probe \(probe.debugDescription)")
            }
        }
        #expect(found > 5_000, "seed \(Self.seed)")
    }

    @Test("the fences' table picks the block that ordering the fences as keys picks")
    func fenceTableMatchesOrderingKeys() {
        var random = SeededRandom(seed: Self.seed &+ 1)
        for round in 0..<200 {
            let fences = Self.distinct((0..<Int.random(in: 0...80, using: &random)).map { _ in Self.randomKey(&random, mixed: false) }, canonical: round % 2 == 0)
            guard let table = StringFences(fences) else {
                Issue.record("seed \(Self.seed), round \(round): no table for string fences")
                continue
            }
            for probe in Self.probes(fences, &random) {
                let found = StringProbe.with(probe) { $0.block(in: table) }
                #expect(found == InPlaceKeySearchTests.decodingFenceSearch(fences, .string(probe)), "seed \(Self.seed), round \(round), probe \(probe.debugDescription)")
            }
        }
        #expect(StringFences([.string("a"), .integer(1)]) == nil)
    }

    /// The search of `block` for each probe, in one piece and split at `split`: both agree with
    /// the search that decodes each probed entry. Returns the results, to count.
    @discardableResult
    static func compare(_ block: [UInt8], probes: [String], splits: [Int]) -> [RunBlockReader.KeySearch] {
        block.withUnsafeBytes { bytes -> [RunBlockReader.KeySearch] in
            guard bytes.count >= RunBlockReader.prefixSize + RunBlockReader.checksumSize else { return [] }
            let whole = RunBlockReader(bytes: bytes)
            guard whole.isWellFormed, whole.layout != RunBlockReader.walkedLayout else { return [] }
            var results: [RunBlockReader.KeySearch] = []
            for probe in probes {
                let expected = InPlaceKeySearchTests.decodingSearch(whole, .string(probe))
                results.append(expected)
                #expect(StringProbe.with(probe) { whole.location(of: $0) } == expected, "probe \(probe.debugDescription)")
                for split in splits where (0...block.count).contains(split) {
                    // Two arrays, so that a read running past a piece is caught (under the address sanitizer too).
                    let head = Array(block[..<split])
                    let tail = Array(block[split...])
                    let pieces = head.withUnsafeBytes { head in
                        tail.withUnsafeBytes { tail in StringProbe.with(probe) { RunBlockReader(head: head, tail: tail).location(of: $0) } }
                    }
                    #expect(pieces == expected, "probe \(probe.debugDescription), split at \(split)")
                }
            }
            return results
        }
    }

    @Test("a block's search by canonical bytes agrees with decoding, in one piece and two, intact and damaged")
    func blockSearchMatchesDecoding() throws {
        var random = SeededRandom(seed: Self.seed &+ 2)
        var results: [RunBlockReader.KeySearch] = []
        for round in 0..<16 {
            let keys = Self.distinct((0..<Int.random(in: 1...600, using: &random)).map { _ in Self.randomKey(&random, mixed: round % 4 == 3) }, canonical: round % 2 == 0)
            let (blocks, entries) = try InPlaceKeySearchTests.blocks(of: keys)
            let probes = Self.probes(entries.map(\.0), &random)
            for (number, intact) in blocks.enumerated() {
                let splits = [RunBlockReader.prefixSize + 1, intact.count / 2] + (0..<2).map { _ in Int.random(in: 0...intact.count, using: &random) }
                results += Self.compare(intact, probes: Array(probes.shuffled(using: &random).prefix(number == 0 ? 200 : 40)), splits: splits)
                for _ in 0..<12 {
                    var damaged = intact
                    for _ in 0..<Int.random(in: 1...3, using: &random) { damaged = random.damaged(damaged) }
                    results += Self.compare(damaged, probes: Array(probes.shuffled(using: &random).prefix(20)), splits: [damaged.count / 2])
                }
            }
        }
        // Every outcome was met: keys found, keys absent, damage seen.
        #expect(results.count { if case .found = $0 { true } else { false } } > 500, "seed \(Self.seed)")
        #expect(results.contains(.absent) && results.contains(.damaged), "seed \(Self.seed)")
    }

    /// Bytes a stored key may hold: a random key's UTF-8, in NFC or as it came (a file written
    /// before keys went through `ByteKeyMap`), now and then damaged (a byte flipped, cut short,
    /// or one inserted, so that the bytes may not be UTF-8).
    static func storedBytes(_ random: inout SeededRandom) -> [UInt8] {
        let text = randomText(&random)
        let bytes = random.chance(50) ? Array(text._nfcCodeUnits) : Array(text.utf8)
        return random.chance(15) ? random.damaged(bytes) : bytes
    }

    /// The order of `stored` against `probe` as keys: nil when the bytes are not UTF-8, 0 for
    /// canonically equal strings, else -1 when the stored key precedes.
    static func keyOrder(_ stored: [UInt8], _ probe: String) -> Int? {
        guard let text = String(validating: stored, as: UTF8.self) else { return nil }
        let (key, wanted) = (StorageKey.string(text), StorageKey.string(probe))
        return key == wanted ? 0 : StorageKey.precedes(key, wanted) ? -1 : 1
    }

    @Test("comparing a stored key with the probe a word at a time orders as the keys do, whatever bytes follow it")
    func wordOrderMatchesKeyOrder() {
        var random = SeededRandom(seed: Self.seed &+ 4)
        var outcomes: [Int?: Int] = [:]
        for _ in 0..<40_000 {
            let stored = Self.storedBytes(&random)
            let storedText = String(decoding: stored, as: UTF8.self)
            // The stored key itself (in its other form too), one that begins it or that it
            // begins, or another.
            let probe = switch Int.random(in: 0..<5, using: &random) {
            case 0: storedText
            case 1: storedText.decomposedStringWithCanonicalMapping
            case 2: String(storedText.prefix(Int.random(in: 0...storedText.count, using: &random)))
            case 3: storedText + Self.randomText(&random)
            default: Self.randomText(&random)
            }
            let expected = Self.keyOrder(stored, probe)
            outcomes[expected, default: 0] += 1
            // At an odd place, followed by eight bytes that are not the key's (a block's location).
            let padded = [0xA5] + stored + (0..<8).map { _ in UInt8.random(in: 0...255, using: &random) }
            let order = padded.withUnsafeBytes { bytes in
                StringProbe.with(probe) { $0.order(ofStored: bytes.baseAddress! + 1, count: stored.count) }
            }
            #expect(order == expected, "seed \(Self.seed), stored \(stored), probe \(probe.debugDescription)")
        }
        // Every outcome was met often.
        for outcome in [nil, -1, 0, 1] as [Int?] {
            #expect(outcomes[outcome, default: 0] > 1_000, "seed \(Self.seed), outcome \(String(describing: outcome))")
        }
    }

    @Test("the probe's words are its canonical bytes, big-endian, padded with zeros")
    func probeWordsHoldTheBytes() {
        var random = SeededRandom(seed: Self.seed &+ 5)
        for _ in 0..<2_000 {
            let text = Self.randomText(&random)
            let canonical = Array(text._nfcCodeUnits)
            let padded = canonical + Array(repeating: 0, count: 8)
            let words = StringProbe.with(text) { probe in stride(from: 0, through: canonical.count, by: 8).map { probe.word(at: $0) } }
            let expected = stride(from: 0, through: canonical.count, by: 8).map { IndexRun.stringPrefix(padded[$0...]) }
            #expect(words == expected, "seed \(Self.seed), text \(text.debugDescription)")
        }
    }

    @Test("the probe's ASCII test, a word at a time, agrees with a test of each byte, at every length and place of a high byte")
    func asciiTestMatchesBytes() {
        var random = SeededRandom(seed: Self.seed &+ 3)
        for count in 0...40 {
            for _ in 0..<20 {
                var bytes = (0..<count).map { _ in UInt8.random(in: 0...0x7F, using: &random) }
                if count > 0, random.chance(70) {
                    for _ in 0..<Int.random(in: 1...2, using: &random) { bytes[Int.random(in: 0..<count, using: &random)] = UInt8.random(in: 0x80...0xFF, using: &random) }
                }
                // At an odd place in a larger buffer, so that the loads are unaligned and a read past either end would see 0xFF.
                let padded = [0xFF] + bytes + [0xFF]
                let ascii = padded.withUnsafeBytes { StringProbe.isASCII(UnsafeRawBufferPointer(rebasing: $0[1..<(1 + count)])) }
                #expect(ascii == bytes.allSatisfy { $0 < 0x80 }, "seed \(Self.seed), bytes \(bytes)")
            }
        }
    }
}
