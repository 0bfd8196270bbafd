import MirrorStore
import PostgresNIO

/// Runs a migration's enumerations of one type inside the open's transaction: a copy of the
/// table as stored is kept before the `ALTER TABLE`s, then the copy and the altered table are
/// read together through a cursor, a batch at a time, and each row's changes are written back.
struct ObjectEnumeration {
    let table: TableMapping
    let stored: StoredTable
    let mapping: DatabaseMapping
    /// The stored column the model's primary key takes its values from.
    let storedKey: String

    /// Rows per `FETCH`: what the process holds of the table at once.
    static let batchSize = 256
    private static let cursor = "mirrorstore_enumeration"

    /// The copy's name: a temporary table, dropped at the latest when the transaction ends.
    private var copy: String { SQL.identifier(SQL.shortName("mirrorstore_old", table.typeName, "")) }

    /// Keeps the table's rows as they are now, for the `old` records; before it is altered.
    func copyTable(on connection: PostgresConnection, isolation: isolated (any Actor)? = #isolation) async throws {
        try await Failures.translating(mapping) {
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE TEMPORARY TABLE \(copy) ON COMMIT DROP AS SELECT * FROM \(table.table)"), logger: PostgresStore.logger)
        }
    }

    /// Runs the migration's blocks for `table.typeName` on every row, in primary-key order,
    /// updating the rows whose `new` record they changed.
    ///
    /// - Returns: The keys of the rows the blocks deleted, which stay until every enumeration
    ///   has run: the migration then deletes them at once under the delete rules, as the file
    ///   store does, their cascades following the links as the blocks left them.
    func run(
        _ migration: PostgresMigration, on connection: PostgresConnection, isolation: isolated (any Actor)? = #isolation
    ) async throws -> [RecordValue] {
        let logger = PostgresStore.logger
        let bodies = migration.enumerations[table.typeName] ?? []
        let key = table.primaryKey
        let select = stored.columns.map(\.expression) + table.columns.map { $0.selectExpression(table: "n") }
        try await Failures.translating(mapping) {
            // A cursor reads the rows as they were when it was declared: the writes below do not
            // reach it.
            try await connection.query(PostgresQuery(unsafeSQL: """
                DECLARE \(Self.cursor) NO SCROLL CURSOR FOR SELECT \(select.joined(separator: ", "))
                FROM \(copy) o JOIN \(table.table) n ON n.\(key.quotedName) = o.\(SQL.identifier(storedKey)) ORDER BY n.\(key.quotedName)
                """), logger: logger)
        }
        let coding = ColumnCoding(models: mapping.models, typeName: table.typeName)
        var dropped: [RecordValue] = []
        while true {
            let rows = try await Failures.translating(mapping) {
                try await connection.query(PostgresQuery(unsafeSQL: "FETCH FORWARD \(Self.batchSize) FROM \(Self.cursor)"), logger: logger).collect()
            }
            if rows.isEmpty { break }
            for row in rows {
                let cells = PostgresRandomAccessRow(row)
                let offset = stored.columns.count
                var keyValue = RecordValue.null
                func keyText() -> String { PrimaryKeys.messageText(keyValue) }
                let new = ManagedObject(objectSchema: table.schema)
                for column in table.columns {
                    let value = try KeyRecords.replacingKeys(
                        in: try coding.read(cells[offset + column.position], column: column, key: keyText), column: column,
                        schemaOf: { mapping.tables[$0]?.schema })
                    if column.isPrimaryKey { keyValue = value }
                    // Properties start as `nil`.
                    if value != .null { try new.setValue(value, forPropertyAt: column.position) }
                }
                let old = try stored.record(cells, from: 0, mapping: mapping, key: keyText)
                let before = table.columns.map { new[propertyAt: $0.position] }
                migration.current = new
                migration.currentDeleted = false
                defer { migration.current = nil }
                for body in bodies where !migration.currentDeleted { try body(old, new) }
                if migration.currentDeleted {
                    // Deleted under the key it was stored with, which links to it hold.
                    try new.setValue(keyValue, forPropertyAt: key.position)
                    dropped.append(keyValue)
                }
                try await update(new, before: before, key: keyValue, coding: coding, on: connection)
            }
        }
        try await Failures.translating(mapping) {
            try await connection.query(PostgresQuery(unsafeSQL: "CLOSE \(Self.cursor)"), logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE \(copy)"), logger: logger)
        }
        return dropped
    }

    /// Writes the properties of `new` that differ from `before`, its values as read.
    private func update(
        _ new: ManagedObject, before: [RecordValue], key keyValue: RecordValue, coding: ColumnCoding, on connection: PostgresConnection,
        isolation: isolated (any Actor)? = #isolation
    ) async throws {
        var bindings = PostgresBindings()
        var assignments: [String] = []
        for (index, column) in table.columns.enumerated() where new[propertyAt: column.position] != before[index] {
            try coding.bind(new[propertyAt: column.position], column: column, into: &bindings)
            assignments.append("\(column.quotedName) = \(column.placeholder(assignments.count + 1))")
        }
        guard !assignments.isEmpty else { return }
        let key = table.primaryKey
        try coding.bind(keyValue, column: key, into: &bindings)
        try await Failures.translating(mapping) {
            try await connection.query(PostgresQuery(
                unsafeSQL: "UPDATE \(table.table) SET \(assignments.joined(separator: ", ")) WHERE \(key.quotedName) = \(key.placeholder(assignments.count + 1))",
                binds: bindings), logger: PostgresStore.logger)
        }
    }

    /// Inserts an object a migration created.
    ///
    /// - Throws: ``PostgresStoreError`` (`.migrationFailed`) when a stored object has its key.
    static func insert(_ object: ManagedObject, table: TableMapping, mapping: DatabaseMapping, on connection: PostgresConnection,
                       isolation: isolated (any Actor)? = #isolation) async throws {
        let coding = ColumnCoding(models: mapping.models, typeName: table.typeName)
        var bindings = PostgresBindings()
        for column in table.columns { try coding.bind(object[propertyAt: column.position], column: column, into: &bindings) }
        let names = table.columns.map(\.quotedName).joined(separator: ", ")
        let placeholders = table.columns.enumerated().map { $1.placeholder($0 + 1) }.joined(separator: ", ")
        do {
            try await Failures.translating(mapping) {
                try await connection.query(PostgresQuery(unsafeSQL: "INSERT INTO \(table.table) (\(names)) VALUES (\(placeholders))", binds: bindings), logger: PostgresStore.logger)
            }
        } catch let error as PostgresStoreError {
            guard case .server("23505", _) = error.kind else { throw error }
            let key = PrimaryKeys.messageText(object[propertyAt: table.primaryKey.position])
            throw PostgresStoreError(.migrationFailed(typeName: table.typeName, reason: "a created object has the primary key \(key), which a stored one has"))
        }
    }
}
