import Foundation
import Testing
import MirrorStore
import TestSupport

// Three versions of one app's models, stored under the same type names. Version 1 is the model
// that wrote Fixtures/people-v1.store.

enum V1 {
    struct Person: Persistable {
        var identifier = 0
        var name = ""
        var firstName = ""
        var lastName = ""
        var age: Int32 = 0
        init() {}
        static var primaryKey: String? { "identifier" }
        static var persistedTypeName: String { "Person" }
    }

    struct Dog: Persistable {
        var identifier = 0
        var name = ""
        var owner: Person?
        init() {}
        static var primaryKey: String? { "identifier" }
        static var persistedTypeName: String { "Dog" }
    }

    struct Note: Persistable {
        var text = ""
        init() {}
        static var persistedTypeName: String { "Note" }
    }
}

enum V2 {
    /// `name` renamed to `fullName`; `age` widened to `Int` and made optional.
    struct Person: Persistable {
        var identifier = 0
        var fullName = ""
        var firstName = ""
        var lastName = ""
        var age: Int?
        init() {}
        static var primaryKey: String? { "identifier" }
        static var persistedTypeName: String { "Person" }
    }

    struct Dog: Persistable {
        var identifier = 0
        var name = ""
        var owner: Person?
        init() {}
        static var primaryKey: String? { "identifier" }
        static var persistedTypeName: String { "Dog" }
    }
}

enum V3 {
    /// `fullName` combined from the two names, which are gone; `nickname` added.
    struct Person: Persistable, Equatable {
        var identifier = 0
        var fullName = ""
        var age: Int?
        var nickname = "none"
        init() {}
        static var primaryKey: String? { "identifier" }
        static var persistedTypeName: String { "Person" }
    }

    struct Dog: Persistable {
        var identifier = 0
        var name = ""
        var owner: Person?
        init() {}
        static var primaryKey: String? { "identifier" }
        static var persistedTypeName: String { "Dog" }
    }
}

/// Seed 002's migration, as the issue writes it: one block for every version.
let seedMigration: Store.Configuration.MigrationBlock = { migration, oldSchemaVersion in
    if oldSchemaVersion < 2 {
        try migration.renameProperty(onType: "Person", from: "name", to: "fullName")
    }
    if oldSchemaVersion < 3 {
        try migration.enumerateObjects(ofType: "Person") { old, new in
            let first: String = try old.value(forProperty: "firstName")
            let last: String = try old.value(forProperty: "lastName")
            try new.setValue("\(first) \(last)", forProperty: "fullName")
        }
    }
}

/// What the app's version 2 shipped: the rename alone.
let v2Migration: Store.Configuration.MigrationBlock = { migration, oldSchemaVersion in
    if oldSchemaVersion < 2 {
        try migration.renameProperty(onType: "Person", from: "name", to: "fullName")
    }
}

func configuration(version: Int, migration: Store.Configuration.MigrationBlock? = seedMigration) -> Store.Configuration {
    var configuration = Store.Configuration()
    configuration.schemaVersion = version
    configuration.migration = migration
    return configuration
}

/// A copy of the version-1 fixture in `directory`, written by MirrorStore before migrations existed.
func fixtureCopy(in directory: String) throws -> String {
    let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/people-v1.store")
    let path = directory + "/people.store"
    try FileManager.default.copyItem(atPath: fixture.path, toPath: path)
    return path
}

func fileBytes(_ path: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path))
}

@Suite("Migrations")
struct MigrationTests {
    @Test("A file written before migrations existed opens as it is")
    func fixtureOpens() throws {
        try withTemporaryDirectory { directory in
            let path = try fixtureCopy(in: directory)
            let store = try Store(path: path, models: [V1.Dog.self, V1.Note.self], configuration: configuration(version: 1))
            #expect(try store.objects(V1.Person.self).map(\.firstName) == ["Ada", "Alan", "Grace"])
            #expect(try store.object(V1.Dog.self, primaryKey: 10)?.owner?.lastName == "Lovelace")
            #expect(Set(try store.objects(V1.Note.self).map(\.text)) == ["first", "second"])
        }
    }

    @Test("Seed 002: a renamed property keeps its values, after reopen too")
    func renameProperty() throws {
        try withTemporaryDirectory { directory in
            let path = try fixtureCopy(in: directory)
            do {
                let store = try Store(path: path, models: [V2.Dog.self], configuration: configuration(version: 2, migration: v2Migration))
                #expect(try store.objects(V2.Person.self).map(\.fullName) == ["Ada", "Alan", "Grace"])
                #expect(try store.objects(V2.Person.self).map(\.age) == [36, 41, 85])
                try store.close()
            }
            let reopened = try Store(path: path, models: [V2.Dog.self], configuration: configuration(version: 2, migration: nil))
            #expect(try reopened.object(V2.Person.self, primaryKey: 2)?.fullName == "Alan")
            #expect(try reopened.object(V2.Dog.self, primaryKey: 11)?.owner?.fullName == "Alan")
        }
    }

    @Test("Seed 002: two fields combined into one; v1 to v3 in one open")
    func chainInOneOpen() throws {
        try withTemporaryDirectory { directory in
            let path = try fixtureCopy(in: directory)
            try Store(path: path, models: [V3.Dog.self], configuration: configuration(version: 3)).close()
            let store = try Store(path: path, models: [V3.Dog.self], configuration: configuration(version: 3))
            #expect(try store.objects(V3.Person.self).map(\.fullName) == ["Ada Lovelace", "Alan Turing", "Grace Hopper"])
            #expect(try store.objects(V3.Person.self).map(\.nickname) == ["none", "none", "none"])
            #expect(try store.object(V3.Dog.self, primaryKey: 10)?.owner?.fullName == "Ada Lovelace")
            try store.close()
            // Types no model names any more stay in the file, as they were.
            let inspector = try StoreInspector(path: path)
            #expect(inspector.typeNames == ["Dog", "Note", "Person"])
            #expect(inspector.count(of: "Note") == 2)
            #expect(inspector.schemaVersion == 3)
        }
    }

    @Test("v1 to v2, then v2 to v3, gives what one open gives")
    func chainInTwoOpens() throws {
        try withTemporaryDirectory { directory in
            let path = try fixtureCopy(in: directory)
            try Store(path: path, models: [V2.Dog.self], configuration: configuration(version: 2, migration: v2Migration)).close()
            #expect(try StoreInspector(path: path).schemaVersion == 2)
            try Store(path: path, models: [V3.Dog.self], configuration: configuration(version: 3)).close()
            let store = try Store(path: path, models: [V3.Dog.self], configuration: configuration(version: 3))
            #expect(try store.objects(V3.Person.self).map(\.fullName) == ["Ada Lovelace", "Alan Turing", "Grace Hopper"])
            #expect(try store.objects(V3.Person.self).map(\.age) == [36, 41, 85])
        }
    }

    @Test("A changed model without a raised version is refused, and the file is unchanged")
    func versionNotRaised() throws {
        try withTemporaryDirectory { directory in
            let path = try fixtureCopy(in: directory)
            let before = try fileBytes(path)
            let error = #expect(throws: StoreError.self) {
                try Store(path: path, models: [V3.Dog.self], configuration: configuration(version: 1))
            }
            #expect(error?.kind == .schemaChanged(version: 1, differences: [
                "Person: property fullName was added", "Person: property age changed from Int32 to Int?",
                "Person: property nickname was added", "Person: property name was removed",
                "Person: property firstName was removed", "Person: property lastName was removed",
            ]))
            #expect(try fileBytes(path) == before)
        }
    }

    @Test("Bad migrations are typed errors and leave the file byte for byte as it was")
    func badMigrationsChangeNothing() throws {
        struct BlockFailure: Error, Equatable {}
        try withTemporaryDirectory { directory in
            let path = try fixtureCopy(in: directory)
            let before = try fileBytes(path)
            func attempt(_ version: Int, _ migration: Store.Configuration.MigrationBlock?) -> (any Error)? {
                do {
                    try Store(path: path, models: [V3.Dog.self], configuration: configuration(version: version, migration: migration)).close()
                    return nil
                } catch {
                    return error
                }
            }
            // A block that throws, before or during the pass.
            let early = attempt(3) { _, _ in throw BlockFailure() }
            #expect(early as? BlockFailure == BlockFailure())
            let during = attempt(3) { migration, _ in
                try migration.enumerateObjects(ofType: "Person") { old, _ in
                    if try old.value(forProperty: "identifier", as: Int.self) == 3 { throw BlockFailure() }
                }
            }
            #expect(during as? BlockFailure == BlockFailure())
            // A rename of a property the store does not have.
            let rename = attempt(3) { migration, _ in
                try migration.renameProperty(onType: "Person", from: "surname", to: "fullName")
            }
            #expect((rename as? MigrationError)?.kind == .missingProperty(typeName: "Person", property: "surname"))
            // A value of the wrong kind for the new property.
            let wrongKind = attempt(3) { migration, _ in
                try migration.enumerateObjects(ofType: "Person") { _, new in try new.setValue(.int(5), forProperty: "fullName") }
            }
            #expect((wrongKind as? MappingError)?.kind == .typeMismatch(expected: "String", found: "int(5)"))
            // Two objects left with one primary key.
            let duplicate = attempt(3) { migration, _ in
                try migration.enumerateObjects(ofType: "Person") { _, new in try new.setValue(.int(1), forProperty: "identifier") }
            }
            #expect((duplicate as? MigrationError)?.kind == .duplicatePrimaryKey(typeName: "Person", key: "1"))
            // The same, the other way round: a changed key first, then an object keeping it.
            let moved = attempt(3) { migration, _ in
                try migration.enumerateObjects(ofType: "Person") { old, new in
                    if try old.value(forProperty: "identifier", as: Int.self) == 1 { try new.setValue(.int(2), forProperty: "identifier") }
                }
            }
            #expect((moved as? MigrationError)?.kind == .duplicatePrimaryKey(typeName: "Person", key: "2"))
            // A link to an object the migration gave another key (one it deletes reads nil instead,
            // as after any delete: MigrationDeleteRulesTests).
            let dangling = attempt(3) { migration, _ in
                try migration.enumerateObjects(ofType: "Person") { old, new in
                    if try old.value(forProperty: "identifier", as: Int.self) == 1 { try new.setValue(.int(100), forProperty: "identifier") }
                }
            }
            #expect((dangling as? MigrationError)?.kind == .missingLinkTarget(typeName: "Person", key: "1", linkedFrom: "Dog"))
            // A lowered version.
            let lowered = attempt(0, nil)
            #expect((lowered as? StoreError)?.kind == .newerSchemaVersion(stored: 1, configured: 0))
            #expect(try fileBytes(path) == before)
            // And the migration still runs once the block is right.
            #expect(attempt(3, seedMigration) == nil)
        }
    }
}

