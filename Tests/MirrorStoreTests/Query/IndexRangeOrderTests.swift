import Foundation
import Testing
import MirrorStore

/// A model with an indexed property whose values repeat.
final class RankedEntry: Persistable {
    var identifier = 0
    var rank = 0
    var label = ""
    init() {}
    static var primaryKey: String? { "identifier" }
    static var indexedProperties: [String] { ["rank"] }

    convenience init(identifier: Int, rank: Int) {
        self.init()
        self.identifier = identifier
        self.rank = rank
        label = "entry \(identifier)"
    }
}

@Suite("Sorting a filtered index range")
struct IndexRangeOrderTests {
    @Test("A range read from an index and sorted by its property comes in index order, ties in key order")
    func rangeSortedByItsIndexReadsTheIndexInOrder() throws {
        let store = try Store.inMemory(models: [RankedEntry.self])
        let entries = (1...300).map { RankedEntry(identifier: $0, rank: ($0 * 37) % 50) }
        try store.write { try $0.add(contentsOf: entries) }
        let expected = entries.filter { $0.rank >= 10 && $0.rank < 20 }
            .sorted { ($0.rank, $0.identifier) < ($1.rank, $1.identifier) }.map(\.identifier)

        let sorted = try store.objects(RankedEntry.self)
            .filter(#Predicate { $0.rank >= 10 && $0.rank < 20 })
            .sorted(using: SortDescriptor(\.rank))
        #expect(sorted.map(\.identifier) == expected)
        #expect(sorted.plan.order == .index(name: "RankedEntry.rank", ascending: true))

        // Descending, the range is read with its groups of equal values in reverse, each still in key order.
        let descending = try store.objects(RankedEntry.self)
            .filter(#Predicate { $0.rank >= 10 && $0.rank < 20 })
            .sorted(using: SortDescriptor(\.rank, order: .reverse))
        #expect(descending.map(\.identifier) == entries.filter { $0.rank >= 10 && $0.rank < 20 }
            .sorted { $0.rank != $1.rank ? $0.rank > $1.rank : $0.identifier < $1.identifier }.map(\.identifier))
        #expect(descending.plan.order == .index(name: "RankedEntry.rank", ascending: false))

        // With a condition the index does not answer, the records are sorted.
        let narrowed = try store.objects(RankedEntry.self)
            .filter(#Predicate { $0.rank >= 10 && $0.rank < 20 && $0.identifier > 100 })
            .sorted(using: SortDescriptor(\.rank))
        #expect(narrowed.map(\.identifier) == entries.filter { $0.rank >= 10 && $0.rank < 20 && $0.identifier > 100 }
            .sorted { ($0.rank, $0.identifier) < ($1.rank, $1.identifier) }.map(\.identifier))
        #expect(narrowed.plan.order == .records(properties: ["rank"]))
    }
}
