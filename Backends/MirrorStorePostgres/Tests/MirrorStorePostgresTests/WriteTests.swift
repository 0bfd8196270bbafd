import Foundation
import MirrorStore
import MirrorStorePostgres
import Testing

private struct Refusal: Error, Equatable {}

extension ServerTests {
@Suite("Writes")
struct WriteTests {
    @Test func addReplacesTheObjectWithItsPrimaryKey() async throws {
        let store = try await emptyStore(models: [Item.self], clearing: [Item.self])
        try await store.write { try await $0.add(Item(id: 1, n: 1, s: "first")) }
        try await store.write { try await $0.add(Item(id: 1, n: 2, s: "second")) }
        let read = try await store.object(Item.self, primaryKey: 1)
        #expect(read == Item(id: 1, n: 2, s: "second"))
        #expect(try await store.objects(Item.self).count() == 1)
        await store.close()
    }

    @Test func deleteRemovesOneObjectAndDeleteAllEvery() async throws {
        let store = try await emptyStore(models: [Item.self], clearing: [Item.self])
        try await store.write { try await $0.add(contentsOf: (1...3).map { Item(id: $0) }) }
        let deleted = try await store.write { try await $0.delete(Item.self, primaryKey: 2) }
        let again = try await store.write { try await $0.delete(Item.self, primaryKey: 2) }
        #expect(deleted && !again)
        #expect(try await store.objects(Item.self).all().map(\.id) == [1, 3])
        try await store.write { try await $0.deleteAll(Item.self) }
        #expect(try await store.objects(Item.self).count() == 0)
        await store.close()
    }

    @Test func aThrowingBlockWritesNothingAndRethrowsItsError() async throws {
        let store = try await emptyStore(models: [Item.self], clearing: [Item.self])
        try await store.write { try await $0.add(Item(id: 1, s: "kept")) }
        await #expect(throws: Refusal()) {
            try await store.write { transaction in
                try await transaction.add(Item(id: 2))
                try await transaction.add(Item(id: 1, s: "replaced"))
                try await transaction.delete(Item.self, primaryKey: 1)
                // The block sees its own writes.
                #expect(try await transaction.object(Item.self, primaryKey: 2) != nil)
                throw Refusal()
            }
        }
        #expect(try await store.objects(Item.self).all() == [Item(id: 1, s: "kept")])
        await store.close()
    }

    @Test func aUniqueViolationIsStoreErrorAndRollsBackTheTransaction() async throws {
        let store = try await emptyStore(models: [Account.self], clearing: [Account.self])
        let first = Account(), second = Account(), third = Account()
        first.identifier = "a"; first.email = "hulk@example.com"; first.team = 1; first.number = 1
        second.identifier = "b"; second.email = "hulk@example.com"; second.team = 1; second.number = 2
        try await store.write { try await $0.add(first) }
        await #expect(throws: StoreError(.uniqueViolation(typeName: "Account", property: "email", value: "\"hulk@example.com\""))) {
            try await store.write { transaction in
                let other = Account()
                other.identifier = "c"
                other.email = "other@example.com"
                other.team = 9
                try await transaction.add(other)
                try await transaction.add(second)
            }
        }
        // Canonically equivalent strings are one value, as Swift's == makes them.
        third.identifier = "d"; third.email = "E\u{301}@example.com"; third.team = 2
        let fourth = Account()
        fourth.identifier = "e"; fourth.email = "\u{C9}@example.com"; fourth.team = 3
        try await store.write { try await $0.add(third) }
        await #expect(throws: StoreError.self) { try await store.write { try await $0.add(fourth) } }
        // A unique compound index names both properties.
        let fifth = Account()
        fifth.identifier = "f"; fifth.email = "f@example.com"; fifth.team = 1; fifth.number = 1
        await #expect(throws: StoreError(.uniqueViolation(typeName: "Account", property: "team+number", value: "(1, 1)"))) {
            try await store.write { try await $0.add(fifth) }
        }
        #expect(try await store.objects(Account.self).all().map(\.identifier) == ["a", "d"])
        await store.close()
    }

    @Test func aFailedCallFailsTheWriteEvenWhenTheBlockCatchesIt() async throws {
        let store = try await emptyStore(models: [Account.self], clearing: [Account.self])
        let first = Account(), duplicate = Account(), other = Account()
        first.identifier = "a"; first.email = "same@example.com"
        duplicate.identifier = "b"; duplicate.email = "same@example.com"; duplicate.team = 1
        other.identifier = "c"; other.email = "c@example.com"; other.team = 2
        try await store.write { try await $0.add(first) }
        await #expect(throws: StoreError(.uniqueViolation(typeName: "Account", property: "email", value: "\"same@example.com\""))) {
            try await store.write { transaction in
                try await transaction.add(other)
                do { try await transaction.add(duplicate) } catch {}
            }
        }
        #expect(try await store.objects(Account.self).all().map(\.identifier) == ["a"])
        await store.close()
    }

    @Test func linkedModelsAreSavedAndReadAndDeletedTargetsReadAsNil() async throws {
        let store = try await emptyStore(models: [Sample.self], clearing: [Sample.self, Publisher.self])
        let marvel = Publisher(identifier: 1, name: "Marvel")
        var a = Sample(), b = Sample()
        a.id = 1; a.publisher = marvel
        b.id = 2; b.publisher = marvel
        try await store.write { try await $0.add(contentsOf: [a, b]) }
        #expect(try await store.object(Publisher.self, primaryKey: 1) == marvel)
        #expect(try await store.object(Sample.self, primaryKey: 2)?.publisher == marvel)
        try await store.write { try await $0.delete(Publisher.self, primaryKey: 1) }
        #expect(try await store.object(Sample.self, primaryKey: 1)?.publisher == nil)
        await store.close()
    }

    @Test func cyclesThroughLinksComeBackWithTheSameShape() async throws {
        let store = try await emptyStore(models: [Person.self], clearing: [Person.self])
        let ann = Person(id: 1, name: "Ann"), bob = Person(id: 2, name: "Bob"), cid = Person(id: 3, name: "Cid")
        ann.bestFriend = bob
        bob.bestFriend = ann
        cid.bestFriend = cid
        try await store.write { try await $0.add(contentsOf: [ann, cid]) }
        ann.bestFriend = nil
        bob.bestFriend = nil
        cid.bestFriend = nil
        let read = try #require(try await store.object(Person.self, primaryKey: 1))
        #expect(read.bestFriend?.name == "Bob")
        #expect(read.bestFriend?.bestFriend === read)
        let me = try #require(try await store.object(Person.self, primaryKey: 3))
        #expect(me.bestFriend === me)
        // A condition through a link to the model's own type.
        let name = "Ann"
        let friendsOfAnn = try store.objects(Person.self).filter(#Predicate { $0.bestFriend?.name == name })
        #expect(friendsOfAnn.plan.swiftPart == nil)
        #expect(try await friendsOfAnn.all().map(\.id) == [2])
        for person in [read, me] { person.bestFriend = nil }
        await store.close()
    }

    @Test func linksOfEveryKeyKindAreReadTogether() async throws {
        let store = try await emptyStore(models: [Tagged.self], clearing: [Tagged.self, Parent.self, Owner.self, Badge.self])
        let owners = [Owner(code: "é", name: "one"), Owner(code: "E\u{301}", name: "two"), Owner(code: "'x'", name: "three")]
        let badges = (1...3).map { Badge(id: UUID(uuid: (UInt8($0), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9)), level: $0) }
        let parents = [Parent(key: UInt64.max, owner: owners[0]), Parent(key: 0, owner: owners[2])]
        var tagged: [Tagged] = []
        for index in 0..<30 {
            let owner: Owner? = index % 4 == 0 ? nil : owners[index % 3]
            let parent: Parent? = index % 5 == 0 ? nil : parents[index % 2]
            tagged.append(Tagged(key: UInt64.max - UInt64(index), owner: owner, badge: badges[index % 3], parent: parent))
        }
        // Keys of fewer digits too: primary-key order is numeric, not the text the keys are read as.
        tagged += [Tagged(key: 5, owner: nil, badge: nil, parent: parents[1]), Tagged(key: 40, owner: owners[1], badge: nil, parent: nil)]
        try await store.write { try await $0.add(contentsOf: tagged) }
        #expect(try await store.objects(Tagged.self).all() == tagged.sorted { $0.key < $1.key })
        #expect(try await store.object(Tagged.self, primaryKey: UInt64.max - 7) == tagged[7])
        await store.close()
    }

    @Test func referenceOnlyStoresKeysAndRefusesMissingTargets() async throws {
        let store = try await emptyStore(models: [Sample.self], clearing: [Sample.self, Publisher.self])
        try await store.write { try await $0.add(Publisher(identifier: 1, name: "Marvel")) }
        var stub = Sample(), orphan = Sample(), plain = Sample()
        stub.id = 1; stub.publisher = Publisher(identifier: 1, name: "a stale stub")
        orphan.id = 2; orphan.publisher = Publisher(identifier: 99)
        plain.id = 3
        try await store.write { transaction in
            try await transaction.add(stub, linkedObjects: .referenceOnly)
            // Refused before any statement runs: the transaction goes on.
            await #expect(throws: StoreError(.missingLinkTarget(typeName: "Publisher", key: "99", linkedFrom: "Sample"))) {
                try await transaction.add(orphan, linkedObjects: .referenceOnly)
            }
            var unstorable = Sample()
            unstorable.id = 4
            unstorable.publisher = Publisher(identifier: 5, name: "nul\u{0}")
            await #expect(throws: PostgresStoreError.self) { try await transaction.add(unstorable) }
            try await transaction.add(plain)
        }
        #expect(try await store.object(Sample.self, primaryKey: 1)?.publisher == Publisher(identifier: 1, name: "Marvel"))
        #expect(try await store.objects(Sample.self).all().map(\.id) == [1, 3])
        #expect(try await store.object(Publisher.self, primaryKey: 5) == nil)
        await store.close()
    }

    @Test func aKeyOfTheWrongTypeIsRefused() async throws {
        let store = try await emptyStore(models: [Item.self], clearing: [Item.self])
        await #expect(throws: StoreError(.primaryKeyMismatch(typeName: "Item", expected: "Int", found: RecordValue.string("1").description))) {
            _ = try await store.object(Item.self, primaryKey: "1")
        }
        await store.close()
    }
}
}

@Suite("Errors without a server")
struct OpeningErrorTests {
    @Test func anUnreachableServerFailsFastWithATypedError() async throws {
        let settings = PostgresSettings(host: "127.0.0.1", port: 1, user: "nobody", database: "none", connectTimeout: .seconds(3))
        let clock = ContinuousClock()
        let start = clock.now
        await #expect {
            _ = try await PostgresStore.open(settings, models: [Item.self])
        } throws: { error in
            guard let error = error as? PostgresStoreError, case .connectionFailed(let host, let port, _) = error.kind else { return false }
            return host == "127.0.0.1" && port == 1
        }
        #expect(clock.now - start < .seconds(5))
    }

    @Test func errorsReadAsOneSentence() {
        let error = PostgresStoreError(.unsupportedProperty(typeName: "Shelf", property: "publishers", kind: "[Publisher]", reason: "links inside containers or embedded models (here to Publisher) are not stored yet"))
        #expect(error.description == "Shelf.publishers has kind [Publisher], which the PostgreSQL backend does not store yet: links inside containers or embedded models (here to Publisher) are not stored yet; list it in ignoredProperties or use the file store.")
        let migration = PostgresStoreError(.migrationFailed(typeName: "Person", reason: "its table has no column name to rename to fullName"))
        #expect(migration.description == "The migration of Person cannot be carried out: its table has no column name to rename to fullName; the database was left as it was.")
    }
}
