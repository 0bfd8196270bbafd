import Foundation
import Testing
import TestSupport
@_spi(Testing) import MirrorStore

/// `recover(key:value:)` against the `#Predicate` it stands for, on a seeded store.
@Suite("Conditions named at run time")
struct KeyValueQueryTests {
    /// A store of 400 seeded heroes, some publishers deleted so that links dangle.
    static func seededStore(seed: UInt64) throws -> (Store, QueryWorld) {
        var world = QueryWorld(seed: seed)
        let heroes = (1...400).map { world.hero($0) }
        let store = try Store.inMemory(models: [QueryHero.self])
        try store.write { try $0.add(contentsOf: heroes) }
        try store.write { transaction in
            for identifier in [2, 3, 5] { try transaction.delete(QueryPublisher.self, primaryKey: identifier) }
        }
        return (store, world)
    }

    /// One random run-time condition and the predicate it stands for.
    static func randomCase(_ random: inout SeededRandom) -> (key: String, value: (any RecordPrimitive)?, predicate: Predicate<QueryHero>) {
        let name = random.pick(QueryWorld.names + ["Nobody"])
        let age = Int.random(in: -1..<101, using: &random)
        let rating = Double(Int.random(in: 0..<1000, using: &random)) / 10
        let publisher = random.pick(["Marvel", "DC", "Image", "Dark Horse", "Nobody"])
        let country = random.pick(["US", "FR", "JP"])
        let identifier = Int.random(in: 0..<410, using: &random)
        let active = random.chance(50)
        let side = random.pick([QuerySide.hero, .villain, .neutral])
        let joined = Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0..<1000, using: &random)) * 86_400)
        switch Int.random(in: 0..<13, using: &random) {
        case 0: return ("name", name, #Predicate { $0.name == name })
        case 1: return ("age", age, #Predicate { $0.age == age })
        case 2: return ("rating", rating, #Predicate { $0.rating == rating })
        case 3: return ("realName", name, #Predicate { $0.realName == name })
        case 4: return ("realName", nil, #Predicate { $0.realName == nil })
        case 5: return ("publisher.name", publisher, #Predicate { $0.publisher?.name == publisher })
        case 6: return ("publisher.country", country, #Predicate { $0.publisher?.country == country })
        case 7: return ("publisher.country", nil, #Predicate { $0.publisher?.country == nil })
        case 8: return ("identifier", identifier, #Predicate { $0.identifier == identifier })
        case 9: return ("isActive", active, #Predicate { $0.isActive == active })
        case 10: return ("side", side.rawValue, #Predicate { $0.side == side })
        case 11: return ("joined", joined, #Predicate { $0.joined == joined })
        default: return ("publisher.name", nil, #Predicate { $0.publisher?.name == nil })
        }
    }

    @Test("recover finds the same objects as the equivalent #Predicate, 400 random conditions")
    func sameKeysAsPredicate() throws {
        let seed = SeededRandom.seed(default: 0x5EED_0002)
        let (store, _) = try Self.seededStore(seed: seed)
        var random = SeededRandom(seed: seed &+ 1)
        var matched = 0
        for round in 0..<400 {
            let (key, value, predicate) = Self.randomCase(&random)
            let recovered: Results<QueryHero> = try store.recover(key: key, value: value)
            let expected = try store.objects(QueryHero.self).filter(predicate)
            #expect(try recovered.storageKeys == expected.storageKeys, "round \(round): \(key) == \(String(describing: value))")
            #expect(recovered.plan.access == expected.plan.access, "round \(round): \(key)")
            matched += recovered.count
        }
        #expect(matched > 400, "the conditions match some objects, not none")
    }

    @Test("recover plans on the index of an indexed property, or by primary key")
    func usesIndexes() throws {
        let (store, _) = try Self.seededStore(seed: 7)
        let byName = try store.recover(QueryHero.self, key: "name", value: "Hulk")
        #expect(byName.plan.indexName == "QueryHero.name")
        #expect(byName.plan.filter == .none, "the index answers equality exactly")
        #expect(byName.map(\.name).allSatisfy { $0 == "Hulk" })
        #expect(!byName.isEmpty)

        let byAge = try store.recover(QueryHero.self, key: "age", value: 30)
        #expect(byAge.plan.indexName == "QueryHero.age")

        let byKey = try store.recover(QueryHero.self, key: "identifier", value: 12)
        #expect(byKey.plan.access == .primaryKey(typeName: "QueryHero", keys: 1))
        #expect(byKey.map(\.identifier) == [12])

        let unindexed = try store.recover(QueryHero.self, key: "rating", value: 1.5)
        #expect(unindexed.plan.access == .scan(typeName: "QueryHero"))
        #expect(unindexed.plan.filter == .storedBytes, "decided on the stored bytes, never on models")
    }

    @Test("a link is nil when it is, or when its object was deleted, as the model reads it")
    func nilLinks() throws {
        let (store, _) = try Self.seededStore(seed: 19)
        let models = try store.objects(QueryHero.self).all()
        let dangling = try store.objects(QueryHero.self).filter(#Predicate { $0.publisher?.identifier == 2 }).count
        #expect(dangling == 0 && models.contains { $0.publisher == nil }, "publisher 2 was deleted; its heroes read nil")
        let unpublished = try store.recover(QueryHero.self, key: "publisher", value: nil)
        #expect(unpublished.map(\.identifier) == models.filter { $0.publisher == nil }.map(\.identifier))
        // The link's index keeps the deleted key: its entries are looked up among the publishers.
        #expect(unpublished.plan.access == .index(name: "QueryHero.publisher", range: "== nil"))
        #expect(unpublished.plan.filter == .none)
    }

    @Test("recover results filter and sort further")
    func chains() throws {
        let (store, _) = try Self.seededStore(seed: 11)
        let chained = try store.recover(QueryHero.self, key: "publisher.name", value: "Marvel")
            .filter(#Predicate { $0.age > 40 })
            .sorted(using: SortDescriptor(\.name))
        let expected = try store.objects(QueryHero.self)
            .filter(#Predicate { $0.publisher?.name == "Marvel" && $0.age > 40 })
            .sorted(using: SortDescriptor(\.name))
        #expect(try chained.storageKeys == expected.storageKeys)
        #expect(!chained.isEmpty)
    }

    @Test("numbers convert as literals would: an Int for a Double property, a UInt8 for an Int one")
    func numericValues() throws {
        let (store, _) = try Self.seededStore(seed: 13)
        let whole = try store.recover(QueryHero.self, key: "rating", value: 42)
        #expect(try whole.storageKeys == (try store.objects(QueryHero.self).filter(#Predicate { $0.rating == 42.0 })).storageKeys)
        let narrow = try store.recover(QueryHero.self, key: "age", value: UInt8(30))
        #expect(try narrow.storageKeys == (try store.recover(QueryHero.self, key: "age", value: 30)).storageKeys)
    }

    @Test("bad keys and values are typed errors naming the type and the property")
    func typedErrors() throws {
        let (store, _) = try Self.seededStore(seed: 17)
        func error(_ key: String, _ value: (any RecordPrimitive)?) -> QueryError.Kind? {
            do {
                _ = try store.recover(QueryHero.self, key: key, value: value)
                return nil
            } catch let error as QueryError {
                #expect(!error.description.isEmpty)
                return error.kind
            } catch {
                Issue.record("not a QueryError: \(error)")
                return nil
            }
        }
        #expect(error("nickname", "Hulk") == .unknownProperty(typeName: "QueryHero", property: "nickname"))
        #expect(error("nameLength", 4) == .unknownProperty(typeName: "QueryHero", property: "nameLength"), "a computed property is not stored")
        #expect(error("scratch", 1) == .ignoredProperty(typeName: "QueryHero", property: "scratch"))
        #expect(error("age", "thirty") == .valueMismatch(typeName: "QueryHero", property: "age", expected: "Int", found: "String"))
        #expect(error("age", nil) == .valueMismatch(typeName: "QueryHero", property: "age", expected: "Int", found: "nil"))
        #expect(error("age", 1.5) == .valueMismatch(typeName: "QueryHero", property: "age", expected: "Int", found: "Double"))
        #expect(error("realName", 3) == .valueMismatch(typeName: "QueryHero", property: "realName", expected: "String?", found: "Int"))
        #expect(error("tags", "avenger") == .valueMismatch(typeName: "QueryHero", property: "tags", expected: "[String]", found: "String"))
        #expect(error("publisher", 3) == .valueMismatch(typeName: "QueryHero", property: "publisher", expected: "QueryPublisher?", found: "Int"))
        #expect(error("publisher.nme", "DC") == .unknownProperty(typeName: "QueryPublisher", property: "nme"))
        #expect(error("name.count", 4) == .unknownProperty(typeName: "QueryHero.name", property: "count"))
        #expect(error("dogs.name", "Rex") == .unknownProperty(typeName: "QueryHero.dogs", property: "name"), "to-many links are not paths")
        #expect(error("", "x") == .unknownProperty(typeName: "QueryHero", property: ""))
        #expect(error("publisher.", "x") == .unknownProperty(typeName: "QueryPublisher", property: ""))
        let long = Array(repeating: "publisher", count: 40).joined(separator: ".")
        #expect(error(long, nil) == .nestingTooDeep(limit: 32))
    }
}
