import MirrorStore
@testable import MirrorStorePostgres
import PostgresNIO
import Testing

/// A badge with a unique array, before and after a migration renames its type
/// (`MigratedBadge` to `MigratedPass`) and its property (`codes` to `tags`).
private struct BadgeBefore: Persistable, Equatable {
    var id = 0
    var codes: [String] = []
    static var primaryKey: String? { "id" }
    static var uniqueProperties: [String] { ["codes"] }
    static var persistedTypeName: String { "MigratedBadge" }
}

private struct PassAfter: Persistable, Equatable {
    var id = 0
    var tags: [String] = []
    static var primaryKey: String? { "id" }
    static var uniqueProperties: [String] { ["tags"] }
    static var persistedTypeName: String { "MigratedPass" }
}

/// A type with a unique array whose schema stays as it is while a migration enumerates it.
private struct Ticket: Persistable, Equatable {
    var id = 0
    var seats: [Int] = []
    static var primaryKey: String? { "id" }
    static var uniqueProperties: [String] { ["seats"] }
    static var persistedTypeName: String { "MigratedTicket" }
}

private struct Refusal: Error {}

/// Whether the table `name` exists (side tables are named by a hash, without quotes).
private func tableExists(_ name: String) async throws -> Bool {
    let store = try await PostgresStore.open(try #require(serverSettings), models: [Item.self])
    let quoted = SQL.identifier(name)
    let exists = try await store.withConnection { connection in
        let rows = try await connection.query("SELECT to_regclass(\(quoted)) IS NOT NULL", logger: PostgresStore.logger)
        var exists = false
        for try await value in rows.decode(Bool.self) { exists = value }
        return exists
    }
    await store.close()
    return exists
}

extension ServerTests {
/// Migrations of types with unique arrays and sets, whose side tables and triggers name the
/// type and the column (see `UniqueElements`).
@Suite("Unique elements in migrations")
struct UniqueElementMigrationTests {
    /// The old type's trigger and side table go with the rename; the new ones are made from the
    /// rows as the enumeration left them, and enforce the renamed property.
    @Test func aRenamedTypeKeepsItsUniqueArrayEnforced() async throws {
        let settings = try #require(serverSettings)
        try await dropTables(["MigratedBadge", "MigratedPass"])
        let one = try await PostgresStore.open(settings, models: [BadgeBefore.self], schemaVersion: 1)
        try await one.write { transaction in
            try await transaction.add(BadgeBefore(id: 1, codes: ["a", "b"]))
            try await transaction.add(BadgeBefore(id: 2, codes: ["c"]))
        }
        await one.close()
        #expect(try await tableExists(SQL.shortName("mirrorstore_ue", "MigratedBadge", "codes")))

        // Uppercased codes that collide are refused by the rebuilt side table, and rolled back.
        await #expect(throws: StoreError(.uniqueViolation(typeName: "MigratedPass", property: "tags", value: "\"X\""))) {
            _ = try await PostgresStore.open(settings, models: [PassAfter.self], schemaVersion: 2) { migration, _ in
                try migration.renameType(from: "MigratedBadge", to: "MigratedPass")
                try migration.renameProperty(onType: "MigratedPass", from: "codes", to: "tags")
                try migration.enumerateObjects(ofType: "MigratedPass") { _, new in try new.setValue(["X"], forProperty: "tags") }
            }
        }
        #expect(try await columns(of: "MigratedPass") == [])

        let two = try await PostgresStore.open(settings, models: [PassAfter.self], schemaVersion: 2) { migration, _ in
            try migration.renameType(from: "MigratedBadge", to: "MigratedPass")
            try migration.renameProperty(onType: "MigratedPass", from: "codes", to: "tags")
            try migration.enumerateObjects(ofType: "MigratedPass") { old, new in
                guard case .list(let codes) = old["codes"] else { throw Refusal() }
                let tags = codes.map { code -> RecordValue in
                    guard case .string(let text) = code else { return code }
                    return .string(text.uppercased())
                }
                try new.setValue(.list(List(tags)), forProperty: "tags")
            }
        }
        #expect(try await two.objects(PassAfter.self).all() == [PassAfter(id: 1, tags: ["A", "B"]), PassAfter(id: 2, tags: ["C"])])
        await #expect(throws: StoreError(.uniqueViolation(typeName: "MigratedPass", property: "tags", value: "\"B\""))) {
            try await two.write { try await $0.add(PassAfter(id: 3, tags: ["B"])) }
        }
        // The trigger names the renamed column: a tag freed by an update may be taken.
        try await two.write { transaction in
            try await transaction.add(PassAfter(id: 1, tags: ["A"]))
            try await transaction.add(PassAfter(id: 3, tags: ["B"]))
        }
        await two.close()
        #expect(try await !tableExists(SQL.shortName("mirrorstore_ue", "MigratedBadge", "codes")))
        #expect(try await tableExists(SQL.shortName("mirrorstore_ue", "MigratedPass", "tags")))
    }

    /// An enumeration of a type whose schema did not change writes through its trigger: it may
    /// swap elements between objects, and a duplicate it leaves refuses the open.
    @Test func anEnumeratedTypeKeepsItsUniqueArrayEnforced() async throws {
        let settings = try #require(serverSettings)
        try await dropTables(["MigratedTicket"])
        let one = try await PostgresStore.open(settings, models: [Ticket.self], schemaVersion: 1)
        try await one.write { transaction in
            try await transaction.add(Ticket(id: 1, seats: [1, 2]))
            try await transaction.add(Ticket(id: 2, seats: [3]))
        }
        await one.close()

        await #expect(throws: StoreError(.uniqueViolation(typeName: "MigratedTicket", property: "seats", value: "7"))) {
            _ = try await PostgresStore.open(settings, models: [Ticket.self], schemaVersion: 2) { migration, _ in
                try migration.enumerateObjects(ofType: "MigratedTicket") { _, new in try new.setValue([7], forProperty: "seats") }
            }
        }
        // Ticket 1 takes seat 3 before ticket 2, enumerated after it, gives it up.
        let two = try await PostgresStore.open(settings, models: [Ticket.self], schemaVersion: 2) { migration, _ in
            try migration.enumerateObjects(ofType: "MigratedTicket") { old, new in
                try new.setValue(old["seats"] == [3] ? [1, 2] : [3], forProperty: "seats")
            }
        }
        #expect(try await two.objects(Ticket.self).all() == [Ticket(id: 1, seats: [3]), Ticket(id: 2, seats: [1, 2])])
        await #expect(throws: StoreError(.uniqueViolation(typeName: "MigratedTicket", property: "seats", value: "3"))) {
            try await two.write { try await $0.add(Ticket(id: 3, seats: [3])) }
        }
        await two.close()
    }
}
}
