import Foundation
import MirrorStore
import Testing
import TestSupport

/// What the new-user audit of issue 24 found besides the read defects.
@Suite struct AuditFindingTests {
    /// Seed 000's model: `let` properties and the memberwise initialiser only.
    struct Character: Persistable, Equatable {
        let identifier: Int
        let name: String
        let realName: String
        let aliases: [String]
        static var primaryKey: String? { "identifier" }
    }

    @Test("a partial update sets a let of an immutable struct by key path")
    func partialUpdateOfImmutableStruct() throws {
        let store = try Store.inMemory(models: [Character.self])
        try store.write { try $0.add(Character(identifier: 1455, name: "Iron Man", realName: "Tony Stark", aliases: ["Shellhead"])) }
        let updated = try store.write { transaction in
            try transaction.update(Character.self, primaryKey: 1455, set: \.realName, to: "Anthony Edward Stark")
        }
        let expected = Character(identifier: 1455, name: "Iron Man", realName: "Anthony Edward Stark", aliases: ["Shellhead"])
        #expect(updated == expected)
        #expect(try store.object(Character.self, primaryKey: 1455) == expected)
        try store.write { try $0.update(Character.self, primaryKey: 1455, set: \.aliases, to: ["Tony", "Shellhead"]) }
        #expect(try store.object(Character.self, primaryKey: 1455)?.aliases == ["Tony", "Shellhead"])
        // No model under the key: nothing is written.
        let missing = try store.write { try $0.update(Character.self, primaryKey: 7, set: \.name, to: "Nobody") }
        #expect(missing == nil)
        #expect(try store.objects(Character.self).count == 1)
    }

    @Test("a partial update by a key path that names no stored property is refused")
    func partialUpdateOfComputedProperty() throws {
        let store = try Store.inMemory(models: [Character.self])
        try store.write { try $0.add(Character(identifier: 1, name: "A", realName: "B", aliases: [])) }
        #expect {
            try store.write { try $0.update(Character.self, primaryKey: 1, set: \.name.count, to: 3) }
        } throws: { error in
            guard case .notAStoredProperty(let typeName, let keyPath)? = (error as? StoreError)?.kind else { return false }
            return typeName == "Character" && keyPath.hasPrefix("\\Character.name.")
        }
    }

    @Test("delete says whether a model had the key")
    func deleteSaysWhetherItDeleted() throws {
        let store = try Store.inMemory(models: [Character.self])
        let model = Character(identifier: 1, name: "A", realName: "B", aliases: [])
        try store.write { try $0.add(model) }
        let outcomes = try store.write { transaction in
            [try transaction.delete(Character.self, primaryKey: 2),
             try transaction.delete(Character.self, primaryKey: 1),
             try transaction.delete(Character.self, primaryKey: 1),
             try transaction.delete(model)]
        }
        #expect(outcomes == [false, true, false, false])
        #expect(try store.write { try $0.delete(model) } == false)
    }

    @Test("a closed store refuses objects(_:), object(_:primaryKey:) whether or not it held the key, and write(_:)")
    func closedStoreRefusesQueries() throws {
        let directory = TemporaryDirectory()
        let store = try Store(path: directory.file("closed.store"), models: [Character.self])
        try store.write { try $0.add(Character(identifier: 1, name: "A", realName: "B", aliases: [])) }
        try store.close()
        #expect(throws: StorageError.self) { try store.object(Character.self, primaryKey: 1) }
        #expect(throws: StorageError(.closed)) { try store.object(Character.self, primaryKey: 2) }
        #expect(throws: StorageError.self) { try store.objects(Character.self) }
        var ran = false
        #expect(throws: StorageError(.closed)) { try store.write { _ in ran = true } }
        #expect(!ran)
    }

    final class Dog: Persistable {
        var identifier = 0
        var name = ""
        init() {}
        static var primaryKey: String? { "identifier" }
    }

    final class Owner: Persistable {
        var identifier = 0
        var dog: Dog?
        var dogs: [Dog] = []
        init() {}
        static var primaryKey: String? { "identifier" }
    }

    /// The next version of `Owner`: one property more.
    final class OwnerV2: Persistable {
        var identifier = 0
        var dog: Dog?
        var dogs: [Dog] = []
        var nickname = ""
        init() {}
        static var primaryKey: String? { "identifier" }
        static var persistedTypeName: String { "Owner" }
    }

    @Test("links to deleted objects read as nil, and an automatic migration keeps them as the store does")
    func migrationAcceptsLinksTheStoreAccepts() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("dangling.store")
        do {
            let store = try Store(path: path, models: [Owner.self])
            try store.write { transaction in
                let dog = Dog()
                dog.identifier = 10
                let other = Dog()
                other.identifier = 11
                let owner = Owner()
                owner.identifier = 1
                owner.dog = dog
                owner.dogs = [dog, other]
                try transaction.add(owner)
            }
            #expect(try store.write { try $0.delete(Dog.self, primaryKey: 10) })
            let read = try #require(try store.object(Owner.self, primaryKey: 1))
            #expect(read.dog == nil)
            #expect(read.dogs.map(\.identifier) == [11])
            try store.close()
        }
        var configuration = Store.Configuration()
        configuration.schemaVersion = 1
        let store = try Store(path: path, models: [OwnerV2.self], configuration: configuration)
        defer { try? store.close() }
        let migrated = try #require(try store.object(OwnerV2.self, primaryKey: 1))
        #expect(migrated.dog == nil)
        #expect(migrated.dogs.map(\.identifier) == [11])
    }
}
