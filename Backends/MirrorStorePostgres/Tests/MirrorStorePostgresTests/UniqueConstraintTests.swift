import MirrorStore
@testable import MirrorStorePostgres
import PostgresNIO
import Testing

/// The kind of the constraint `name` on `typeName`'s table (`x` for exclusion), or `nil`.
private func constraintKind(_ name: String, of typeName: String, in store: PostgresStore) async throws -> String? {
    let quoted = SQL.identifier(typeName)
    return try await store.withConnection { connection in
        let rows = try await connection.query(
            "SELECT contype::text FROM pg_constraint WHERE conrelid = to_regclass(\(quoted)) AND conname = \(name)", logger: PostgresStore.logger)
        var kind: String?
        for try await value in rows.decode(String.self) { kind = value }
        return kind
    }
}

extension ServerTests {
/// Unique properties are constraints checked at `COMMIT` (see
/// `TableMapping.uniqueConstraintStatement`); the behaviour suite's `uniqueSwaps` checks the
/// swaps themselves.
@Suite("Unique constraints")
struct UniqueConstraintTests {
    /// A unique index an earlier version made is replaced by the constraint at open, whose
    /// index still serves an equality on the property.
    @Test func aUniqueIndexOfAnEarlierVersionIsReplacedAtOpen() async throws {
        let settings = try #require(serverSettings)
        let index = SQL.shortName("mirrorstore_ux", "Reindexed", "name")
        // Other tests leave duplicate names, which the constraint refuses.
        try await dropTables(["Reindexed"])
        let earlier = try await PostgresStore.open(settings, models: [ReindexedUnique.self])
        try await earlier.write { transaction in
            try await transaction.add(ReindexedUnique(id: 1, name: "a"))
            try await transaction.add(ReindexedUnique(id: 2, name: "b"))
        }
        #expect(try await constraintKind(index, of: "Reindexed", in: earlier) == "x")
        try await earlier.withConnection { connection in
            try await connection.query(PostgresQuery(unsafeSQL: "ALTER TABLE \"Reindexed\" DROP CONSTRAINT \(SQL.identifier(index))"), logger: PostgresStore.logger)
            try await connection.query(PostgresQuery(
                unsafeSQL: "CREATE UNIQUE INDEX \(SQL.identifier(index)) ON \"Reindexed\" ((normalize(\"name\", NFC) COLLATE \"C\"))"), logger: PostgresStore.logger)
        }
        #expect(try await constraintKind(index, of: "Reindexed", in: earlier) == nil)
        await earlier.close()

        let store = try await PostgresStore.open(settings, models: [ReindexedUnique.self])
        #expect(try await constraintKind(index, of: "Reindexed", in: store) == "x")
        try await store.write { transaction in
            try await transaction.add(ReindexedUnique(id: 1, name: "b"))
            try await transaction.add(ReindexedUnique(id: 2, name: "a"))
        }
        #expect(try await store.objects(ReindexedUnique.self).all() == [ReindexedUnique(id: 1, name: "b"), ReindexedUnique(id: 2, name: "a")])
        await #expect(throws: StoreError(.uniqueViolation(typeName: "Reindexed", property: "name", value: "\"a\""))) {
            try await store.write { try await $0.add(ReindexedUnique(id: 3, name: "a")) }
        }
        let plan = try await store.withConnection { connection in
            try await connection.query("SET enable_seqscan = off", logger: PostgresStore.logger)
            let rows = try await connection.query(
                "EXPLAIN SELECT id FROM \"Reindexed\" WHERE normalize(\"name\", NFC) COLLATE \"C\" = 'a'", logger: PostgresStore.logger)
            var lines: [String] = []
            for try await line in rows.decode(String.self) { lines.append(line) }
            try await connection.query("RESET enable_seqscan", logger: PostgresStore.logger)
            return lines.joined(separator: "\n")
        }
        #expect(plan.contains(index), "\(plan)")
        await store.close()
    }

    /// A unique compound index is a constraint too: two accounts may swap their places in a block.
    @Test func aCompoundUniqueIndexIsCheckedAtCommit() async throws {
        let store = try await emptyStore(models: [Account.self], clearing: [Account.self])
        func account(_ identifier: String, team: Int, number: Int) -> Account {
            let account = Account()
            account.identifier = identifier
            account.email = identifier + "@example.com"
            account.team = team
            account.number = number
            return account
        }
        try await store.write { transaction in
            try await transaction.add(account("a", team: 1, number: 1))
            try await transaction.add(account("b", team: 1, number: 2))
        }
        try await store.write { transaction in
            try await transaction.add(account("a", team: 1, number: 2))
            try await transaction.add(account("b", team: 1, number: 1))
        }
        #expect(try await store.objects(Account.self).all().map(\.number) == [2, 1])
        await #expect(throws: StoreError(.uniqueViolation(typeName: "Account", property: "team+number", value: "(1, 1)"))) {
            try await store.write { try await $0.add(account("c", team: 1, number: 1)) }
        }
        await store.close()
    }
}
}
