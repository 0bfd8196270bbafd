import Foundation
import Testing
import TestSupport
@_spi(Testing) import MirrorStore

/// A raw-value enum with an order of its own: Swift synthesizes no `Comparable` for raw-value
/// enums, so apps write `<`, and raw-value order (high < low < medium < urgent) is not it.
enum AnswerPriority: String, Codable, Comparable, Sendable {
    case low, medium, high, urgent

    private var rank: Int {
        switch self {
        case .low: 0
        case .medium: 1
        case .high: 2
        case .urgent: 3
        }
    }

    static func < (lhs: AnswerPriority, rhs: AnswerPriority) -> Bool { lhs.rank < rhs.rank }
}

/// A model for the cases where the store's answer used to differ from `Array.filter`: strings
/// both unindexed (`name`) and indexed (`title`), a set, an array, enums with their own order.
final class AnswerItem: Persistable {
    var identifier = 0
    var name = ""
    var title = ""
    var labels: Set<String> = []
    var numbers: [Int] = []
    var priority = AnswerPriority.low
    var rankedPriority = AnswerPriority.low
    init() {}
    static var primaryKey: String? { "identifier" }
    static var indexedProperties: [String] { ["title", "rankedPriority"] }

    convenience init(_ identifier: Int, name: String, labels: Set<String> = [], numbers: [Int] = [],
                     priority: AnswerPriority = .low) {
        self.init()
        self.identifier = identifier
        self.name = name
        title = name
        self.labels = labels
        self.numbers = numbers
        self.priority = priority
        rankedPriority = priority
    }
}

/// Each case the README promises and the store once answered otherwise: the store's answer is
/// the one `filter` and `sorted(using:)` give on an array of the same models.
@Suite("Answers equal to Array.filter")
struct PredicateAnswerTests {
    static func store(_ items: [AnswerItem]) throws -> Store {
        let store = try Store.inMemory(models: [AnswerItem.self])
        try store.write { try $0.add(contentsOf: items) }
        return store
    }

    static func expectSame(
        _ store: Store, _ items: [AnswerItem], _ predicate: Predicate<AnswerItem>,
        sortedBy sort: [SortDescriptor<AnswerItem>] = [], _ label: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let expected = try items.filter { try predicate.evaluate($0) }.sorted(using: sort).map(\.identifier)
        let results = try store.objects(AnswerItem.self).filter(predicate).sorted(using: sort)
        #expect(results.map(\.identifier) == expected, "\(label); plan: \(results.plan)", sourceLocation: sourceLocation)
    }

    static let names = ["E\u{301}lodie", "\u{C9}lodie", "Foo", "M", "Zed", "Ant", "e\u{301}", "\u{E9}", "Eve", "", "An\u{10FFFF}x", "An"]

    @Test("strings compare as Swift's String does: a decomposed name is after M and Foo, indexed or not")
    func unicodeStrings() throws {
        let items = Self.names.enumerated().map { AnswerItem($0.offset + 1, name: $0.element) }
        let store = try Self.store(items)
        for bound in ["M", "Foo", "E", "\u{C9}lodie", "E\u{301}lodie", "e", "\u{E9}", "Ez", ""] {
            try Self.expectSame(store, items, #Predicate { $0.title <= bound }, "title <= \(bound)")
            try Self.expectSame(store, items, #Predicate { $0.name < bound }, "name < \(bound)")
            try Self.expectSame(store, items, #Predicate { $0.name >= bound }, "name >= \(bound)")
            try Self.expectSame(store, items, #Predicate { $0.name == bound }, "name == \(bound)")
            try Self.expectSame(store, items, #Predicate { !($0.name < bound) }, "!(name < \(bound))")
            try Self.expectSame(store, items, #Predicate { $0.title < bound }, "title < \(bound)")
            try Self.expectSame(store, items, #Predicate { $0.title > bound }, "title > \(bound)")
            try Self.expectSame(store, items, #Predicate { $0.title == bound }, "title == \(bound)")
            try Self.expectSame(store, items, #Predicate { !($0.title < bound) }, "!(title < \(bound))")
            try Self.expectSame(store, items, #Predicate { $0.title != bound }, "title != \(bound)")
        }
        try Self.expectSame(store, items, #Predicate { _ in true }, sortedBy: [SortDescriptor(\.title)], "sorted by title")
        try Self.expectSame(store, items, #Predicate { _ in true }, sortedBy: [SortDescriptor(\.name, order: .reverse)], "sorted by name")
        try Self.expectSame(store, items, #Predicate { $0.title >= "E" }, sortedBy: [SortDescriptor(\.title)], "title >= E, sorted")
    }

    @Test("a prefix range reaches strings whose next scalar is U+10FFFF, and agrees with Character prefixes")
    func prefixesAtTheTopOfUnicode() throws {
        let items = Self.names.enumerated().map { AnswerItem($0.offset + 1, name: $0.element) }
        let store = try Self.store(items)
        for prefix in ["An", "A", "E", "\u{C9}", "E\u{301}", "e", "e\u{301}", "An\u{10FFFF}", "\u{10FFFF}", "Z"] {
            try Self.expectSame(store, items, #Predicate { $0.title.starts(with: prefix) }, "title starts with \(prefix.debugDescription)")
            try Self.expectSame(store, items, #Predicate { $0.name.starts(with: prefix) }, "name starts with \(prefix.debugDescription)")
        }
    }

    @Test("set equality does not depend on the order a set lists its elements in")
    func setEquality() throws {
        let words = (0..<12).map { "label\($0)" }
        var wide = Set<String>(minimumCapacity: 256)
        wide.formUnion(words)
        let narrow = Set(words)
        try #require(Array(wide) != Array(narrow), "the two sets must list their elements in different orders")
        let items = [AnswerItem(1, name: "a", labels: narrow), AnswerItem(2, name: "b", labels: wide),
                     AnswerItem(3, name: "c", labels: Set(words.dropLast())), AnswerItem(4, name: "d")]
        let store = try Self.store(items)
        for wanted in [wide, narrow, Set(words.dropLast()), []] {
            try Self.expectSame(store, items, #Predicate { $0.labels == wanted }, "labels == \(wanted.count) words")
            try Self.expectSame(store, items, #Predicate { $0.labels != wanted }, "labels != \(wanted.count) words")
        }
    }

    @Test("enums with their own < are compared and sorted by it, not by raw value")
    func enumOrder() throws {
        let all: [AnswerPriority] = [.low, .medium, .high, .urgent]
        let items = (1...16).map { AnswerItem($0, name: "item \($0)", priority: all[($0 * 7) % 4]) }
        let store = try Self.store(items)
        let medium = AnswerPriority.medium
        for bound in all {
            try Self.expectSame(store, items, #Predicate { $0.priority < bound }, "priority < \(bound)")
            try Self.expectSame(store, items, #Predicate { $0.priority >= bound }, "priority >= \(bound)")
            try Self.expectSame(store, items, #Predicate { $0.rankedPriority > bound }, "indexed priority > \(bound)")
            try Self.expectSame(store, items, #Predicate { $0.rankedPriority == bound }, "indexed priority == \(bound)")
        }
        // A closed range whose lower bound is above its upper one traps, in Swift as in the store.
        for bound in all where bound >= medium {
            try Self.expectSame(store, items, #Predicate { (medium...bound).contains($0.rankedPriority) },
                                "indexed priority in medium...\(bound)")
        }
        try Self.expectSame(store, items, #Predicate { _ in true }, sortedBy: [SortDescriptor(\.priority)], "sorted by priority")
        try Self.expectSame(store, items, #Predicate { _ in true },
                            sortedBy: [SortDescriptor(\.rankedPriority, order: .reverse)], "sorted by indexed priority")
        // Named at run time, too: the property's type is looked up on the model.
        let byName = try store.objects(AnswerItem.self).sorted(byProperty: "priority")
        #expect(byName.map(\.identifier) == items.sorted(using: SortDescriptor(\.priority)).map(\.identifier))
        let descending = try store.objects(AnswerItem.self).filter(#Predicate { $0.identifier > 3 })
            .sorted(byProperty: "rankedPriority", ascending: false)
        #expect(descending.map(\.identifier)
            == items.filter { $0.identifier > 3 }.sorted(using: SortDescriptor(\.rankedPriority, order: .reverse)).map(\.identifier))
        #expect(descending.plan.order == .models)
        // A raw-value enum with no order of its own keeps sorting by its raw values, on records.
        let heroes = try Store.inMemory(models: [QueryHero.self])
        var world = QueryWorld(seed: 0xE7)
        let cast = (1...30).map { world.hero($0) }
        try heroes.write { try $0.add(contentsOf: cast) }
        let bySide = try heroes.objects(QueryHero.self).sorted(byProperty: "side")
        #expect(bySide.map(\.identifier) == cast.sorted(using: SortDescriptor(\.side.rawValue)).map(\.identifier))
        #expect(bySide.plan.order == .records(properties: ["side"]))
    }

    @Test("a part that throws throws from the store too, in Swift's evaluation order")
    func throwingParts() throws {
        let items = [AnswerItem(1, name: "a", numbers: [7]), AnswerItem(2, name: "b", numbers: []), AnswerItem(3, name: "c", numbers: [1])]
        let store = try Self.store(items)
        let throwing = #Predicate<AnswerItem> { $0.numbers[0] == 7 || $0.identifier > 0 }
        #expect(throws: (any Error).self) { try items.filter { try throwing.evaluate($0) } }
        #expect(throws: (any Error).self) { try store.objects(AnswerItem.self).filter(throwing) }

        // `||` evaluates its left side first: no element reaches the subscript here.
        try Self.expectSame(store, items, #Predicate { $0.identifier > 0 || $0.numbers[0] == 7 }, "identifier > 0 || numbers[0] == 7")
        // `&&` stops at a false left side, so only objects 1 and 3 reach the subscript.
        try Self.expectSame(store, items, #Predicate { $0.name != "b" && $0.numbers[0] == 7 }, "name != b && numbers[0] == 7")
        // The other way round, object 2 reaches it: an index on the right must not skip it.
        let late = #Predicate<AnswerItem> { $0.numbers[0] == 7 && $0.title == "a" }
        #expect(throws: (any Error).self) { try items.filter { try late.evaluate($0) } }
        #expect(throws: (any Error).self) { try store.objects(AnswerItem.self).filter(late) }
        // A filter applied after another sees only what the first kept, as on arrays.
        let kept = try store.objects(AnswerItem.self).filter(#Predicate { $0.title != "b" })
            .filter(#Predicate { $0.numbers[0] >= 1 })
        #expect(kept.map(\.identifier) == [1, 3])
        #expect(throws: (any Error).self) {
            try store.objects(AnswerItem.self).filter(#Predicate { $0.numbers[0] >= 1 }).filter(#Predicate { $0.title != "b" })
        }
        // A closure over elements stops at the first that decides, and throws at one before.
        let nested = #Predicate<AnswerItem> { $0.labels.contains { $0.count > 100 } || $0.numbers.contains { $0 == 1 } }
        try Self.expectSame(store, items, nested, "contains where, no throw")
        // A half-open range whose bounds are the wrong way round throws, an index or not.
        let (high, low) = ("M", "A")
        let backwards = #Predicate<AnswerItem> { (high..<low).contains($0.title) }
        #expect(throws: (any Error).self) { try items.filter { try backwards.evaluate($0) } }
        #expect(throws: (any Error).self) { try store.objects(AnswerItem.self).filter(backwards) }
        let (big, small) = (3, 1)
        let numeric = #Predicate<AnswerItem> { (big..<small).contains($0.identifier) }
        #expect(throws: (any Error).self) { try items.filter { try numeric.evaluate($0) } }
        #expect(throws: (any Error).self) { try store.objects(AnswerItem.self).filter(numeric) }
        // A force unwrap of nil throws.
        let unwrap = #Predicate<AnswerItem> { $0.numbers.first! == 7 || $0.identifier > 0 }
        #expect(throws: (any Error).self) { try items.filter { try unwrap.evaluate($0) } }
        #expect(throws: (any Error).self) { try store.objects(AnswerItem.self).filter(unwrap) }
    }

    @Test("arithmetic Swift traps on (overflow, division by zero) throws a QueryError naming the object Swift would stop at")
    func arithmeticTraps() throws {
        let items = [AnswerItem(1, name: "a", numbers: [7]), AnswerItem(2, name: "b", numbers: []), AnswerItem(3, name: "c", numbers: [1])]
        let store = try Self.store(items)
        let (big, least, zero) = (Int.max, Int.min, 0)
        func trap(_ predicate: Predicate<AnswerItem>, sourceLocation: SourceLocation = #_sourceLocation) -> QueryError.Kind? {
            #expect(throws: QueryError.self, sourceLocation: sourceLocation) { try store.objects(AnswerItem.self).filter(predicate) }?.kind
        }
        // On the stored bytes: object 1 computes 1 * Int.max, object 2 overflows.
        let doubled = #expect(throws: QueryError.self) { try store.objects(AnswerItem.self).filter(#Predicate { $0.identifier * big > 0 }) }
        #expect(doubled?.kind == .arithmeticTrap(typeName: "AnswerItem", key: "2", expression: "2 * 9223372036854775807", type: "Int"))
        #expect(doubled?.description
            == "Testing the AnswerItem with key 2 computes 2 * 9223372036854775807 in Int, which traps in Swift (an overflow or a division by zero), so the query throws instead.")
        // `&&` keeps object 2 from the product, so object 3 is where Swift stops.
        #expect(trap(#Predicate { $0.name != "b" && $0.identifier * big > 0 })
            == .arithmeticTrap(typeName: "AnswerItem", key: "3", expression: "3 * 9223372036854775807", type: "Int"))
        // Only object 1 reaches the product here, which does not overflow: the answer is Swift's.
        try Self.expectSame(store, items, #Predicate { $0.identifier < 2 && $0.identifier * big > 0 }, "identifier < 2 && identifier * max > 0")
        try Self.expectSame(store, items, #Predicate { $0.identifier > 2 || $0.identifier + least < 0 }, "identifier + Int.min, which does not overflow")
        // On records: element by element, as `contains(where:)` runs.
        #expect(trap(#Predicate { $0.numbers.contains { $0 + big > 0 } })
            == .arithmeticTrap(typeName: "AnswerItem", key: "1", expression: "7 + 9223372036854775807", type: "Int"))
        #expect(trap(#Predicate { $0.identifier / zero == 1 })
            == .arithmeticTrap(typeName: "AnswerItem", key: "1", expression: "1 / 0", type: "Int"))
        // The minus of a captured Int.min traps when the first object reaches it.
        #expect(trap(#Predicate { $0.identifier > -least })
            == .arithmeticTrap(typeName: "AnswerItem", key: "1", expression: "-(-9223372036854775808)", type: "Int"))
    }
}
