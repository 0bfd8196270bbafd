import Foundation
import Testing
import TestSupport
import MirrorStore

/// Case- and diacritic-insensitive filters and sorts against a reference built on Foundation's
/// `folding(options:locale:)` and Swift's own `==`, `starts(with:)` and `contains`, on names with
/// composed and decomposed accents, case pairs that change length (`ß`, `İ`), ligatures and emoji;
/// with and without an index of folded values, fresh and reopened.
@Suite struct TextSearchTests {
    static let seed = SeededRandom.seed(default: 0x290_0005)

    final class Person: Persistable {
        var id = 0
        var name = ""
        var nickname: String?
        init() {}
        static var primaryKey: String? { "id" }
        static var insensitiveIndexedProperties: [String] { ["name"] }
    }

    struct Misnamed: Persistable {
        var id = 0
        static var primaryKey: String? { "id" }
        static var insensitiveIndexedProperties: [String] { ["name"] }
    }

    struct Numbered: Persistable {
        var id = 0
        var count = 0
        static var primaryKey: String? { "id" }
        static var insensitiveIndexedProperties: [String] { ["count"] }
    }

    static let names = [
        "Élodie", "elodie", "E\u{301}LODIE", "ELODIE", "Elo", "Zoë", "zoe", "ZOE\u{308}", "zz", "Straße", "STRASSE", "strasse",
        "İstanbul", "istanbul", "ISTANBUL", "ǅemal", "", "émile", "Emile", "Ångström", "angstrom", "A\u{30A}NGSTRÖM", "🙂x",
        "ﬁne", "fine", "Ωmega", "ωMEGA", "e", "É", "Ab\r\nC", "ab\r", "AB\rx", "abc", "Abc\u{301}",
    ]
    /// ASCII ones too, tested on the stored bytes: `"\r\n"` is one `Character`.
    static let needles = ["elodie", "ÉLO", "e", "É", "zoe", "strasse", "STRAßE", "istanbul", "ångström", "fi", "ω", "🙂", "", "lod", "MEGA", "x",
                          "ab\r", "AB\r\n", "abc", "AB"]

    /// What `options` ask, folded by Foundation itself.
    static func reference(_ text: String, _ options: TextOptions) -> String {
        var foundation: String.CompareOptions = []
        if options.contains(.caseInsensitive) { foundation.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { foundation.insert(.diacriticInsensitive) }
        return text.folding(options: foundation, locale: nil)
    }

    static func matches(_ text: String?, _ match: TextMatch, _ options: TextOptions) -> Bool {
        guard let text else { return false }
        let value = reference(text, options)
        switch match {
        case .equals(let other): return value == reference(other, options)
        case .startsWith(let prefix): return value.starts(with: reference(prefix, options))
        // Every string contains the empty text, as the standard library's `contains` says.
        case .contains(let part): return part.isEmpty || value.contains(reference(part, options))
        }
    }

    @Test("filters and sorts ignoring case and diacritics answer as the folded strings compare in Swift")
    func answers() throws {
        var random = SeededRandom(seed: Self.seed)
        let people = (1...300).map { id in
            let person = Person()
            person.id = id
            person.name = random.pick(Self.names)
            person.nickname = random.chance(30) ? nil : random.pick(Self.names)
            return person
        }
        let directory = TemporaryDirectory()
        let path = directory.file("people.store")
        do {
            let store = try Store(path: path, models: [Person.self])
            try store.write { try $0.add(contentsOf: people) }
            try check(store, people, context: "fresh")
            try store.close()
        }
        let store = try Store(path: path, models: [Person.self])
        try check(store, people, context: "reopened")
        try store.close()
    }

    private func check(_ store: Store, _ people: [Person], context: String) throws {
        let place = "seed \(Self.seed), \(context)"
        let all = try store.objects(Person.self)
        let optionSets: [TextOptions] = [.insensitive, .caseInsensitive, .diacriticInsensitive, []]
        for needle in Self.needles {
            // A lone "\r" before "\n" is where the reference's `String.contains` and the
            // `Collection.contains` a predicate calls part: only equality and prefixes here.
            let kinds: [TextMatch] = needle.unicodeScalars.contains("\r") ? [.equals(needle), .startsWith(needle)]
                : [.equals(needle), .startsWith(needle), .contains(needle)]
            for match in kinds {
                for options in optionSets {
                    let byName = try all.filter(\.name, match, options: options)
                    let expected = people.filter { Self.matches($0.name, match, options) }
                    // Mapped whole: the records the filter read are the ones the models come from.
                    #expect(try byName.all().map { "\($0.id) \($0.name) \($0.nickname ?? "-")" }
                        == expected.map { "\($0.id) \($0.name) \($0.nickname ?? "-")" }, "\(place): name \(match) \(options.rawValue): \(byName.plan)")
                    #expect(byName.map(\.id) == expected.map(\.id), "\(place): name \(match) \(options.rawValue): \(byName.plan)")
                    let byNickname = try all.filter(\.nickname, match, options: options)
                    #expect(byNickname.map(\.id) == people.filter { Self.matches($0.nickname, match, options) }.map(\.id),
                            "\(place): nickname \(match) \(options.rawValue)")
                    #expect(byNickname.plan.indexName == nil)
                    let indexed: Bool = switch match {
                    case .equals: options == .insensitive
                    case .startsWith(let prefix): options == .insensitive && !prefix.isEmpty
                    case .contains: false
                    }
                    #expect((byName.plan.indexName == "Person.name~folded") == indexed, "\(place): name \(match) \(options.rawValue): \(byName.plan)")
                    // Equality and prefixes of a stored string are tested on its bytes, scanned or from the index.
                    if case .contains = match {} else if byName.plan.filter != .none {
                        #expect(byName.plan.filter == .storedBytes, "\(place): name \(match) \(options.rawValue): \(byName.plan)")
                    }
                }
            }
        }
        for options in optionSets {
            for order in [SortOrder.forward, .reverse] {
                let sorted = try all.sorted(by: \.name, options: options, order: order)
                let expected = people.enumerated().sorted { lhs, rhs in
                    let (a, b) = (Self.reference(lhs.element.name, options), Self.reference(rhs.element.name, options))
                    if a != b { return order == .forward ? a < b : b < a }
                    return lhs.offset < rhs.offset
                }.map(\.element.id)
                #expect(sorted.map(\.id) == expected, "\(place): sorted \(options.rawValue) \(order): \(sorted.plan)")
                if options == .insensitive {
                    #expect(sorted.plan.order == .index(name: "Person.name~folded", ascending: order == .forward), "\(place): \(sorted.plan)")
                }
                let byNickname = try all.sorted(by: \.nickname, options: options, order: order)
                let expectedNicknames = people.enumerated().sorted { lhs, rhs in
                    let (a, b) = (lhs.element.nickname.map { Self.reference($0, options) }, rhs.element.nickname.map { Self.reference($0, options) })
                    if a != b {
                        guard let a else { return order == .forward }
                        guard let b else { return order != .forward }
                        return order == .forward ? a < b : b < a
                    }
                    return lhs.offset < rhs.offset
                }.map(\.element.id)
                #expect(byNickname.map(\.id) == expectedNicknames, "\(place): nicknames sorted \(options.rawValue) \(order)")
            }
        }
        // Filtered by the folded index exactly, then sorted by it: the index range's order.
        let elodies = try all.filter(\.name, .equals("ELODIE")).sorted(by: \.name)
        #expect(elodies.map(\.id) == people.filter { Self.matches($0.name, .equals("elodie"), .insensitive) }.map(\.id))
        #expect(elodies.plan.order == .index(name: "Person.name~folded", ascending: true), "\(place): \(elodies.plan)")
        // A plain sort after an insensitive filter still sorts by the plain values.
        let plain = try all.filter(\.name, .startsWith("e")).sorted(using: SortDescriptor(\.name, comparator: .lexical))
        #expect(plain.map(\.id) == people.filter { Self.matches($0.name, .startsWith("e"), .insensitive) }
            .sorted(using: SortDescriptor(\.name, comparator: .lexical)).map(\.id))
    }

    @Test("an insensitive index on a property that is not a stored string is a typed error naming it")
    func badDeclarations() {
        do {
            _ = try Store.inMemory(models: [Misnamed.self])
            Issue.record("an index of a missing property was made")
        } catch {
            #expect("\(error)" == "Misnamed.name is named in insensitiveIndexedProperties, but Misnamed has no stored property by that name.")
        }
        do {
            _ = try Store.inMemory(models: [Numbered.self])
            Issue.record("an insensitive index of an Int was made")
        } catch {
            #expect("\(error)".contains("Numbered.count"))
            #expect("\(error)".contains("it indexes String and String? properties"))
        }
    }
}
