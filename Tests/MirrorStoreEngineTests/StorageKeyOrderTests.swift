import Testing
@testable import MirrorStoreEngine

/// `StorageKey.precedes` orders sorted runs and their binary searches, so it must be a strict
/// weak order whose ties are exactly the keys a dictionary takes for one: canonically equal
/// strings. Swift's `<` on strings mixing normalization forms is not one.
@Suite struct StorageKeyOrderTests {
    static let keys: [StorageKey] = {
        var keys: [StorageKey] = [.integer(-1), .integer(0), .integer(7), .bytes([]), .bytes([0]), .bytes([0, 1])]
        for prefix in ["é", "e\u{301}", "e", "Å", "A\u{30A}", "\u{212B}", "ß", "🙂", ""] {
            for suffix in ["", "1", "14", "19", "2", "a"] { keys.append(.string(prefix + suffix)) }
        }
        return keys
    }()

    @Test func isAStrictWeakOrderConsistentWithEquality() {
        let keys = Self.keys
        for a in keys {
            #expect(!StorageKey.precedes(a, a))
            for b in keys {
                let before = StorageKey.precedes(a, b), after = StorageKey.precedes(b, a)
                #expect(!(before && after), "\(a) and \(b) precede each other")
                #expect(before || after || a == b, "\(a) and \(b) are unordered but not equal")
                for c in keys where before && StorageKey.precedes(b, c) {
                    #expect(StorageKey.precedes(a, c), "\(a) < \(b) < \(c) but not \(a) < \(c)")
                }
            }
        }
    }
}
