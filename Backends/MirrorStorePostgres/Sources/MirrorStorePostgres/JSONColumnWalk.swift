import MirrorStore
import PostgresNIO

/// The non-`NULL` `jsonb` values of one column of a table, walked in key order through a cursor,
/// a batch at a time, so a migration that reads every value holds one batch, never the table.
/// Used inside the open's transaction, where the cursor lives: by `TableMigration` to find the
/// first value a kind change cannot hold, by `EmbeddedEvolution` to rewrite the values.
struct JSONColumnWalk {
    let table: TableMapping
    /// The key column as the table stores it now (quoted), which may still carry a name the
    /// migration renames.
    let key: String
    /// The values: an SQL expression of `jsonb` over the table as it stands.
    let value: String
    /// The property the values belong to, named when one does not read as JSON.
    let property: String

    /// The cursor's name; one walk runs at a time.
    private static let cursor = "mirrorstore_json_walk"

    /// Calls `body` with each batch of keys (as text, as errors name them) and values, in key
    /// order, until it returns `false` or the values run out.
    ///
    /// - Throws: ``PostgresStoreError`` (`.corruptedRow`) for a value that does not read as JSON;
    ///   what `body` throws.
    func forEachBatch(
        mapping: DatabaseMapping, on connection: PostgresConnection, isolation: isolated (any Actor)? = #isolation,
        _ body: ([(key: String, json: JSONValue)]) async throws -> Bool
    ) async throws {
        let logger = PostgresStore.logger
        // Qualified, so that `ORDER BY` means the column, not the text the select list makes of
        // it; a text key byte by byte, as every key order here.
        let collation = table.primaryKey.sqlType == "text" ? " COLLATE \"C\"" : ""
        try await Failures.translating(mapping) {
            try await connection.query(PostgresQuery(unsafeSQL: """
                DECLARE \(Self.cursor) NO SCROLL CURSOR FOR SELECT \(key)::text, (\(value))::text FROM \(table.table) \
                WHERE (\(value)) IS NOT NULL ORDER BY \(table.table).\(key)\(collation)
                """), logger: logger)
        }
        while true {
            let rows = try await Failures.translating(mapping) {
                try await connection.query(PostgresQuery(unsafeSQL: "FETCH FORWARD \(ObjectEnumeration.batchSize) FROM \(Self.cursor)"), logger: logger).collect()
            }
            if rows.isEmpty { break }
            var batch: [(key: String, json: JSONValue)] = []
            batch.reserveCapacity(rows.count)
            for row in rows {
                let (keyText, text) = try row.decode((String, String).self)
                do {
                    batch.append((keyText, try JSONCoding.json(from: text)))
                } catch {
                    throw PostgresStoreError(.corruptedRow(typeName: table.typeName, key: keyText, reason: "\(property): its jsonb does not read as JSON"))
                }
            }
            guard try await body(batch) else { break }
        }
        try await Failures.translating(mapping) {
            try await connection.query(PostgresQuery(unsafeSQL: "CLOSE \(Self.cursor)"), logger: logger)
        }
    }
}
