import Testing
import TestSupport
@testable import MirrorStoreEngine

/// The bulk sort of index entries by prefix (`IndexEntry.sortedInIndexOrder`) gives exactly what
/// sorting the entries with `IndexEntry.precedes` gives, and the in-place duplicate scan of an
/// index in memory finds what a walk of its sorted entries finds, on seeded random entries of
/// every kind of key: numbers of three kinds side by side (around 2^53 too), NaN, `-0.0`,
/// strings and byte strings sharing long prefixes, tuples.
@Suite struct IndexEntrySortingTests {
    static let seed = SeededRandom.seed(default: 0x50_27_0001)

    static func key(_ random: inout SeededRandom) -> IndexKey {
        switch Int.random(in: 0..<5, using: &random) {
        case 4:
            // A long shared beginning, then a few bytes that may end early or hold a zero.
            let tail = (0..<Int.random(in: 0...10, using: &random)).map { _ in random.pick(["a", "b", "\u{0}", "é", "z"]) }.joined()
            return random.chance(80) ? .string("https://example.com/a/long/path/" + tail) : .bytes(Array(repeating: 7, count: 30) + Array(tail.utf8))
        case 0: return .string("prefix-" + random.pick(["", "a", "ab", "a\u{0}", "é", "z"]) + String(Int.random(in: 0..<5, using: &random)))
        case 1: return .bytes([1, 2, 3, 4, 5, 6] + (0..<Int.random(in: 0...3, using: &random)).map { _ in random.pick([0, 1, 0xFF]) })
        case 2: return random.pick([.double(-0.0), .double(0), .integer(0), .unsigned(0), .double(.nan), .double(-.infinity), .double(.infinity)])
        default:
            var key = IndexTupleTests.component(&random)
            while key == .greatest { key = IndexTupleTests.component(&random) }
            return key
        }
    }

    static func entries(_ random: inout SeededRandom) -> [IndexEntry] {
        (0..<Int.random(in: 0...600, using: &random)).map { _ in
            let object: StorageKey = random.chance(70) ? .integer(Int64.random(in: 0..<50, using: &random)) : .string(random.pick(["a", "b", "é"]))
            return IndexEntry(key: key(&random), object: object)
        }
    }

    @Test func sortingByPrefixGivesWhatSortingTheEntriesGives() {
        var random = SeededRandom(seed: Self.seed)
        for _ in 0..<300 {
            let entries = Self.entries(&random)
            #expect(IndexEntry.sortedInIndexOrder(entries) == entries.sorted(by: IndexEntry.precedes))
        }
    }

    /// Whenever two keys' prefixes differ, the keys order the same way.
    @Test func prefixesNeverContradictTheOrder() {
        var random = SeededRandom(seed: Self.seed &+ 1)
        for _ in 0..<20_000 {
            let (a, b) = (Self.key(&random), Self.key(&random))
            let order = IndexKey.order(a, b)
            if a.sortPrefix < b.sortPrefix { #expect(order < 0, "\(a) \(b)") }
            if order == 0 { #expect(a.sortPrefix == b.sortPrefix, "\(a) \(b)") }
        }
    }

    @Test func inPlaceDuplicateScanFindsWhatAWalkFinds() throws {
        var random = SeededRandom(seed: Self.seed &+ 2)
        for _ in 0..<300 {
            let sorted = Self.entries(&random).sorted(by: IndexEntry.precedes)
            var unique: [IndexEntry] = []
            for entry in sorted where unique.last != entry { unique.append(entry) }
            var expected: IndexKey?
            for (before, entry) in zip(unique, unique.dropFirst())
            where before.key == entry.key && entry.key.isUniquelyConstrained && before.object != entry.object {
                expected = entry.key
                break
            }
            let index = SecondaryIndex(entries: unique)
            #expect(try index.firstDuplicate() == expected)
        }
    }
}
