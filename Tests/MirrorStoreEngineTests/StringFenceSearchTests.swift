import Testing
import TestSupport
@testable import MirrorStoreEngine

/// The search of an index run's fences for a string, which compares most fences by their first
/// eight bytes as numbers, against a count of the fences in order by `IndexKey.order`: strings
/// that share long prefixes, end at or around eight bytes, hold zero bytes and other scripts, and
/// runs with a fence of another kind (where no prefixes are kept).
@Suite struct StringFenceSearchTests {
    static let seed = SeededRandom.seed(default: 0x5EED_F0CE)

    private static func randomText(_ random: inout SeededRandom) -> String {
        let stems = ["", "abcdefg", "abcdefgh", "abcdefghi", "a", "ab\u{0}", "中文", "é", "zz"]
        let scalars: [Character] = ["a", "b", "h", "\u{0}", "é", "中", "🙂", " "]
        let tail = String((0..<Int.random(in: 0...12, using: &random)).map { _ in scalars.randomElement(using: &random) ?? "a" })
        return (stems.randomElement(using: &random) ?? "") + tail
    }

    @Test("blocksBelow for strings counts the fences below, as a walk of them does")
    func prefixSearchMatchesAWalk() throws {
        var random = SeededRandom(seed: Self.seed)
        for round in 0..<6 {
            let log = MemoryLog()
            var keys = Set((0..<3_000).map { _ in Self.randomText(&random) }).map { IndexKey.string($0) }
            // A run with one fence of another kind keeps no prefixes.
            if round % 3 == 2 { keys.append(.null) }
            let entries = keys.enumerated().map { IndexEntry(key: $0.element, object: .integer(Int64($0.offset))) }
                .sorted { IndexEntry.precedes($0, $1) }
            var writer = IndexRunWriter(log: log, sequence: 1, offset: log.size())
            for entry in entries { try writer.append(entry, isLive: true) }
            let run = try #require(try writer.finish())
            #expect(run.fences.count > 10, "seed \(Self.seed), round \(round): too few blocks to search")
            #expect((run.stringFencePrefixes != nil) == (round % 3 != 2), "seed \(Self.seed), round \(round)")
            // The fences' own keys, where the prefixes are equal, and other strings.
            var probes = run.fences.map(\.key)
            probes += (0..<300).map { _ in IndexKey.string(Self.randomText(&random)) }
            for probe in probes {
                guard case .string(let text) = probe else { continue }
                for inclusive in [true, false] {
                    for below in [KeysBelow(before: IndexBound(probe, inclusive: inclusive)), KeysBelow(through: IndexBound(probe, inclusive: inclusive))] {
                        let expected = run.fences.prefix { below.contains($0) }.count
                        #expect(run.stringFencesBelow(below, text) == expected, "seed \(Self.seed), round \(round), \(probe)")
                        #expect(run.blocksBelow(below) == expected, "seed \(Self.seed), round \(round), \(probe)")
                    }
                }
            }
        }
    }
}
