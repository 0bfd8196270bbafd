import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// A key run finds an ASCII string key by comparing it with the fences and the block's keys
/// where they lie (`KeyRun.packed(forASCII:)`), beside the general search that decodes each
/// probed key: random runs mixing integers, ASCII strings, strings that are not ASCII (some in
/// decomposed form, some canonically equal to ASCII ones) and byte strings, looked up present and
/// absent by both routes; then with a byte of the run changed, each route gives the general
/// route's answer or a typed error, and a probe of a damaged block never traps.
@Suite struct KeyRunASCIILookupTests {
    static func randomKeys(_ random: inout SeededRandom) -> [StorageKey] {
        var keys = Set<StorageKey>()
        for _ in 0..<Int.random(in: 0...400, using: &random) {
            keys.insert(.integer(Int64.random(in: -5_000...5_000, using: &random)))
        }
        for _ in 0..<Int.random(in: 1...900, using: &random) { keys.insert(.string(asciiText(&random))) }
        for _ in 0..<Int.random(in: 0...200, using: &random) {
            let text = String((0..<Int.random(in: 1...10, using: &random)).map { _ in "aBzé😀e\u{301}\u{212A}K~".randomElement(using: &random) ?? "a" })
            keys.insert(.string(text))
        }
        for _ in 0..<Int.random(in: 0...50, using: &random) {
            keys.insert(.bytes((0..<Int.random(in: 0...20, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }))
        }
        // Keys the store would hold once: canonically equal strings keep the first.
        var seen: [StorageKey] = []
        for key in keys.sorted(by: StorageKey.precedes) where !(seen.last.map { $0 == key } ?? false) { seen.append(key) }
        return seen
    }

    /// ASCII, short and long (long ones fill blocks in a few entries), sharing prefixes often.
    static func asciiText(_ random: inout SeededRandom) -> String {
        let length = random.chance(80) ? Int.random(in: 0...24, using: &random) : Int.random(in: 100...600, using: &random)
        return String((0..<length).map { _ in "abcAZ09-_~ ".randomElement(using: &random) ?? "a" })
    }

    /// A run of `expected` written to a log of its own.
    static func run(_ expected: [(StorageKey, UInt64)]) throws -> (KeyRun, MemoryLog)? {
        let log = MemoryLog(LogHeader().encoded())
        var writer = KeyRunWriter(log: log, sequence: 1, offset: LogHeader().unitsStart, packsIntegers: true)
        for (key, packed) in expected { try writer.append(key, packed: packed) }
        guard let run = try writer.finish() else { return nil }
        return (run, log)
    }

    @Test(arguments: 0..<24) func theASCIIRouteAgreesWithTheGeneralSearch(seed: Int) throws {
        var random = SeededRandom(seed: UInt64(seed) &+ 0xA5C1)
        let keys = Self.randomKeys(&random)
        let expected = keys.map { ($0, UInt64.random(in: 1...(1 << 60), using: &random)) }
        guard let (run, log) = try Self.run(expected) else { return }
        var probes: [StorageKey] = keys
        for _ in 0..<300 { probes.append(.string(Self.asciiText(&random))) }
        probes += ["", "~~~~", " ", "K", "e", "\u{7F}"].map { .string($0) }
        var asciiLookups = 0
        for key in probes {
            let general = try run.packedBySearch(for: key)
            #expect(try run.packed(for: key) == general, "\(key)")
            if case .string(let text) = key, let fast = try run.packed(forASCII: text) {
                asciiLookups += 1
                #expect(fast == general, "\(key)")
            }
            if let index = keys.firstIndex(of: key) { #expect(general == expected[index].1, "\(key)") }
        }
        #expect(asciiLookups > 300)

        // Damaged: a byte changed somewhere in the run's blocks.
        let bytes = try log.read(at: 0, count: Int(log.size()))
        for round in 0..<60 {
            var damaged = bytes
            let at = Int.random(in: Int(LogHeader().unitsStart)..<damaged.count, using: &random)
            damaged[at] ^= 1 << UInt8.random(in: 0..<8, using: &random)
            let copy = KeyRun(blockOffsets: run.blockOffsets, blockCounts: run.blockCounts, fences: run.fences, entryCount: run.entryCount,
                              byteCount: run.byteCount, log: MemoryLog(damaged), end: UInt64(damaged.count))
            for key in probes.shuffled(using: &random).prefix(40) {
                let general = Result { try copy.packedBySearch(for: key) }
                let fast = Result { try copy.packed(for: key) }
                switch (general, fast) {
                case (.success(let a), .success(let b)): #expect(a == b, "round \(round), \(key)")
                case (.failure(let error), _), (_, .failure(let error)): #expect(error is StorageError, "round \(round), \(key): \(error)")
                }
            }
        }
    }

    /// Blocks changed at random, checksum and all, probed in place: never a trap, and a probe that
    /// orders an entry agrees with the entry decoded.
    @Test func probesOfDamagedBlocksNeverTrapAndAgreeWithDecoding() throws {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0xA5C2))
        let keys = Self.randomKeys(&random)
        guard let (run, log) = try Self.run(keys.map { ($0, UInt64.random(in: 1...(1 << 40), using: &random)) }) else { return }
        let bytes = try log.read(at: 0, count: Int(log.size()))
        var blocks: [[UInt8]] = []
        for offset in run.blockOffsets {
            let start = Int(offset)
            let length = Int(bytes[start]) | Int(bytes[start + 1]) << 8 | Int(bytes[start + 2]) << 16 | Int(bytes[start + 3]) << 24
            blocks.append(Array(bytes[start..<(start + 4 + length + RunBlockReader.checksumSize)]))
        }
        var agreed = 0
        for _ in 0..<3_000 {
            var block = random.pick(blocks)
            for _ in 0..<Int.random(in: 0...4, using: &random) { block[Int.random(in: 0..<block.count, using: &random)] = random.integer(UInt8.self) }
            let wanted = Array(Self.asciiText(&random).utf8)
            block.withUnsafeBytes { blockBytes in
                wanted.withUnsafeBytes { wantedBytes in
                    guard blockBytes.count >= RunBlockReader.prefixSize + RunBlockReader.checksumSize else { return }
                    let reader = RunBlockReader(bytes: blockBytes)
                    guard reader.isWellFormed else { return }
                    let text = String(decoding: wanted, as: UTF8.self)
                    for index in 0..<(reader.count + 1) {
                        let probe = reader.entryOrder(index, againstASCII: wantedBytes)
                        guard case .ordered(let order, let packed) = probe else { continue }
                        guard let decoded = reader.entry(index) else { continue }
                        let expected = decoded.key == .string(text) ? 0 : StorageKey.precedes(decoded.key, .string(text)) ? -1 : 1
                        #expect(order == expected && packed == decoded.packed, "entry \(index): \(decoded.key) against \(text)")
                        agreed += 1
                    }
                }
            }
        }
        #expect(agreed > 1_000, "probes compared: \(agreed)")
    }
}
