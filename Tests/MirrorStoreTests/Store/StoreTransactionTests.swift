import Foundation
import MirrorStoreEngine
import Testing
import TestSupport
@testable import MirrorStore

/// Transactions, reads and relationships, on a file store and on an in-memory one alike.
@Suite("Store transactions")
struct StoreTransactionTests {
    /// `streamed`: a file store whose transactions stream every record to the log as it is
    /// added (`PendingWrites`), which must behave exactly as one holding them.
    enum Backing: String, CaseIterable { case file, memory, streamed }

    private func withStore(_ backing: Backing, models: [any Persistable.Type] = [Hero.self, Person.self, Article.self, AllTypes.self],
                           _ body: (Store) throws -> Void) throws {
        switch backing {
        case .memory:
            try body(Store.inMemory(models: models))
        case .file, .streamed:
            try withTemporaryDirectory { directory in
                var configuration = Store.Configuration()
                if backing == .streamed { configuration.transactionStreamingThreshold = 1 }
                let store = try Store(path: directory + "/test.store", models: models, configuration: configuration)
                try body(store)
                try store.close()
            }
        }
    }

    @Test("add inserts, then replaces by primary key", arguments: Backing.allCases)
    func addAndReplace(backing: Backing) throws {
        try withStore(backing) { store in
            let hero = Hero.ironMan()
            try store.write { try $0.add(hero) }
            #expect(try store.object(Hero.self, primaryKey: 1455)?.realName == "Tony Stark")
            hero.realName = "Anthony Edward Stark"
            try store.write { try $0.add(hero) }
            #expect(try store.object(Hero.self, primaryKey: 1455)?.realName == "Anthony Edward Stark")
            #expect(try store.objects(Hero.self).count == 1)
            #expect(try store.object(Hero.self, primaryKey: 1) == nil)
        }
    }

    @Test("add many, count without mapping, results in key order", arguments: Backing.allCases)
    func addMany(backing: Backing) throws {
        try withStore(backing) { store in
            let people = [5, 3, 9, 1].map { Person.named("p\($0)", $0) }
            try store.write { try $0.add(contentsOf: people) }
            let results = try store.objects(Person.self)
            #expect(results.count == 4)
            #expect(try results.all().map(\.identifier) == [1, 3, 5, 9])
            #expect(try results.object(at: 2).name == "p5")
            #expect(throws: StoreError.self) { try results.object(at: 4) }
        }
    }

    @Test("models without a primary key get generated identities", arguments: Backing.allCases)
    func generatedIdentities(backing: Backing) throws {
        try withStore(backing) { store in
            var model = AllTypes()
            for value in 0..<3 {
                model.int = value
                try store.write { try $0.add(model) }
            }
            try store.write { try $0.add(contentsOf: [model, model]) }
            let all = try store.objects(AllTypes.self).all()
            #expect(all.map(\.int) == [0, 1, 2, 2, 2])
            #expect(throws: StoreError(.noPrimaryKey(typeName: "AllTypes"))) {
                try store.write { try $0.delete(model) }
            }
        }
    }

    @Test("partial updates by closure and by key path", arguments: Backing.allCases)
    func partialUpdates(backing: Backing) throws {
        try withStore(backing) { store in
            try store.write { try $0.add(Hero.ironMan()) }
            let updated = try store.write { transaction in
                try transaction.update(Hero.self, primaryKey: 1455) { $0.realName = "Anthony Edward Stark" }
            }
            #expect(updated?.realName == "Anthony Edward Stark")
            try store.write { try $0.update(Hero.self, primaryKey: 1455, set: \.tags, to: ["armor"]) }
            let hero = try #require(try store.object(Hero.self, primaryKey: 1455))
            #expect(hero.realName == "Anthony Edward Stark")
            #expect(hero.tags == ["armor"])
            #expect(hero.name == "Iron Man", "other properties are untouched")
            let missing = try store.write { try $0.update(Hero.self, primaryKey: 42) { $0.name = "nobody" } }
            #expect(missing == nil)
            #expect(try store.objects(Hero.self).count == 1)
        }
    }

    @Test("delete by key, by model, and all of a type", arguments: Backing.allCases)
    func deletes(backing: Backing) throws {
        try withStore(backing) { store in
            let people = (1...5).map { Person.named("p\($0)", $0) }
            try store.write { try $0.add(contentsOf: people) }
            try store.write { transaction in
                try transaction.delete(Person.self, primaryKey: 2)
                try transaction.delete(people[3])
            }
            #expect(try store.objects(Person.self).all().map(\.identifier) == [1, 3, 5])
            try store.write { try $0.deleteAll(Person.self) }
            #expect(try store.objects(Person.self).isEmpty)
            try store.write { transaction in
                try transaction.add(people[0])
                try transaction.deleteAll(Person.self)
                try transaction.add(people[1])
            }
            #expect(try store.objects(Person.self).all().map(\.identifier) == [2])
        }
    }

    @Test("reads inside a transaction see its own writes", arguments: Backing.allCases)
    func readYourWrites(backing: Backing) throws {
        try withStore(backing) { store in
            try store.write { transaction in
                try transaction.add(Person.named("Ada", 1))
                #expect(try transaction.object(Person.self, primaryKey: 1)?.name == "Ada")
                #expect(try store.object(Person.self, primaryKey: 1) == nil, "others see nothing before commit")
                try transaction.delete(Person.self, primaryKey: 1)
                #expect(try transaction.object(Person.self, primaryKey: 1) == nil)
            }
        }
    }

    @Test("an error thrown in the block leaves the store exactly as before", arguments: Backing.allCases)
    func rollback(backing: Backing) throws {
        struct Abort: Error {}
        try withStore(backing) { store in
            try store.write { try $0.add(Person.named("kept", 1)) }
            let before = store.statistics
            #expect(throws: Abort.self) {
                try store.write { transaction in
                    try transaction.add(Person.named("lost", 2))
                    try transaction.update(Person.self, primaryKey: 1) { $0.name = "changed" }
                    try transaction.deleteAll(Hero.self)
                    throw Abort()
                }
            }
            #expect(store.statistics == before)
            #expect(try store.objects(Person.self).all().map(\.name) == ["kept"])
        }
    }

    @Test("a transaction used after its block is refused")
    func transactionEnded() throws {
        let store = try Store.inMemory(models: [Person.self])
        let escaped = try store.write { $0 }
        #expect(throws: StoreError(.transactionEnded)) { try escaped.add(Person.named("late", 1)) }
        #expect(StoreError(.transactionEnded).description == "The write transaction was used after its write block returned.")
    }

    @Test("linked models with a primary key are stored once and updated on their own", arguments: Backing.allCases)
    func references(backing: Backing) throws {
        try withStore(backing) { store in
            let marvel = Publisher()
            marvel.identifier = 1
            marvel.name = "Marvel"
            let heroes = (1...3).map { number in
                let hero = Hero()
                hero.identifier = number
                hero.publisher = marvel
                return hero
            }
            try store.write { try $0.add(contentsOf: heroes) }
            #expect(try store.objects(Publisher.self).count == 1, "the shared target is stored once")
            try store.write { try $0.update(Publisher.self, primaryKey: 1, set: \.name, to: "Marvel Comics") }
            let read = try store.objects(Hero.self).all()
            #expect(read.map { $0.publisher?.name } == ["Marvel Comics", "Marvel Comics", "Marvel Comics"])
            #expect(read[0].publisher === read[2].publisher, "one read returns one instance per stored record")
            try store.write { try $0.delete(Publisher.self, primaryKey: 1) }
            #expect(try store.object(Hero.self, primaryKey: 1)?.publisher == nil, "a deleted target reads as nil")
        }
    }

    @Test("models without a primary key are embedded in their parent", arguments: Backing.allCases)
    func embedding(backing: Backing) throws {
        try withStore(backing) { store in
            var article = Article()
            article.slug = "swift"
            article.tags = [Tag("lang", weight: 2), Tag("apple")]
            article.featured = Tag("hot")
            article.byKey = ["a": Tag("x")]
            try store.write { try $0.add(article) }
            #expect(store.statistics.objectCounts["Tag"] == nil, "embedded models have no records of their own")
            let copy = try #require(try store.object(Article.self, primaryKey: "swift"))
            #expect(copy.tags == article.tags)
            #expect(copy.featured == article.featured)
            #expect(copy.byKey == article.byKey)
        }
    }

    @Test("cycles through models with a primary key survive the store", arguments: Backing.allCases)
    func cycles(backing: Backing) throws {
        try withStore(backing) { store in
            let ada = Person.named("Ada", 1)
            let bob = Person.named("Bob", 2)
            ada.bestFriend = bob
            bob.bestFriend = ada
            ada.friends = [ada, bob]
            try store.write { try $0.add(ada) }
            ada.bestFriend = nil
            bob.bestFriend = nil
            ada.friends = []
            let copy = try #require(try store.object(Person.self, primaryKey: 1))
            #expect(copy.bestFriend?.name == "Bob")
            #expect(copy.bestFriend?.bestFriend === copy)
            #expect(copy.friends.first === copy)
            #expect(copy.friends.last === copy.bestFriend)
            copy.bestFriend?.bestFriend = nil
            copy.bestFriend = nil
            copy.friends = []
        }
    }

    @Test("a cycle through embedded models is refused with a typed error")
    func embeddedCycle() throws {
        let store = try Store.inMemory(models: [Node.self])
        let node = Node()
        node.next = node
        defer { node.next = nil }
        let error = #expect(throws: StoreError.self) { try store.write { try $0.add(node) } }
        #expect(error == StoreError(.embeddedCycle(typeName: "Node")))
        #expect(error?.description == "A cycle runs through Node, which has no primary key and is embedded in its parent; give it a primary key to link it in cycles.")
        #expect(try store.objects(Node.self).isEmpty)
    }

    @Test("primary keys of every kind: Int, String, UUID, UInt8", arguments: Backing.allCases)
    func keyKinds(backing: Backing) throws {
        try withStore(backing, models: [Article.self, Device.self, Counter.self]) { store in
            var device = Device()
            device.serial = UUID()
            device.model = "X"
            var counter = Counter()
            counter.slot = 255
            counter.count = 7
            var article = Article()
            article.slug = "é-ü"
            try store.write { transaction in
                try transaction.add(device)
                try transaction.add(counter)
                try transaction.add(article)
            }
            #expect(try store.object(Device.self, primaryKey: device.serial)?.model == "X")
            #expect(try store.object(Counter.self, primaryKey: UInt8(255))?.count == 7)
            #expect(try store.object(Article.self, primaryKey: "é-ü") != nil)
            #expect(throws: StoreError(.primaryKeyMismatch(typeName: "Counter", expected: "UInt8", found: "int(255)"))) {
                try store.object(Counter.self, primaryKey: 255)
            }
            #expect(throws: StoreError(.primaryKeyMismatch(typeName: "Article", expected: "String", found: "int(1)"))) {
                try store.object(Article.self, primaryKey: 1)
            }
        }
    }

    @Test("a model the store was not opened with is refused")
    func unknownModel() throws {
        let store = try Store.inMemory(models: [Person.self])
        #expect(throws: StoreError(.unknownModel(typeName: "Hero"))) { try store.objects(Hero.self) }
        #expect(throws: StoreError(.unknownModel(typeName: "Hero"))) { try store.write { try $0.add(Hero()) } }
        #expect(StoreError(.unknownModel(typeName: "Hero")).description
            == "Hero is not one of this store's models; list it in the models the store is opened with.")
        #expect(try store.objects(Address.self).isEmpty, "models linked from declared ones are known too")
    }
}
