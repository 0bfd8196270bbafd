import Foundation
import Testing
import MirrorStore

/// Saving a model with a stale or partial copy of a shared linked model, with each choice of
/// ``LinkedObjects``.
@Suite("Linked objects on add")
struct LinkedObjectsTests {
    /// A store holding Iron Man and his publisher, then a hero read, then the publisher renamed
    /// by another write: the hero's publisher is now a stale copy.
    static func storeWithStaleCopy() throws -> (Store, Hero) {
        let store = try Store.inMemory(models: [Hero.self])
        try store.write { try $0.add(Hero.ironMan()) }
        let stale = try #require(try store.object(Hero.self, primaryKey: 1455))
        try store.write { try $0.update(Publisher.self, primaryKey: 1, set: \.name, to: "Marvel Comics") }
        return (store, stale)
    }

    @Test("Saving links writes the stale copy back, as documented")
    func savingLinksWritesTheGraphAsGiven() throws {
        let (store, stale) = try Self.storeWithStaleCopy()
        stale.realName = "Anthony Stark"
        try store.write { try $0.add(stale) }
        #expect(try store.object(Publisher.self, primaryKey: 1)?.name == "Marvel")
        #expect(try store.object(Hero.self, primaryKey: 1455)?.realName == "Anthony Stark")
    }

    @Test("Linking by key leaves a shared object alone, whatever the copy holds")
    func referenceOnlyKeepsTheStoredObject() throws {
        let (store, stale) = try Self.storeWithStaleCopy()
        stale.realName = "Anthony Stark"
        try store.write { try $0.add(stale, linkedObjects: .referenceOnly) }
        #expect(try store.object(Publisher.self, primaryKey: 1)?.name == "Marvel Comics")

        // A stub that only carries the key.
        let stub = Publisher()
        stub.identifier = 1
        let hulk = Hero()
        hulk.identifier = 1009
        hulk.name = "Hulk"
        hulk.publisher = stub
        try store.write { try $0.add(hulk, linkedObjects: .referenceOnly) }
        let stored = try #require(try store.object(Hero.self, primaryKey: 1009))
        #expect(stored.publisher?.name == "Marvel Comics")
        #expect(try store.object(Hero.self, primaryKey: 1455)?.publisher?.name == "Marvel Comics")
    }

    @Test("Linking by key to an object that is not stored is a typed error and adds nothing")
    func referenceOnlyToMissingObjectThrows() throws {
        let store = try Store.inMemory(models: [Hero.self])
        let hero = Hero.ironMan()
        let error = #expect(throws: StoreError.self) {
            try store.write { try $0.add(hero, linkedObjects: .referenceOnly) }
        }
        #expect(error?.kind == .missingLinkTarget(typeName: "Publisher", key: "1", linkedFrom: "Hero"))
        #expect(try store.objects(Hero.self).isEmpty)
        #expect(try store.objects(Publisher.self).isEmpty)

        // Added earlier in the same transaction, it is found; deleted earlier, it is not.
        try store.write { transaction in
            let publisher = Publisher()
            publisher.identifier = 1
            publisher.name = "Marvel"
            try transaction.add(publisher)
            try transaction.add(hero, linkedObjects: .referenceOnly)
        }
        #expect(try store.object(Hero.self, primaryKey: 1455)?.publisher?.name == "Marvel")
        #expect(throws: StoreError.self) {
            try store.write { transaction in
                try transaction.delete(Publisher.self, primaryKey: 1)
                try transaction.add(hero, linkedObjects: .referenceOnly)
            }
        }
        #expect(try store.object(Publisher.self, primaryKey: 1) != nil, "the failed transaction wrote nothing")
    }
}
