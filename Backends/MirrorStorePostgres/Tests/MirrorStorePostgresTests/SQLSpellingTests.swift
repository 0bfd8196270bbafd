import Foundation
@testable import MirrorStorePostgres
import Testing

@Suite("Spelling SQL")
struct SQLSpellingTests {
    /// `SQL.identifier` wraps a name without a quote as it is and doubles the quotes of any
    /// other: both routes give what doubling every quote gives, on random names (seeded).
    @Test func identifiersDoubleEveryQuoteWhicheverRouteSpellsThem() {
        var random = SeededRandom(seed: 3_030)
        let pieces = ["\"", "\"\"", "a", "Hero", "name", " ", "é", "e\u{301}", "日本", "👩‍👩‍👧", "_", "1", "'", "\\", ""]
        for _ in 0..<2_000 {
            let name = (0..<Int.random(in: 0...6, using: &random)).map { _ in random.pick(pieces) }.joined()
            let doubled = "\"" + name.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
            #expect(SQL.identifier(name) == doubled, "\(name)")
        }
        #expect(SQL.identifier("Hero") == "\"Hero\"")
        #expect(SQL.identifier("a\"b") == "\"a\"\"b\"")
        #expect(SQL.identifier("") == "\"\"")
    }
}
