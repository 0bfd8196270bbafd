import Foundation
import MirrorStore
@testable import MirrorStorePostgres
import PostgresNIO
import Testing

private struct Refusal: Error, Equatable {}

/// Drops the tables of `typeNames` and their metadata, so a test starts from nothing.
func dropTables(_ typeNames: [String]) async throws {
    let store = try await PostgresStore.open(try #require(serverSettings), models: [Item.self])
    try await store.withConnection { connection in
        for name in typeNames {
            try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE IF EXISTS \(SQL.identifier(name)) CASCADE"), logger: PostgresStore.logger)
            try await connection.query("DELETE FROM mirrorstore_metadata WHERE type_name = \(name)", logger: PostgresStore.logger)
        }
    }
    await store.close()
}

/// The columns of the table of `typeName`, in order.
func columns(of typeName: String) async throws -> [String] {
    let store = try await PostgresStore.open(try #require(serverSettings), models: [Item.self])
    let quoted = SQL.identifier(typeName)
    let names = try await store.withConnection { connection in
        var names: [String] = []
        let rows = try await connection.query(
            "SELECT attname::text FROM pg_attribute WHERE attrelid = to_regclass(\(quoted)) AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
            logger: PostgresStore.logger)
        for try await name in rows.decode(String.self) { names.append(name) }
        return names
    }
    await store.close()
    return names
}

extension ServerTests {
@Suite("Migrations")
struct MigrationTests {
    @Test func aRaisedVersionRenamesAddsAndDropsColumnsInOneTransaction() async throws {
        let settings = try #require(serverSettings)
        try await dropTables(["Migrated"])
        let one = try await PostgresStore.open(settings, models: [MigrationOne.self], schemaVersion: 1)
        try await one.write { transaction in
            try await transaction.add(MigrationOne(id: 1, name: "Ada", note: "first"))
            try await transaction.add(MigrationOne(id: 2, name: "Grace"))
        }
        await one.close()

        // Without a raised version, a changed model is refused, as in the file store.
        await #expect(throws: StoreError.self) { _ = try await PostgresStore.open(settings, models: [MigrationTwo.self], schemaVersion: 1) }

        let two = try await PostgresStore.open(settings, models: [MigrationTwo.self], schemaVersion: 2) { migration, oldSchemaVersion in
            #expect(oldSchemaVersion == 1 && migration.newSchemaVersion == 2)
            if oldSchemaVersion < 2 { try migration.renameProperty(onType: "Migrated", from: "name", to: "fullName") }
        }
        #expect(try await two.objects(MigrationTwo.self).all() == [
            MigrationTwo(id: 1, fullName: "Ada", age: 42, tags: ["new"], nickname: nil),
            MigrationTwo(id: 2, fullName: "Grace", age: 42, tags: ["new"], nickname: nil),
        ])
        #expect(try await two.objects(MigrationTwo.self).filter(#Predicate { $0.age == 42 && $0.fullName == "Ada" }).count() == 1)
        try await two.write { try await $0.add(MigrationTwo(id: 3, fullName: "Hedy", age: 7, tags: [], nickname: "H")) }
        #expect(try await two.object(MigrationTwo.self, primaryKey: 3)?.nickname == "H")
        await two.close()
        #expect(try await columns(of: "Migrated") == ["id", "fullName", "age", "tags", "nickname"])

        // Opening again with version 2 migrates nothing; the old models are now refused.
        let again = try await PostgresStore.open(settings, models: [MigrationTwo.self], schemaVersion: 2) { _, _ in
            Issue.record("the migration ran again")
        }
        await again.close()
        await #expect(throws: StoreError(.newerSchemaVersion(stored: 2, configured: 1))) {
            _ = try await PostgresStore.open(settings, models: [MigrationOne.self], schemaVersion: 1)
        }

        // deleteAllObjects empties the table in the same transaction; a block that throws
        // after it deletes nothing.
        await #expect(throws: Refusal()) {
            _ = try await PostgresStore.open(settings, models: [MigrationTwo.self], schemaVersion: 3) { migration, _ in
                try migration.deleteAllObjects(ofType: "Migrated")
                throw Refusal()
            }
        }
        #expect(throws: PostgresStoreError(.migrationFailed(typeName: "Nothing", reason: "it is not one of the store's types"))) {
            try PostgresMigration(oldSchemaVersion: 1, newSchemaVersion: 2, mapping: try DatabaseMapping(models: [MigrationTwo.self]), storedTables: [:], defaults: [:])
                .deleteAllObjects(ofType: "Nothing")
        }

        // A property that stops being optional takes the init() value where it was nil; one
        // that becomes optional keeps its values and may hold nil.
        let three = try await PostgresStore.open(settings, models: [MigrationThree.self], schemaVersion: 3)
        #expect(try await three.objects(MigrationThree.self).all() == [
            MigrationThree(id: 1, fullName: "Ada", age: 42, tags: ["new"], nickname: "none"),
            MigrationThree(id: 2, fullName: "Grace", age: 42, tags: ["new"], nickname: "none"),
            MigrationThree(id: 3, fullName: "Hedy", age: 7, tags: [], nickname: "H"),
        ])
        try await three.write { try await $0.add(MigrationThree(id: 4, fullName: "Joan", age: nil)) }
        #expect(try await three.object(MigrationThree.self, primaryKey: 4)?.age == nil)
        await three.close()

        let four = try await PostgresStore.open(settings, models: [MigrationThree.self], schemaVersion: 4) { migration, oldSchemaVersion in
            #expect(oldSchemaVersion == 3)
            try migration.deleteAllObjects(ofType: "Migrated")
        }
        #expect(try await four.objects(MigrationThree.self).count() == 0)
        await four.close()
    }

    @Test func anAddedArrayOfLinksStartsEmptyAndThenHoldsLinks() async throws {
        let settings = try #require(serverSettings)
        try await dropTables(["MigratedLinks"])
        let before = try await PostgresStore.open(settings, models: [LinksBefore.self], schemaVersion: 1)
        try await before.write { try await $0.add(LinksBefore(id: 1)) }
        await before.close()

        let after = try await PostgresStore.open(settings, models: [LinksAfter.self], schemaVersion: 2)
        #expect(try await after.objects(LinksAfter.self).all() == [LinksAfter(id: 1)])
        let linked = LinksAfter(id: 2, labels: [Label(name: "a", color: 1)], spares: [nil, Label(name: "b")])
        try await after.write { try await $0.add(linked) }
        #expect(try await after.object(LinksAfter.self, primaryKey: 2) == linked)
        await after.close()
        #expect(try await columns(of: "MigratedLinks") == ["id", "labels", "spares"])
    }

    @Test func aFailedMigrationLeavesTheDatabaseAsItWas() async throws {
        let settings = try #require(serverSettings)
        try await dropTables(["Migrated", "MigratedOther"])
        let one = try await PostgresStore.open(settings, models: [MigrationOne.self, MigrationOther.self], schemaVersion: 1)
        try await one.write { transaction in
            try await transaction.add(MigrationOne(id: 1, name: "Ada"))
            try await transaction.add(MigrationOther(id: 1, value: "x"))
        }
        await one.close()

        // The block throws: nothing happens.
        await #expect(throws: Refusal()) {
            _ = try await PostgresStore.open(settings, models: [MigrationTwo.self, MigrationOther.self], schemaVersion: 2) { migration, _ in
                try migration.renameProperty(onType: "Migrated", from: "name", to: "fullName")
                throw Refusal()
            }
        }
        #expect(try await columns(of: "Migrated") == ["id", "name", "note"])

        // "Migrated" is altered first, then "MigratedOther" cannot be: the ALTERs already run
        // are rolled back with the rest.
        await #expect(throws: PostgresStoreError(.migrationFailed(
            typeName: "MigratedOther", reason: "value is stored as text and the model needs bigint; convert it in migration.enumerateObjects(ofType: \"MigratedOther\")"))) {
            _ = try await PostgresStore.open(settings, models: [MigrationTwo.self, MigrationOtherAsInt.self], schemaVersion: 2) { migration, _ in
                try migration.renameProperty(onType: "Migrated", from: "name", to: "fullName")
            }
        }
        #expect(try await columns(of: "Migrated") == ["id", "name", "note"])

        // A rename the model cannot take is refused by name.
        await #expect(throws: PostgresStoreError(.migrationFailed(typeName: "Migrated", reason: "the model has no property surname to rename name to"))) {
            _ = try await PostgresStore.open(settings, models: [MigrationTwo.self], schemaVersion: 2) { migration, _ in
                try migration.renameProperty(onType: "Migrated", from: "name", to: "surname")
            }
        }

        // Version 1 still opens, with its rows.
        let before = try await PostgresStore.open(settings, models: [MigrationOne.self, MigrationOther.self], schemaVersion: 1)
        #expect(try await before.objects(MigrationOne.self).all() == [MigrationOne(id: 1, name: "Ada")])
        #expect(try await before.objects(MigrationOther.self).all() == [MigrationOther(id: 1, value: "x")])
        await before.close()
    }
}
}
