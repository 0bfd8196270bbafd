import MirrorStore
import PostgresNIO

/// What a migration block can do when a ``PostgresStore`` opens with a raised `schemaVersion`,
/// in the shape of MirrorStore's `configuration.migration` block:
///
/// ```swift
/// let store = try await PostgresStore.open(settings, models: [Person.self], schemaVersion: 2) { migration, oldSchemaVersion in
///     if oldSchemaVersion < 2 {
///         try migration.renameProperty(onType: "Person", from: "name", to: "fullName")
///     }
/// }
/// ```
///
/// The block can rename properties and delete every object of a type; without any code, a
/// property added to a model becomes a column filled with the value the
/// model's `init()` gives it, and a removed one is dropped. The whole migration — the block's
/// renames, every `ALTER TABLE`, the metadata — is one SQL transaction (PostgreSQL's DDL is
/// transactional): a thrown error, from the block or the server, leaves the database as it was.
///
/// Types are named as they are stored (`persistedTypeName`).
public final class PostgresMigration {
    /// The schema version the tables were written with (the lowest, if they differ).
    public let oldSchemaVersion: Int
    /// The schema version the store is being opened with.
    public let newSchemaVersion: Int

    let mapping: DatabaseMapping
    /// Per type name: new property name to the stored column it takes its values from.
    private(set) var renames: [String: [String: String]] = [:]
    /// Type names whose stored objects are deleted before their tables change.
    private(set) var emptiedTypes: Set<String> = []

    init(oldSchemaVersion: Int, newSchemaVersion: Int, mapping: DatabaseMapping) {
        self.oldSchemaVersion = oldSchemaVersion
        self.newSchemaVersion = newSchemaVersion
        self.mapping = mapping
    }

    /// Gives the model's property `newName` the stored values of `oldName`
    /// (`ALTER TABLE … RENAME COLUMN`).
    ///
    /// - Throws: ``PostgresStoreError`` (`.migrationFailed`) when `typeName` is not one of the
    ///   store's types, the model has no property `newName`, or it is renamed twice.
    public func renameProperty(onType typeName: String, from oldName: String, to newName: String) throws {
        guard let table = mapping.tables[typeName] else {
            throw PostgresStoreError(.migrationFailed(typeName: typeName, reason: "it is not one of the store's types"))
        }
        guard table.columns.contains(where: { $0.property == newName }) else {
            throw PostgresStoreError(.migrationFailed(typeName: typeName, reason: "the model has no property \(newName) to rename \(oldName) to"))
        }
        guard oldName != newName, renames[typeName]?[newName] == nil, renames[typeName]?.values.contains(oldName) != true else {
            throw PostgresStoreError(.migrationFailed(typeName: typeName, reason: "\(oldName) → \(newName) repeats or undoes a rename"))
        }
        renames[typeName, default: [:]][newName] = oldName
    }

    /// Deletes every stored object of `typeName` (`DELETE FROM`), before its table changes.
    ///
    /// ```swift
    /// try migration.deleteAllObjects(ofType: "Session")
    /// ```
    ///
    /// - Throws: ``PostgresStoreError`` (`.migrationFailed`) when `typeName` is not one of the
    ///   store's types.
    public func deleteAllObjects(ofType typeName: String) throws {
        guard mapping.tables[typeName] != nil else {
            throw PostgresStoreError(.migrationFailed(typeName: typeName, reason: "it is not one of the store's types"))
        }
        emptiedTypes.insert(typeName)
    }
}

/// The block a ``PostgresStore`` runs when it opens tables written with a lower schema version:
/// the ``PostgresMigration`` and the old version.
public typealias PostgresMigrationBlock = (PostgresMigration, Int) throws -> Void

/// Carries one type's table over to its model's schema, inside the open's transaction.
struct TableMigration {
    let table: TableMapping
    let mapping: DatabaseMapping
    /// New property name to stored column name.
    let renames: [String: String]
    /// The record of the model's `init()`, or `nil` when the type's Swift type is not known.
    let defaults: ManagedObject?

    private func failed(_ reason: String) -> PostgresStoreError {
        PostgresStoreError(.migrationFailed(typeName: table.typeName, reason: reason))
    }

    func run(on connection: PostgresConnection, isolation: isolated (any Actor)? = #isolation) async throws {
        let logger = PostgresStore.logger
        var parameters = SQLParameters()
        let name = parameters.add(table.table)
        let rows = try await Failures.translating(mapping) {
            try await connection.query(PostgresQuery(unsafeSQL: """
                SELECT attname::text, format_type(atttypid, atttypmod), attnotnull FROM pg_attribute
                WHERE attrelid = to_regclass(\(name)) AND attnum > 0 AND NOT attisdropped ORDER BY attnum
                """, binds: parameters.bindings), logger: logger).collect()
        }
        var stored: [String: (type: String, notNull: Bool)] = [:]
        for row in rows {
            let (column, type, notNull) = try row.decode((String, String, Bool).self)
            stored[column] = (type, notNull)
        }
        var statements: [PostgresQuery] = []
        for (newName, oldName) in renames.sorted(by: { $0.key < $1.key }) {
            guard let column = stored.removeValue(forKey: oldName) else { throw failed("its table has no column \(oldName) to rename to \(newName)") }
            guard stored[newName] == nil else { throw failed("its table has a column \(newName) already, so \(oldName) cannot take that name") }
            stored[newName] = column
            statements.append(PostgresQuery(unsafeSQL: "ALTER TABLE \(table.table) RENAME COLUMN \(SQL.identifier(oldName)) TO \(SQL.identifier(newName))"))
        }
        var added: Set<String> = []
        for column in table.columns {
            if let existing = stored.removeValue(forKey: column.property) {
                guard existing.type == column.sqlType else {
                    throw failed("\(column.property) is stored as \(existing.type) and the model needs \(column.sqlType); changes of kind are not migrated yet")
                }
                if existing.notNull && column.isNullable {
                    statements.append(PostgresQuery(unsafeSQL: "ALTER TABLE \(table.table) ALTER COLUMN \(column.quotedName) DROP NOT NULL"))
                } else if !existing.notNull && !column.isNullable {
                    statements += try fill(column, onlyNull: true)
                    statements.append(PostgresQuery(unsafeSQL: "ALTER TABLE \(table.table) ALTER COLUMN \(column.quotedName) SET NOT NULL"))
                }
                continue
            }
            let collation = column.sqlType == "text" ? " COLLATE \"C\"" : ""
            statements.append(PostgresQuery(unsafeSQL: "ALTER TABLE \(table.table) ADD COLUMN \(column.quotedName) \(column.sqlType)\(collation)"))
            statements += try fill(column, onlyNull: false)
            if !column.isNullable {
                statements.append(PostgresQuery(unsafeSQL: "ALTER TABLE \(table.table) ALTER COLUMN \(column.quotedName) SET NOT NULL"))
            }
            added.insert(column.quotedName)
        }
        for column in stored.keys.sorted() {
            statements.append(PostgresQuery(unsafeSQL: "ALTER TABLE \(table.table) DROP COLUMN \(SQL.identifier(column))"))
        }
        // Foreign keys of added links.
        for statement in table.foreignKeyStatements(tables: mapping.tables) where added.contains(where: { statement.contains("FOREIGN KEY (\($0))") }) {
            statements.append(PostgresQuery(unsafeSQL: statement))
        }
        try await Failures.translating(mapping) {
            for statement in statements { try await connection.query(statement, logger: logger) }
        }
    }

    /// Sets `column` to the model's `init()` value in every row (or in those holding `NULL`), a
    /// bound parameter; nothing for a link (links start as `nil`) or a `nil` value.
    private func fill(_ column: ColumnMapping, onlyNull: Bool) throws -> [PostgresQuery] {
        if case .link = column.storage { return [] }
        guard let defaults else {
            if column.isNullable { return [] }
            throw failed("\(column.property) is new and not optional, and the store does not know the model's init() value: list \(table.typeName) among the models the store opens with")
        }
        let value = defaults[propertyAt: column.position]
        if value == .null { return [] }
        var bindings = PostgresBindings()
        try ColumnCoding(models: mapping.models, typeName: table.typeName).bind(value, column: column, into: &bindings)
        let filter = onlyNull ? " WHERE \(column.quotedName) IS NULL" : ""
        return [PostgresQuery(unsafeSQL: "UPDATE \(table.table) SET \(column.quotedName) = \(column.placeholder(1))\(filter)", binds: bindings)]
    }
}
