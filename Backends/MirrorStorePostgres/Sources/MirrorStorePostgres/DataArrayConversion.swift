import MirrorStore
import PostgresNIO

/// Arrays and sets of `Data` live in native `bytea[]` columns; an earlier version of this
/// backend kept them as `jsonb` arrays of base64 text, which is still how `[Data?]` (postgres-nio
/// binds no `NULL` array elements) and `Data` inside other `jsonb` values are kept.
///
/// A table written that way has the same schema description, so no migration runs: opening
/// converts its columns, in the open's transaction under its advisory lock
/// (``convertStoredColumns(of:on:isolation:)``). A migration moving a property between the two
/// (`[Data]` to `[Data?]` and back) converts it the same way (``usingBytea(_:)``,
/// ``usingJSON(_:)``). `ALTER COLUMN … TYPE … USING` takes no subquery, so each direction is a
/// function made for the transaction's session (`pg_temp`), only when a column needs it: an
/// open of an up-to-date database sends no DDL.
enum DataArrayConversion {
    /// The functions ``usingBytea(_:)`` and ``usingJSON(_:)`` call: element by element, in
    /// order, `NULL` for `NULL` (a `nil` element, or a `nil` array).
    static let functionStatements = [
        """
        CREATE OR REPLACE FUNCTION pg_temp.mirrorstore_bytea_array(value jsonb) RETURNS bytea[] LANGUAGE sql IMMUTABLE STRICT AS
        $$ SELECT coalesce(array_agg(decode(e, 'base64') ORDER BY n), '{}') FROM jsonb_array_elements_text(value) WITH ORDINALITY AS t(e, n) $$
        """,
        // `encode` breaks base64 into lines of 76 characters; `Data.base64EncodedString()` does not.
        """
        CREATE OR REPLACE FUNCTION pg_temp.mirrorstore_base64_jsonb(value bytea[]) RETURNS jsonb LANGUAGE sql IMMUTABLE STRICT AS
        $$ SELECT coalesce(jsonb_agg(translate(encode(e, 'base64'), E'\\n', '') ORDER BY n), '[]') FROM unnest(value) WITH ORDINALITY AS t(e, n) $$
        """,
    ]

    /// The `jsonb` array of base64 text in `column` (an SQL expression) as a `bytea[]`.
    static func usingBytea(_ column: String) -> String { "pg_temp.mirrorstore_bytea_array(\(column))" }

    /// The `bytea[]` in `column` as a `jsonb` array of base64 text, as `JSONCoding` spells it.
    static func usingJSON(_ column: String) -> String { "pg_temp.mirrorstore_base64_jsonb(\(column))" }

    /// Whether `kind` is an array or a set of `Data` (optional or not, with optional elements or not).
    static func isDataArray(_ kind: PropertyKind) -> Bool {
        var kind = kind
        if case .optional(let wrapped) = kind { kind = wrapped }
        switch kind {
        case .list(let element), .set(let element): return element == .data || element == .optional(.data)
        default: return false
        }
    }

    /// Converts the columns of `tables` (carried over without a migration) that hold arrays or
    /// sets of `Data` as `jsonb` to `bytea[]`. The side table and trigger of a unique one are
    /// dropped first (the trigger names the column, the side table keeps base64 text): the open
    /// makes them again from the converted rows. Returns the number of columns converted.
    @discardableResult
    static func convertStoredColumns(
        of tables: [TableMapping], on connection: PostgresConnection, mapping: DatabaseMapping, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Int {
        var converted = 0
        for table in tables.sorted(by: { $0.typeName < $1.typeName }) {
            let columns = table.columns.filter { if case .array(.bytea) = $0.storage { true } else { false } }
            guard !columns.isEmpty else { continue }
            var parameters = SQLParameters()
            let name = parameters.add(table.table)
            let rows = try await Failures.translating(mapping) {
                try await connection.query(PostgresQuery(unsafeSQL: """
                    SELECT attname::text FROM pg_attribute
                    WHERE attrelid = to_regclass(\(name)) AND attnum > 0 AND NOT attisdropped AND atttypid = 'jsonb'::regtype
                    """, binds: parameters.bindings), logger: PostgresStore.logger).collect()
            }
            var stored: Set<String> = []
            for row in rows { stored.insert(try row.decode(String.self)) }
            var statements: [String] = []
            for column in columns where stored.contains(column.property) {
                if let unique = table.uniqueElements.first(where: { $0.property == column.property }) {
                    statements += UniqueElements.dropStatements(trigger: unique.triggerName, table: table.table)
                }
                statements.append(
                    "ALTER TABLE \(table.table) ALTER COLUMN \(column.quotedName) TYPE bytea[] USING \(usingBytea(column.quotedName))")
            }
            guard !statements.isEmpty else { continue }
            if converted == 0 { statements = functionStatements + statements }
            converted += statements.count { $0.hasPrefix("ALTER TABLE") }
            try await Failures.translating(mapping) {
                for statement in statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: PostgresStore.logger)
                }
            }
        }
        return converted
    }
}
