import Foundation
import MirrorStore
@testable import MirrorStorePostgres
import PostgresNIO
import Testing

private struct Refusal: Error, Equatable {}

/// The names of `typeName`'s primary key and foreign keys, and of its indexes, sorted.
private func constraintsAndIndexes(of typeName: String) async throws -> [String] {
    let store = try await PostgresStore.open(try #require(serverSettings), models: [Item.self])
    let quoted = SQL.identifier(typeName)
    let names = try await store.withConnection { connection in
        var names: [String] = []
        let rows = try await connection.query("""
            SELECT conname::text FROM pg_constraint WHERE conrelid = to_regclass(\(quoted)) AND contype IN ('p', 'f')
            UNION ALL SELECT indexname::text FROM pg_indexes WHERE tablename = \(typeName) AND indexname LIKE 'mirrorstore%'
            """, logger: PostgresStore.logger)
        for try await name in rows.decode(String.self) { names.append(name) }
        return names.sorted()
    }
    await store.close()
    return names
}

/// A type another app keeps in the same database, at a version of its own.
private struct OtherAppNote: Persistable, Equatable {
    var id = 0
    var text = ""
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "MigratedOtherAppNote" }
}

/// The versions a migration block was called with.
private final class VersionsSeen: @unchecked Sendable {
    // @unchecked: the block runs on the opening task only, one call at a time.
    var versions: [Int] = []
}

extension ServerTests {
@Suite("Migration steps")
struct MigrationStepTests {
    /// A store whose only change is a type's name: the old version is the renamed type's, read
    /// from the metadata, though another app's type in the database has a higher one; the
    /// block is tried with each stored version, highest first, and only the run that renames a
    /// type of the version it was given is carried out.
    @Test func aRenamedOnlyTypeTakesItsOwnStoredVersion() async throws {
        let settings = try #require(serverSettings)
        try await dropTables(["MigratedWriter", "MigratedAuthor", "MigratedOtherAppNote"])
        let one = try await PostgresStore.open(settings, models: [WriterBefore.self], schemaVersion: 1)
        try await one.write { try await $0.add(WriterBefore(id: 1, name: "Ada")) }
        await one.close()
        let other = try await PostgresStore.open(settings, models: [OtherAppNote.self], schemaVersion: 5)
        try await other.write { try await $0.add(OtherAppNote(id: 1, text: "theirs")) }
        await other.close()

        let seen = VersionsSeen()
        let two = try await PostgresStore.open(settings, models: [AuthorAfter.self], schemaVersion: 6) { migration, oldSchemaVersion in
            seen.versions.append(oldSchemaVersion)
            if oldSchemaVersion < 2 { try migration.renameType(from: "MigratedWriter", to: "MigratedAuthor") }
        }
        #expect(try await two.objects(AuthorAfter.self).all() == [AuthorAfter(id: 1, name: "Ada")])
        await two.close()
        // 5 first (the other app's), and 1 last, where the block renamed the writer.
        #expect(seen.versions.first == 5 && seen.versions.last == 1, "\(seen.versions)")
        #expect(seen.versions == seen.versions.sorted(by: >))
        #expect(try await columns(of: "MigratedWriter") == [])
        // The other app's type keeps its rows and its version.
        let theirs = try await PostgresStore.open(settings, models: [OtherAppNote.self], schemaVersion: 5)
        #expect(try await theirs.objects(OtherAppNote.self).all() == [OtherAppNote(id: 1, text: "theirs")])
        await theirs.close()
    }

    /// More rows than one cursor batch, and a column whose kind changes: refused without an
    /// enumeration, converted by one, whose `old` holds the text as stored.
    @Test func anEnumerationConvertsAChangedKindAcrossBatches() async throws {
        let settings = try #require(serverSettings)
        try await dropTables(["MigratedOther"])
        let count = ObjectEnumeration.batchSize * 2 + 3
        let one = try await PostgresStore.open(settings, models: [MigrationOther.self], schemaVersion: 1)
        try await one.write { transaction in
            for id in 1...count { try await transaction.add(MigrationOther(id: id, value: "\(id * 10)")) }
        }
        await one.close()

        await #expect(throws: PostgresStoreError(.migrationFailed(
            typeName: "MigratedOther", reason: "value is stored as text and the model needs bigint; convert it in migration.enumerateObjects(ofType: \"MigratedOther\")"))) {
            _ = try await PostgresStore.open(settings, models: [MigrationOtherAsInt.self], schemaVersion: 2)
        }
        // An enumeration that throws on the last row undoes the rows before it and the DDL.
        await #expect(throws: Refusal()) {
            _ = try await PostgresStore.open(settings, models: [MigrationOtherAsInt.self], schemaVersion: 2) { migration, _ in
                try migration.enumerateObjects(ofType: "MigratedOther") { old, new in
                    let id: Int = try old.value(forProperty: "id")
                    if id == count { throw Refusal() }
                    try new.setValue(Int(try old.value(forProperty: "value", as: String.self)) ?? -1, forProperty: "value")
                }
            }
        }
        let unchanged = try await PostgresStore.open(settings, models: [MigrationOther.self], schemaVersion: 1)
        #expect(try await unchanged.objects(MigrationOther.self).filter(#Predicate { $0.value == "30" }).count() == 1)
        await unchanged.close()

        var seen = 0
        let two = try await PostgresStore.open(settings, models: [MigrationOtherAsInt.self], schemaVersion: 2) { migration, _ in
            #expect(migration.oldSchema(ofType: "MigratedOther")?.property(named: "value")?.kind == .string)
            #expect(migration.newSchema(ofType: "MigratedOther")?.property(named: "value")?.kind == .int)
            try migration.enumerateObjects(ofType: "MigratedOther") { old, new in
                seen += 1
                // The column was made anew with the init() value.
                #expect(new["value"] == .int(0))
                try new.setValue(Int(try old.value(forProperty: "value", as: String.self)) ?? -1, forProperty: "value")
            }
        }
        #expect(seen == count)
        let all = try await two.objects(MigrationOtherAsInt.self).all()
        #expect(all.count == count)
        #expect(all.allSatisfy { $0.value == $0.id * 10 })
        await two.close()
    }

    /// A renamed type keeps its rows, the links to it and their foreign key, and its
    /// constraints and indexes are named after the new type; an enumeration of the linking
    /// type sees the link in `old` as a record holding the target's key.
    @Test func aRenamedTypeKeepsItsLinksAndForeignKeys() async throws {
        let settings = try #require(serverSettings)
        try await dropTables(["MigratedEssay", "MigratedWriter", "MigratedAuthor"])
        let one = try await PostgresStore.open(settings, models: [EssayBefore.self, WriterBefore.self], schemaVersion: 1)
        let ada = WriterBefore(id: 1, name: "Ada")
        try await one.write { transaction in
            try await transaction.add(EssayBefore(id: 1, title: "Notes", writer: ada))
            try await transaction.add(EssayBefore(id: 2, title: "Untitled", writer: nil))
        }
        await one.close()

        // Renaming to a type no model has, or from one the database lacks, is refused by name.
        await #expect(throws: PostgresStoreError(.migrationFailed(typeName: "MigratedNobody", reason: "the database has no such type to rename to MigratedAuthor"))) {
            _ = try await PostgresStore.open(settings, models: [EssayAfter.self, AuthorAfter.self], schemaVersion: 2) { migration, _ in
                try migration.renameType(from: "MigratedNobody", to: "MigratedAuthor")
            }
        }
        #expect(try await columns(of: "MigratedAuthor") == [])

        // A link to an author the database does not have is refused when the migration ends.
        let dangling = await #expect(throws: PostgresStoreError.self) {
            _ = try await PostgresStore.open(settings, models: [EssayAfter.self, AuthorAfter.self], schemaVersion: 2) { migration, _ in
                try migration.renameType(from: "MigratedWriter", to: "MigratedAuthor")
                guard let authorSchema = migration.newSchema(ofType: "MigratedAuthor") else { throw Refusal() }
                try migration.enumerateObjects(ofType: "MigratedEssay") { _, new in
                    let ghost = ManagedObject(objectSchema: authorSchema)
                    try ghost.setValue(99, forProperty: "id")
                    try new.setValue(.object(ghost), forProperty: "writer")
                }
            }
        }
        guard case .migrationFailed("MigratedEssay", let reason) = dangling?.kind else {
            Issue.record("a dangling link threw \(String(describing: dangling))")
            return
        }
        #expect(reason.hasPrefix("a migrated object links to one that does not exist"))
        #expect(try await columns(of: "MigratedAuthor") == [])

        let two = try await PostgresStore.open(settings, models: [EssayAfter.self, AuthorAfter.self], schemaVersion: 2) { migration, _ in
            try migration.renameType(from: "MigratedWriter", to: "MigratedAuthor")
            try migration.enumerateObjects(ofType: "MigratedEssay") { old, new in
                guard case .object(let writer) = old["writer"] else { return }
                try new.setValue(try writer.value(forProperty: "id", as: Int.self), forProperty: "writerID")
            }
        }
        let author = AuthorAfter(id: 1, name: "Ada")
        let essays = try await two.objects(EssayAfter.self).all()
        #expect(essays == [
            EssayAfter(id: 1, title: "Notes", writer: author, writerID: 1),
            EssayAfter(id: 2, title: "Untitled", writer: nil, writerID: 0),
        ])
        #expect(try await two.objects(AuthorAfter.self).filter(#Predicate { $0.name == "Ada" }).count() == 1)
        // The foreign key still sets the link to NULL when its target goes.
        try await two.write { try await $0.delete(AuthorAfter.self, primaryKey: 1) }
        #expect(try await two.object(EssayAfter.self, primaryKey: 1)?.writer == nil)
        await two.close()
        #expect(try await columns(of: "MigratedWriter") == [])
        #expect(try await constraintsAndIndexes(of: "MigratedAuthor") == [
            "MigratedAuthor_pkey", SQL.shortName("mirrorstore_ix", "MigratedAuthor", "name"),
        ].sorted())
        #expect(try await constraintsAndIndexes(of: "MigratedEssay").contains(SQL.shortName("mirrorstore_fk", "MigratedEssay", "writer")))
    }

    /// A type whose schema did not change is enumerated too; a created object is checked
    /// against the stored keys, one created and then deleted is not stored, and a record the
    /// migration neither enumerates nor created cannot be deleted.
    @Test func createdAndDeletedObjectsAreChecked() async throws {
        let settings = try #require(serverSettings)
        try await dropTables(["MigratedOther"])
        let one = try await PostgresStore.open(settings, models: [MigrationOther.self], schemaVersion: 1)
        try await one.write { transaction in
            try await transaction.add(MigrationOther(id: 1, value: "a"))
            try await transaction.add(MigrationOther(id: 2, value: "b"))
        }
        await one.close()

        await #expect(throws: PostgresStoreError(.migrationFailed(typeName: "MigratedOther", reason: "a created object has the primary key 1, which a stored one has"))) {
            _ = try await PostgresStore.open(settings, models: [MigrationOther.self], schemaVersion: 2) { migration, _ in
                try migration.create(ofType: "MigratedOther").setValue(1, forProperty: "id")
            }
        }
        await #expect(throws: PostgresStoreError(.migrationFailed(
            typeName: "MigratedOther", reason: "the object given to delete(_:) is neither being enumerated nor created by the migration"))) {
            _ = try await PostgresStore.open(settings, models: [MigrationOther.self], schemaVersion: 2) { migration, _ in
                try migration.delete(ManagedObject(objectSchema: ObjectSchema(typeName: "MigratedOther", properties: [])))
            }
        }

        let two = try await PostgresStore.open(settings, models: [MigrationOther.self], schemaVersion: 2) { migration, _ in
            try migration.enumerateObjects(ofType: "MigratedOther") { old, new in
                try new.setValue(try old.value(forProperty: "value", as: String.self).uppercased(), forProperty: "value")
            }
            let dropped = try migration.create(ofType: "MigratedOther")
            try dropped.setValue(3, forProperty: "id")
            try migration.delete(dropped)
        }
        #expect(try await two.objects(MigrationOther.self).all() == [MigrationOther(id: 1, value: "A"), MigrationOther(id: 2, value: "B")])
        await two.close()
    }
}
}
