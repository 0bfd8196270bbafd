import Foundation
import MirrorStore
import MirrorStoreBehaviorSuite
@testable import MirrorStorePostgres
import PostgresNIO
import Testing

extension ServerTests {
@Suite("DDL on open")
struct OpenDDLTests {
    private static var models: [any Persistable.Type] { [BehaviorSeat.self, BehaviorBadge.self, BehaviorHero.self] }

    /// Runs `body` with a database of its own, dropped afterwards, whose event trigger notes
    /// every DDL command's tag in `ddl_seen` (event triggers see one database only).
    private func withOwnDatabase(_ body: (PostgresSettings) async throws -> Void) async throws {
        let settings = try #require(serverSettings)
        let name = "mirrorstore_ddl_\(UInt32.random(in: 0...UInt32.max))"
        let admin = try await PostgresStore.open(settings, models: [BehaviorAccount.self])
        try await admin.withConnection { connection in
            _ = try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(SQL.identifier(name))"), logger: PostgresStore.logger)
        }
        var own = settings
        own.database = name
        do {
            try await body(own)
        } catch {
            try await dropDatabase(name, through: admin)
            await admin.close()
            throw error
        }
        try await dropDatabase(name, through: admin)
        await admin.close()
    }

    private func dropDatabase(_ name: String, through admin: PostgresStore) async throws {
        try await admin.withConnection { connection in
            _ = try await connection.query(PostgresQuery(unsafeSQL: "DROP DATABASE \(SQL.identifier(name)) WITH (FORCE)"), logger: PostgresStore.logger)
        }
    }

    /// Starts noting DDL in `store`'s database.
    private func noteDDL(in store: PostgresStore) async throws {
        try await store.withConnection { connection in
            for statement in [
                "CREATE TABLE ddl_seen (number serial PRIMARY KEY, tag text NOT NULL)",
                "CREATE FUNCTION note_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO ddl_seen (tag) VALUES (tg_tag); END $$",
                "CREATE EVENT TRIGGER note_ddl ON ddl_command_start EXECUTE FUNCTION note_ddl()",
            ] {
                _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: PostgresStore.logger)
            }
        }
    }

    /// The tags of the DDL commands noted since the last call, in order.
    private func takeDDL(in store: PostgresStore) async throws -> [String] {
        try await store.withConnection { connection in
            var tags: [String] = []
            let rows = try await connection.query("SELECT tag FROM ddl_seen ORDER BY number", logger: PostgresStore.logger)
            for try await tag in rows.decode(String.self) { tags.append(tag) }
            _ = try await connection.query("DELETE FROM ddl_seen", logger: PostgresStore.logger)
            return tags
        }
    }

    /// Whether the metadata table has its layouts column, and how many rows know their layouts.
    private func layoutRows(in store: PostgresStore) async throws -> Int? {
        try await store.withConnection { connection in
            let column = try await connection.query(
                "SELECT count(*) FROM information_schema.columns WHERE table_name = 'mirrorstore_metadata' AND column_name = 'embedded_schemas'",
                logger: PostgresStore.logger).collect()
            guard try column.first?.decode(Int64.self) == 1 else { return nil }
            let rows = try await connection.query("SELECT count(*) FROM mirrorstore_metadata WHERE embedded_schemas IS NOT NULL", logger: PostgresStore.logger).collect()
            return try rows.first.map { Int(try $0.decode(Int64.self)) }
        }
    }

    /// An open of a database whose tables, indexes, constraints and triggers are as the models
    /// ask sends no DDL (which would lock the tables), while the first open makes them all.
    @Test func anOpenOfAnUpToDateDatabaseSendsNoDDL() async throws {
        try await withOwnDatabase { settings in
            let first = try await PostgresStore.open(settings, models: Self.models)
            try await first.write { transaction in
                try await transaction.add(BehaviorSeat(id: 1, row: "A", number: 1, code: 1, price: 1))
                try await transaction.add(BehaviorBadge(id: 1, codes: [1, 2], names: ["a"]))
            }
            try await noteDDL(in: first)
            await first.close()

            let again = try await PostgresStore.open(settings, models: Self.models)
            #expect(try await takeDDL(in: again) == [])
            #expect(try await again.objects(BehaviorSeat.self).all().map(\.id) == [1])
            await #expect(throws: StoreError.self) {
                try await again.write { try await $0.add(BehaviorBadge(id: 2, codes: [2])) }
            }
            await again.close()
        }
    }

    /// A metadata table an older version of this backend made, without the layouts of the
    /// embedded models, gets the column on the next open, and its rows learn their layouts.
    @Test func anOldLayoutMetadataTableIsUpgraded() async throws {
        try await withOwnDatabase { settings in
            let first = try await PostgresStore.open(settings, models: Self.models)
            try await first.write { transaction in
                try await transaction.add(BehaviorSeat(id: 1, row: "A", number: 1, code: 1, price: 1))
            }
            try await first.withConnection { connection in
                _ = try await connection.query("ALTER TABLE mirrorstore_metadata DROP COLUMN embedded_schemas", logger: PostgresStore.logger)
            }
            #expect(try await layoutRows(in: first) == nil)
            try await noteDDL(in: first)
            await first.close()

            let upgraded = try await PostgresStore.open(settings, models: Self.models)
            #expect(try await takeDDL(in: upgraded) == ["ALTER TABLE"])
            let tables = try await upgraded.withConnection { connection in
                let rows = try await connection.query("SELECT count(*) FROM mirrorstore_metadata", logger: PostgresStore.logger).collect()
                return try rows.first.map { Int(try $0.decode(Int64.self)) }
            }
            #expect(try await layoutRows(in: upgraded) == tables)
            #expect(try await upgraded.objects(BehaviorSeat.self).all().map(\.id) == [1])
            await upgraded.close()

            let again = try await PostgresStore.open(settings, models: Self.models)
            #expect(try await takeDDL(in: again) == [])
            await again.close()
        }
    }
}
}
