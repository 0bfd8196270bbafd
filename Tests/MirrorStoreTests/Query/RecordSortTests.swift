import Foundation
import Testing
import TestSupport
@_spi(Testing) import MirrorStore

/// A linked model with a primary key, sorted through.
final class SortPublisher: Persistable {
    var identifier = 0
    var name = ""
    var founded: Int?
    init() {}
    static var primaryKey: String? { "identifier" }
}

/// An embedded model (no primary key), sorted through.
struct SortAddress: Persistable, Equatable, Sendable {
    var city = ""
    var zip = 0
    init() {}
}

final class SortBook: Persistable {
    var identifier = 0
    var token = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    var spareToken: UUID?
    var address = SortAddress()
    var office: SortAddress?
    var publisher: SortPublisher?
    init() {}
    static var primaryKey: String? { "identifier" }
}

/// Sorts on UUIDs, through embedded models and through to-one links are decided on records,
/// in the order `sorted(using:)` gives on the models.
@Suite("Sorts on records")
struct RecordSortTests {
    /// UUIDs on the edges of byte order: all zeros, all ones, high bits, shared prefixes.
    static let tokens: [UUID] = [
        UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
        UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
        UUID(uuid: (0x7F, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF)),
        UUID(uuid: (0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
        UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)),
        UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17)),
        UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 0xF0, 10, 11, 12, 13, 14, 15, 0)),
    ]
    static let cities = ["", "Oslo", "oslo", "\u{C9}vry", "E\u{301}vry", "Zug", "Åre"]

    /// Seeded books and publishers; one publisher is deleted afterwards, so its books' links
    /// dangle (their models read `nil`).
    static func world(_ random: inout SeededRandom) throws -> (Store, [SortBook]) {
        let publishers = (1...5).map { identifier in
            let publisher = SortPublisher()
            publisher.identifier = identifier
            publisher.name = random.pick(["Ann", "Bob", "\u{C9}d", "E\u{301}d", ""])
            publisher.founded = random.chance(30) ? nil : Int.random(in: 1900...1910, using: &random)
            return publisher
        }
        let books = (1...200).map { identifier in
            let book = SortBook()
            book.identifier = identifier
            book.token = random.chance(10) ? UUID() : random.pick(tokens)
            book.spareToken = random.chance(30) ? nil : random.pick(tokens)
            book.address.city = random.pick(cities)
            book.address.zip = Int.random(in: 0...3, using: &random)
            if random.chance(60) {
                var office = SortAddress()
                office.city = random.pick(cities)
                book.office = office
            }
            book.publisher = random.chance(20) ? nil : random.pick(publishers)
            return book
        }
        let store = try Store.inMemory(models: [SortBook.self])
        try store.write { try $0.add(contentsOf: books) }
        try store.write { try $0.delete(SortPublisher.self, primaryKey: 5) }
        for book in books where book.publisher?.identifier == 5 { book.publisher = nil }
        return (store, books)
    }

    static func check(_ store: Store, _ books: [SortBook], _ sort: [SortDescriptor<SortBook>], order: QueryPlan.Order) throws {
        let results = try store.objects(SortBook.self).sorted(using: sort)
        #expect(results.plan.order == order)
        #expect(results.map(\.identifier) == books.sorted(using: sort).map(\.identifier), "\(order)")
        // Filtered first: the sort keeps the filter's order for ties.
        let filtered = try store.objects(SortBook.self).filter(#Predicate { $0.identifier % 3 != 0 }).sorted(using: sort)
        #expect(filtered.map(\.identifier) == books.filter { $0.identifier % 3 != 0 }.sorted(using: sort).map(\.identifier), "\(order)")
    }

    @Test("UUIDs sort on records in Foundation's order: their bytes, in order")
    func uuidSorts() throws {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x5041))
        let (store, books) = try Self.world(&random)
        try Self.check(store, books, [SortDescriptor(\.token)], order: .records(properties: ["token"]))
        try Self.check(store, books, [SortDescriptor(\.token, order: .reverse)], order: .records(properties: ["token"]))
        try Self.check(store, books, [SortDescriptor(\.spareToken), SortDescriptor(\.token, order: .reverse)],
                       order: .records(properties: ["spareToken", "token"]))
        let byName = try store.objects(SortBook.self).sorted(byProperty: "spareToken", ascending: false)
        #expect(byName.map(\.identifier) == books.sorted(using: SortDescriptor(\.spareToken, order: .reverse)).map(\.identifier))
    }

    @Test("Paths through embedded models sort on records")
    func embeddedSorts() throws {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x5042))
        let (store, books) = try Self.world(&random)
        try Self.check(store, books, [SortDescriptor(\.address.city)], order: .records(properties: ["address.city"]))
        try Self.check(store, books, [SortDescriptor(\.address.zip, order: .reverse), SortDescriptor(\.address.city)],
                       order: .records(properties: ["address.zip", "address.city"]))
        try Self.check(store, books, [SortDescriptor(\.office?.city, order: .reverse)], order: .records(properties: ["office.city"]))
        try Self.check(store, books, [SortDescriptor(\.address.city, comparator: .lexical)],
                       order: .records(properties: ["address.city"]))
    }

    @Test("Paths through to-one links sort on records; nil and deleted links read nil")
    func linkSorts() throws {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x5043))
        let (store, books) = try Self.world(&random)
        try Self.check(store, books, [SortDescriptor(\.publisher?.name)], order: .records(properties: ["publisher.name"]))
        try Self.check(store, books, [SortDescriptor(\.publisher?.name, order: .reverse), SortDescriptor(\.token)],
                       order: .records(properties: ["publisher.name", "token"]))
        try Self.check(store, books, [SortDescriptor(\.publisher?.founded), SortDescriptor(\.address.city, order: .reverse)],
                       order: .records(properties: ["publisher.founded", "address.city"]))
    }

    @Test("A force unwrap in a sort's key path sorts models, which trap where records would read nil")
    func forceUnwrapSortsModels() throws {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x5044))
        let (store, books) = try Self.world(&random)
        let withOffice = try store.objects(SortBook.self).filter(#Predicate { $0.office != nil }).sorted(using: SortDescriptor(\.office!.city))
        #expect(withOffice.plan.order == .models)
        #expect(withOffice.map(\.identifier) == books.filter { $0.office != nil }.sorted(using: SortDescriptor(\.office!.city)).map(\.identifier))
    }

    /// A sort descriptor's key path is resolved once per schema and then found by identity: the
    /// later sorts by it, in either order and with or without a string comparator, sort as the
    /// first did, and as `sorted(using:)` sorts the models.
    @Test("A sort's key path found again sorts as when it was first resolved")
    func keyPathsFoundAgainSortAsAtFirst() throws {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x5045))
        let (store, books) = try Self.world(&random)
        let publishers = try store.objects(SortPublisher.self).all()
        for round in 0..<3 {
            for order in [SortOrder.forward, .reverse] {
                for descriptor in [SortDescriptor(\SortBook.identifier, order: order), SortDescriptor(\.token, order: order),
                                   SortDescriptor(\.spareToken, order: order)] {
                    let sorted = try store.objects(SortBook.self).sorted(using: descriptor)
                    #expect(sorted.plan.order != .models, "round \(round): \(descriptor) sorts on records")
                    #expect(sorted.map(\.identifier) == books.sorted(using: descriptor).map(\.identifier), "round \(round): \(descriptor)")
                }
                for descriptor in [SortDescriptor(\SortPublisher.name, comparator: .lexical, order: order),
                                   SortDescriptor(\SortPublisher.name, order: order)] {
                    let sorted = try store.objects(SortPublisher.self).sorted(using: descriptor)
                    #expect(sorted.map(\.identifier) == publishers.sorted(using: descriptor).map(\.identifier), "round \(round): \(descriptor)")
                }
            }
        }
    }
}
