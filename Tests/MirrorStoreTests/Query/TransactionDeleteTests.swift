import Foundation
import Testing
import TestSupport
@_spi(Testing) import MirrorStore
import MirrorStoreEngine

/// `WriteTransaction.delete(_:where:)` and `delete(_:)` of results: they see the block's own
/// writes, and the indexes are right after commit.
@Suite("Deleting what a query matches in a transaction")
struct TransactionDeleteTests {
    static func hero(_ identifier: Int, name: String = "Hero", age: Int, publisher: QueryPublisher? = nil) -> QueryHero {
        let hero = QueryHero()
        hero.identifier = identifier
        hero.name = name
        hero.age = age
        hero.publisher = publisher
        return hero
    }

    static func identifiers(_ store: Store) throws -> [Int] {
        try store.objects(QueryHero.self).map(\.identifier)
    }

    @Test("the predicate sees the block's earlier adds, updates and deletes, not its later adds")
    func seesPendingWrites() throws {
        let store = try Store.inMemory(models: [QueryHero.self])
        try store.write { transaction in
            try transaction.add(contentsOf: [Self.hero(1, age: 95), Self.hero(2, age: 20), Self.hero(3, age: 93), Self.hero(4, age: 91)])
        }
        let deleted = try store.write { transaction in
            try transaction.add(Self.hero(5, age: 99))                                  // pending add: deleted
            try transaction.update(QueryHero.self, primaryKey: 1, set: \.age, to: 30)   // no longer matches: kept
            try transaction.update(QueryHero.self, primaryKey: 2, set: \.age, to: 96)   // now matches: deleted
            try transaction.delete(QueryHero.self, primaryKey: 3)                       // already deleted: not counted
            let count = try transaction.delete(QueryHero.self, where: #Predicate { $0.age > 90 })
            #expect(try transaction.object(QueryHero.self, primaryKey: 5) == nil, "reads in the block see the delete")
            try transaction.add(Self.hero(6, age: 97))                                  // added after: kept
            return count
        }
        #expect(deleted == 3)
        #expect(try Self.identifiers(store) == [1, 6])
        let old = try store.objects(QueryHero.self).filter(#Predicate { $0.age > 90 })
        #expect(old.plan.indexName == "QueryHero.age")
        #expect(old.map(\.identifier) == [6], "the age index follows the deletes")
    }

    @Test("after deleteAll only the block's new objects are candidates; links read pending writes")
    func clearedTypesAndLinks() throws {
        let store = try Store.inMemory(models: [QueryHero.self])
        let marvel = QueryPublisher()
        marvel.identifier = 1
        marvel.name = "Marvel"
        try store.write { transaction in
            try transaction.add(contentsOf: [Self.hero(1, age: 95, publisher: marvel), Self.hero(2, age: 50, publisher: marvel)])
        }
        try store.write { transaction in
            try transaction.update(QueryPublisher.self, primaryKey: 1, set: \.name, to: "Timely")
            #expect(try transaction.delete(QueryHero.self, where: #Predicate { $0.publisher?.name == "Marvel" }) == 0)
            #expect(try transaction.delete(QueryHero.self, where: #Predicate { $0.publisher?.name == "Timely" && $0.age < 60 }) == 1)
        }
        #expect(try Self.identifiers(store) == [1])
        try store.write { transaction in
            try transaction.deleteAll(QueryHero.self)
            try transaction.add(Self.hero(7, age: 99))
            #expect(try transaction.delete(QueryHero.self, where: #Predicate { $0.age > 90 }) == 1)
        }
        #expect(try Self.identifiers(store).isEmpty)
    }

    @Test("a condition through a link sees a linked object the block changed")
    func linkedObjectChangedInTheBlock() throws {
        let store = try Store.inMemory(models: [QueryHero.self])
        let dc = QueryPublisher()
        dc.identifier = 1
        dc.name = "DC"
        let marvel = QueryPublisher()
        marvel.identifier = 2
        marvel.name = "Marvel"
        try store.write { transaction in
            try transaction.add(contentsOf: [Self.hero(1, age: 30, publisher: dc), Self.hero(2, age: 40, publisher: marvel)])
        }
        // Outside a transaction the condition is a join on the publishers' name index.
        #expect(try store.objects(QueryHero.self).filter(#Predicate { $0.publisher?.name == "Marvel" }).plan.indexName == "QueryHero.publisher")
        let deleted = try store.write { transaction in
            try transaction.update(QueryPublisher.self, primaryKey: 1) { $0.name = "Marvel" }
            return try transaction.delete(QueryHero.self, where: #Predicate { $0.publisher?.name == "Marvel" })
        }
        #expect(deleted == 2)
        #expect(try Self.identifiers(store).isEmpty)
    }

    @Test("a block that throws deletes nothing")
    func rollback() throws {
        struct Abort: Error {}
        let store = try Store.inMemory(models: [QueryHero.self])
        try store.write { try $0.add(Self.hero(1, age: 95)) }
        #expect(throws: Abort.self) {
            try store.write { transaction in
                #expect(try transaction.delete(QueryHero.self, where: #Predicate { $0.age > 90 }) == 1)
                throw Abort()
            }
        }
        #expect(try Self.identifiers(store) == [1])
    }

    @Test("delete(results) deletes the listed objects that still exist, by key")
    func deleteResults() throws {
        let store = try Store.inMemory(models: [QueryHero.self])
        try store.write { try $0.add(contentsOf: (1...6).map { Self.hero($0, age: $0 * 10) }) }
        let young = try store.objects(QueryHero.self).filter(#Predicate { $0.age < 40 })
        let deleted = try store.write { transaction in
            try transaction.delete(QueryHero.self, primaryKey: 1)
            try transaction.update(QueryHero.self, primaryKey: 2, set: \.age, to: 80)   // listed, so deleted anyway
            return try transaction.delete(young)
        }
        #expect(deleted == 2)
        #expect(try Self.identifiers(store) == [4, 5, 6])
    }

    // MARK: Against a reference

    static func copy(_ hero: QueryHero) -> QueryHero {
        let copy = QueryHero()
        copy.identifier = hero.identifier
        copy.name = hero.name
        copy.realName = hero.realName
        copy.age = hero.age
        copy.rating = hero.rating
        copy.side = hero.side
        copy.joined = hero.joined
        copy.isActive = hero.isActive
        copy.tags = hero.tags
        copy.powers = hero.powers
        copy.publisher = hero.publisher
        copy.dogs = hero.dogs
        return copy
    }

    static func randomPredicate(_ random: inout SeededRandom) -> (String, Predicate<QueryHero>) {
        let age = Int.random(in: 0..<100, using: &random)
        let name = random.pick(QueryWorld.names)
        let publisher = random.pick(["Marvel", "DC", "Image"])
        let tag = random.pick(QueryWorld.tagWords)
        switch Int.random(in: 0..<7, using: &random) {
        case 0: return ("age > \(age / 2 + 50)", #Predicate { $0.age > age / 2 + 50 })
        case 1: return ("name == \(name)", #Predicate { $0.name == name })
        case 2: return ("publisher \(publisher)", #Predicate { $0.publisher?.name == publisher })
        case 3: return ("tag \(tag)", #Predicate { $0.tags.contains(tag) })
        case 4: return ("no real name", #Predicate { $0.realName == nil })
        case 5: return ("name length > \(age % 6)", #Predicate { $0.nameLength > age % 6 })
        default: return ("active and age < \(age)", #Predicate { $0.isActive && $0.age < age })
        }
    }

    /// The store's objects and some indexed queries, compared with the reference.
    static func check(_ store: Store, _ reference: [Int: QueryHero], random: inout SeededRandom, phase: String) throws {
        let all = try store.objects(QueryHero.self)
        #expect(try all.storageKeys == reference.keys.sorted().map { StorageKey.integer(Int64($0)) }, "\(phase): keys")
        for _ in 0..<4 {
            let (label, predicate) = randomPredicate(&random)
            let expected = try reference.values.filter { try predicate.evaluate($0) }.map(\.identifier).sorted()
            let found = try all.filter(predicate)
            #expect(try found.storageKeys == expected.map { StorageKey.integer(Int64($0)) }, "\(phase): \(label); plan: \(found.plan)")
        }
    }

    @Test("random adds, updates, deletes and delete-where in the same blocks match an array, also after reopen")
    func matchesReference() throws {
        let seed = SeededRandom.seed(default: 0xDE1E_7E00)
        try withTemporaryDirectory { directory in
            let path = directory + "/deletes.store"
            var configuration = Store.Configuration()
            configuration.durability = .none
            var store = try Store(path: path, models: [QueryHero.self], configuration: configuration)
            var world = QueryWorld(seed: seed)
            var random = SeededRandom(seed: seed &+ 1)
            var reference: [Int: QueryHero] = [:]
            var nextIdentifier = 1
            var deletedByQueries = 0
            for round in 0..<80 {
                let before = reference
                let aborts = random.chance(10)
                do {
                    try store.write { transaction in
                        for _ in 0..<Int.random(in: 1...12, using: &random) {
                            let existing = reference.keys.sorted()
                            switch Int.random(in: 0..<16, using: &random) {
                            case 0...6:
                                let hero = world.hero(nextIdentifier)
                                nextIdentifier += 1
                                try transaction.add(hero)
                                reference[hero.identifier] = hero
                            case 3 where !existing.isEmpty:
                                let hero = world.hero(random.pick(existing))
                                try transaction.add(hero)
                                reference[hero.identifier] = hero
                            case 4 where !existing.isEmpty:
                                let identifier = random.pick(existing)
                                let age = Int.random(in: 0..<100, using: &random)
                                let name = random.pick(QueryWorld.names)
                                try transaction.update(QueryHero.self, primaryKey: identifier) { hero in
                                    hero.age = age
                                    hero.name = name
                                }
                                let updated = Self.copy(try #require(reference[identifier]))
                                updated.age = age
                                updated.name = name
                                reference[identifier] = updated
                            case 5 where !existing.isEmpty:
                                let identifier = random.pick(existing)
                                try transaction.delete(QueryHero.self, primaryKey: identifier)
                                reference[identifier] = nil
                            case 6 where !existing.isEmpty && random.chance(20):
                                let made = try store.objects(QueryHero.self).filter(Self.randomPredicate(&random).1)
                                let listed = try made.storageKeys.compactMap { key -> Int? in
                                    if case .integer(let value) = key { Int(value) } else { nil }
                                }
                                let expected = listed.filter { reference[$0] != nil }
                                #expect(try transaction.delete(made) == expected.count, "round \(round): delete(results)")
                                for identifier in listed { reference[identifier] = nil }
                            case 7 where random.chance(40):
                                let (label, predicate) = Self.randomPredicate(&random)
                                let matching = try reference.values.filter { try predicate.evaluate($0) }.map(\.identifier)
                                let deleted = try transaction.delete(QueryHero.self, where: predicate)
                                #expect(deleted == matching.count, "round \(round): delete where \(label)")
                                deletedByQueries += deleted
                                for identifier in matching { reference[identifier] = nil }
                            default:
                                break
                            }
                        }
                        if aborts { throw CancellationError() }
                    }
                } catch is CancellationError {
                    reference = before
                }
                try Self.check(store, reference, random: &random, phase: "round \(round)")
            }
            #expect(deletedByQueries > 20, "the predicates match some objects")
            #expect(reference.count > 30, "and leave some")
            try store.close()
            store = try Store(path: path, models: [QueryHero.self], configuration: configuration)
            try Self.check(store, reference, random: &random, phase: "reopened")
            try store.close()
        }
    }
}
