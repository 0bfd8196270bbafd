import Foundation
import Testing
@_spi(Testing) import MirrorStore

final class Scoreboard: Persistable {
    var identifier = 0
    var scores: [String: Int?] = [:]
    var notes: [String: String?] = [:]
    init() {}
    static var primaryKey: String? { "identifier" }
}

/// Lookups in dictionaries of optionals are decided on records: a key that holds `nil` is a
/// double optional's `.some(nil)`, which differs from an absent key, and only those records are
/// left to the models.
@Suite("Dictionaries of optionals")
struct OptionalDictionaryTests {
    @Test("lookups, with and without a default, answer as Swift does; absent keys and held nils differ")
    func lookups() throws {
        let values: [Int?] = [nil, 0, 3, -1]
        let boards = (1...90).map { identifier in
            let board = Scoreboard()
            board.identifier = identifier
            if identifier % 3 != 0 { board.scores["a"] = .some(values[identifier % values.count]) }
            if identifier % 5 != 0 { board.scores["b"] = .some(values[(identifier / 2) % values.count]) }
            if identifier % 2 == 0 { board.notes["n"] = .some(identifier % 4 == 0 ? nil : "caf\u{E9}") }
            return board
        }
        #expect(boards.contains { $0.scores["a"] == .some(nil) } && boards.contains { $0.scores["a"] == nil })
        let store = try Store.inMemory(models: [Scoreboard.self])
        try store.write { try $0.add(contentsOf: boards) }
        func check(_ predicate: Predicate<Scoreboard>, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let results = try store.objects(Scoreboard.self).filter(predicate)
            let expected = try boards.filter { try predicate.evaluate($0) }.map(\.identifier)
            #expect(results.map(\.identifier) == expected, "plan: \(results.plan)", sourceLocation: sourceLocation)
            #expect(results.plan.filter == .recordsThenModels || results.plan.filter == .records, "plan: \(results.plan)", sourceLocation: sourceLocation)
        }
        let three: Int? = 3, none: Int? = nil, decomposed: String? = "cafe\u{301}"
        try check(#Predicate { $0.scores["a"] == 3 })
        try check(#Predicate { $0.scores["a"] == nil })
        // `none` becomes `.some(nil)` beside a double optional: the key holds nil, not absent.
        try check(#Predicate { $0.scores["a"] == none })
        try check(#Predicate { $0.scores["b"] != none })
        let held: [Int??] = [.some(nil), 3]
        try check(#Predicate { held.contains($0.scores["a"]) })
        try check(#Predicate { $0.scores["a"] != nil && $0.scores["b"] == 0 })
        try check(#Predicate { $0.scores["a", default: nil] == nil })
        try check(#Predicate { $0.scores["a", default: 7] == three })
        try check(#Predicate { $0.scores["b", default: none] == none })
        try check(#Predicate { ($0.scores["b", default: nil] ?? -5) < 0 })
        try check(#Predicate { $0.notes["n", default: nil] == decomposed })
        let minusOne: Int? = -1
        try check(#Predicate { $0.notes["n"] == nil || $0.scores["a"] == minusOne })
        // Without a held nil met, nothing is left to the models.
        let exact = try store.objects(Scoreboard.self).filter(#Predicate { $0.scores["a", default: 7] == three })
        #expect(exact.plan.filter == .records)
    }
}
