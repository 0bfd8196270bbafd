import Testing
import TestSupport
@testable import MirrorStoreEngine

/// The key run writer keeps a block of integer keys in their own layout (integer or packed) until
/// a key of another kind arrives, then rewrites it in the general layout, or closes it when that
/// would not fit. Random runs mixing the kinds, short and long keys, read back entry by entry and
/// key by key; even seeds write the packed layout, odd ones the integer layout of format 2; seeds
/// 0 and 1 modulo 4 write byte strings of one length in the packed byte-string layout of format 6.
@Suite struct KeyRunWriterTests {
    @Test(arguments: 0..<40) func runsOfMixedKeysReadBackExactly(seed: Int) throws {
        var random = SeededRandom(seed: UInt64(seed) &+ 20_261_126)
        var keys = Set<StorageKey>()
        for _ in 0..<Int.random(in: 0...1_200, using: &random) {
            keys.insert(.integer(Int64.random(in: -5_000...5_000, using: &random) * (Bool.random(using: &random) ? 1 : 1 << 40)))
        }
        for _ in 0..<Int.random(in: 0...300, using: &random) {
            // Long strings fill a block in a few entries, so blocks close on the general layout's size.
            let length = Bool.random(using: &random) ? Int.random(in: 0...12, using: &random) : Int.random(in: 200...1_500, using: &random)
            keys.insert(.string(String((0..<length).map { _ in "abcé😀".randomElement(using: &random) ?? "a" })))
        }
        for _ in 0..<Int.random(in: 0...50, using: &random) {
            keys.insert(.bytes((0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }))
        }
        // Byte strings of one length, many sharing their first bytes: the packed byte-string
        // layout's keys, with now and then a key of another length among them.
        let width = [1, 2, 8, 16, 40][seed % 5]
        for _ in 0..<Int.random(in: 0...1_500, using: &random) {
            let first = UInt8.random(in: 0...3, using: &random)
            let length = random.chance(3) ? Int.random(in: 1...20, using: &random) : width
            keys.insert(.bytes([first] + (1..<length).map { _ in UInt8.random(in: 0...255, using: &random) }))
        }
        let sorted = keys.sorted(by: StorageKey.precedes)
        let expected = sorted.map { ($0, UInt64.random(in: 0...(1 << 60), using: &random)) }

        let log = MemoryLog(LogHeader().encoded())
        var writer = KeyRunWriter(log: log, sequence: 1, offset: LogHeader().unitsStart, packsIntegers: seed % 2 == 0, packsBytes: seed % 4 < 2)
        for (key, packed) in expected { try writer.append(key, packed: packed) }
        guard let run = try writer.finish() else {
            #expect(expected.isEmpty)
            return
        }
        #expect(run.entryCount == expected.count)

        var read: [(StorageKey, UInt64)] = []
        try run.forEachEntry { read.append(($0, $1)) }
        #expect(read.map(\.0) == expected.map(\.0))
        #expect(read.map(\.1) == expected.map(\.1))
        for (key, packed) in expected {
            #expect(try run.packed(for: key) == packed)
            if case .integer(let value) = key { #expect(try run.packed(forInteger: value) == packed) }
        }
        var absentKeys: [StorageKey] = [.integer(Int64.max), .integer(7 << 50), .string("not written \(seed)"), .bytes([255, 255, 255, 255, 255])]
        // Neighbours of written byte strings: the last byte changed, one byte more or less.
        for case (.bytes(let bytes), _) in expected.suffix(300) where !bytes.isEmpty {
            var changed = bytes
            changed[changed.count - 1] ^= 1
            absentKeys += [.bytes(changed), .bytes(bytes + [0]), .bytes(Array(bytes.dropLast()))]
        }
        for absent in absentKeys where !expected.contains(where: { $0.0 == absent }) {
            #expect(try run.packed(for: absent) == nil)
            // The integer lookup guesses where a key lies from the fences: one far past them must not overflow the guess.
            if case .integer(let value) = absent { #expect(try run.packed(forInteger: value) == nil) }
        }
        for far in [Int64.min, Int64.min + 1, Int64.max - 1] where !expected.contains(where: { $0.0 == .integer(far) }) {
            #expect(try run.packed(forInteger: far) == nil)
        }
    }
}
