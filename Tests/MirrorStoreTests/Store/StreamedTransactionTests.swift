import Foundation
import Testing
import TestSupport
@testable import MirrorStore
import MirrorStoreEngine

/// Transactions whose records pass the streaming threshold go to the log as they are added
/// (`PendingWrites`): everything a transaction shows, inside and after, must be what the same
/// transaction holding its records shows.
@Suite("Streamed transactions")
struct StreamedTransactionTests {
    static func store(_ directory: TemporaryDirectory, _ name: String, threshold: Int?, keysInMemory: Int? = nil) throws -> Store {
        var configuration = Store.Configuration()
        configuration.durability = .none
        if let threshold { configuration.transactionStreamingThreshold = threshold }
        configuration.streamKeysInMemory = keysInMemory
        return try Store(path: directory.file(name), models: [QueryHero.self], configuration: configuration)
    }

    static func hero(_ identifier: Int, _ random: inout SeededRandom, publishers: [QueryPublisher]) -> QueryHero {
        let hero = QueryHero()
        hero.identifier = identifier
        hero.name = QueryWorld.names[Int.random(in: 0..<QueryWorld.names.count, using: &random)]
        hero.age = Int.random(in: 0..<100, using: &random)
        hero.tags = (0..<Int.random(in: 0...2, using: &random)).map { _ in QueryWorld.tagWords[Int.random(in: 0..<5, using: &random)] }
        hero.publisher = Bool.random(using: &random) ? publishers[Int.random(in: 0..<publishers.count, using: &random)] : nil
        return hero
    }

    /// What a store shows: every hero's fields, its publisher's name, and the publishers.
    static func contents(_ heroes: [QueryHero], _ publishers: [QueryPublisher]) -> [String] {
        heroes.map { "\($0.identifier) \($0.name) \($0.age) \($0.tags) \($0.publisher?.name ?? "-")" }
            + publishers.map { "publisher \($0.identifier) \($0.name)" }
    }

    /// What a store shows, and what its indexes answer (a streamed commit updates them from
    /// its pieces, reading the values a piece replaced back from the log).
    static func contents(_ store: Store) throws -> [String] {
        let heroes = try store.objects(QueryHero.self)
        let byAge = try heroes.sorted(using: [SortDescriptor(\.age), SortDescriptor(\.identifier)]).map { "age \($0.age) \($0.identifier)" }
        let thor = try heroes.filter(#Predicate { $0.name == "Thor" }).all().map { "Thor \($0.identifier)" }.sorted()
        let cosmic = try heroes.filter(#Predicate { $0.tags.contains("cosmic") }).all().map { "cosmic \($0.identifier)" }.sorted()
        return try contents(heroes.all(), store.objects(QueryPublisher.self).all()) + byAge + thor + cosmic
    }

    /// Seeded transactions of adds, updates, deletes (by key, by predicate, all), reads and
    /// queries inside, some throwing, run on a store that streams every record, on one that
    /// holds them, and on one that streams them and keeps at most 2 keys of a type in memory
    /// (the transaction's and its commit's, the rest in scratch files' runs): inside and after
    /// every transaction, all three show the same.
    @Test("a streamed transaction shows exactly what a held one does", arguments: [1, 400])
    func sameAsHeld(threshold: Int) throws {
        let seed = SeededRandom.seed(default: 0x5EED_57E0)
        var random = SeededRandom(seed: seed)
        let directory = TemporaryDirectory()
        let held = try Self.store(directory, "held.store", threshold: nil)
        let streamed = try Self.store(directory, "streamed.store", threshold: threshold)
        let spilled = try Self.store(directory, "spilled.store", threshold: threshold, keysInMemory: 2)
        struct Refused: Error {}
        var streamedTransactions = 0
        for step in 0..<60 {
            let context = "seed \(seed), threshold \(threshold), step \(step)"
            var actions: [Int] = []
            for _ in 0..<Int.random(in: 1...40, using: &random) { actions.append(Int.random(in: 0..<1_000_000, using: &random)) }
            let throwsAtEnd = Int.random(in: 0..<6, using: &random) == 0
            var observed: [[String]] = []
            for store in [held, streamed, spilled] {
                var inside: [String] = []
                do {
                    try store.write { transaction in
                        var random = SeededRandom(seed: UInt64(step) &* 7_919)
                        let publishers = (1...3).map { identifier in
                            let publisher = QueryPublisher()
                            publisher.identifier = identifier
                            publisher.name = "P\(identifier)-\(step)"
                            return publisher
                        }
                        for action in actions {
                            let identifier = action % 50
                            switch action / 1_000 % 10 {
                            case 0..<4:
                                try transaction.add(Self.hero(identifier, &random, publishers: publishers))
                            case 4:
                                try transaction.update(QueryHero.self, primaryKey: identifier, set: \.age, to: action % 100)
                            case 5:
                                try transaction.update(QueryHero.self, primaryKey: identifier) { $0.name = "Renamed \(action % 7)" }
                            case 6:
                                try transaction.delete(QueryHero.self, primaryKey: identifier)
                            case 7:
                                let age = action % 100
                                let count = try transaction.delete(QueryHero.self, where: #Predicate { $0.age > age && $0.age < age + 5 })
                                inside.append("deleted \(count)")
                            case 8 where action % 13 == 0:
                                try transaction.deleteAll(QueryHero.self)
                            default:
                                let hero = try transaction.object(QueryHero.self, primaryKey: identifier)
                                inside.append(contentsOf: hero.map { Self.contents([$0], []) } ?? ["none"])
                            }
                        }
                        if store === streamed, transaction.pending.stream != nil { streamedTransactions += 1 }
                        if throwsAtEnd { throw Refused() }
                    }
                } catch is Refused {
                    inside.append("refused")
                }
                observed.append(inside + (try Self.contents(store)))
            }
            #expect(observed[0] == observed[1], "\(context)")
            #expect(observed[0] == observed[2], "\(context): spilled")
        }
        #expect(streamedTransactions > (threshold == 1 ? 40 : 3), "seed \(seed): \(streamedTransactions) transactions streamed")
        try held.close()
        try streamed.close()
        try spilled.close()
        // Reopened, the streamed stores still hold what the held one does.
        let reopenedHeld = try Self.store(directory, "held.store", threshold: nil)
        let reopenedStreamed = try Self.store(directory, "streamed.store", threshold: threshold)
        let reopenedSpilled = try Self.store(directory, "spilled.store", threshold: threshold)
        #expect(try Self.contents(reopenedHeld) == Self.contents(reopenedStreamed), "seed \(seed): reopened")
        #expect(try Self.contents(reopenedHeld) == Self.contents(reopenedSpilled), "seed \(seed): reopened, spilled")
        try reopenedHeld.close()
        try reopenedStreamed.close()
        try reopenedSpilled.close()
    }

    /// With its keys past 4 in scratch runs too (`keysInMemory`), in a file store whose commit
    /// writes them likewise, the refusal is the same, and nothing of the transaction is seen.
    @Test("a unique value repeated in a streamed transaction refuses all of it", arguments: [nil, 4])
    func uniqueViolation(keysInMemory: Int?) throws {
        let directory = TemporaryDirectory()
        var configuration = Store.Configuration()
        configuration.transactionStreamingThreshold = 1
        configuration.streamKeysInMemory = keysInMemory
        let store = keysInMemory == nil
            ? try Store.inMemory(models: [UniqueMember.self], configuration: configuration)
            : try Store(path: directory.file("unique.store"), models: [UniqueMember.self], configuration: configuration)
        try store.write { try $0.add(UniqueMember(identifier: 1, email: "a@x", city: "Paris")) }
        let refused = #expect(throws: StoreError.self) {
            try store.write { transaction in
                for identifier in 2..<200 {
                    try transaction.add(UniqueMember(identifier: identifier, email: "m\(identifier)@x", city: "Lyon"))
                }
                try transaction.add(UniqueMember(identifier: 500, email: "a@x", city: "Nantes"))
            }
        }
        #expect(refused?.kind == .uniqueViolation(typeName: "Member", property: "email", value: "\"a@x\""))
        #expect(try store.objects(UniqueMember.self).count == 1)
        #expect(try store.object(UniqueMember.self, primaryKey: 2) == nil)
        try store.write { try $0.add(UniqueMember(identifier: 2, email: "b@x", city: "Lyon")) }
        #expect(try store.objects(UniqueMember.self).count == 2)
        try store.close()
    }

    @Test("a thrown streamed transaction leaves nothing visible, now or after reopening")
    func thrownLeavesNothing() throws {
        struct Refused: Error {}
        let directory = TemporaryDirectory()
        var store = try Self.store(directory, "thrown.store", threshold: 1_000)
        var random = SeededRandom(seed: 1)
        #expect(throws: Refused.self) {
            try store.write { transaction in
                for identifier in 0..<500 { try transaction.add(Self.hero(identifier, &random, publishers: [QueryPublisher()])) }
                #expect(transaction.pending.stream != nil, "the records went to the log")
                throw Refused()
            }
        }
        #expect(try store.objects(QueryHero.self).count == 0)
        try store.write { try $0.add(Self.hero(7, &random, publishers: [QueryPublisher()])) }
        try store.close()
        store = try Self.store(directory, "thrown.store", threshold: 1_000)
        #expect(try store.objects(QueryHero.self).map(\.identifier) == [7])
        try store.close()
    }

    // The limit catches a lost wake-up, not slowness: CI once stalled every test for over a
    // minute, and this test, though it completed, was failed for it.
    @Test("observers of a type hear of a streamed commit", .timeLimit(.minutes(10)))
    func observation() async throws {
        var configuration = Store.Configuration()
        configuration.transactionStreamingThreshold = 1
        let store = try Store.inMemory(models: [QueryHero.self], configuration: configuration)
        var iterator = try store.objects(QueryHero.self).changes.makeAsyncIterator()
        let first = try #require(try await iterator.next())
        #expect(first.results.isEmpty)
        var random = SeededRandom(seed: 2)
        try await store.write { transaction in
            for identifier in 0..<300 { try transaction.add(Self.hero(identifier, &random, publishers: [QueryPublisher()])) }
        }
        let next = try #require(try await iterator.next())
        #expect(next.insertions.count == 300)
        #expect(next.results.count == 300)
    }
}
