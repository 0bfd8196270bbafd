import MirrorStore
import PostgresNIO

/// Carries one type's table over to its model's schema, inside the open's transaction.
struct TableMigration {
    let table: TableMapping
    let mapping: DatabaseMapping
    /// New property name to stored column name.
    let renames: [String: String]
    /// The record of the model's `init()`, or `nil` when the type's Swift type is not known.
    let defaults: ManagedObject?
    /// Whether the migration enumerates the type, which may then convert a column whose kind
    /// changed: the column is made anew, and the enumeration's `old` keeps the stored values.
    var convertsKinds = false
    /// The schema the table was stored with (kinds as the metadata says them), for the automatic
    /// integer conversions (`IntegerConversion`); `nil` when not known.
    var storedSchema: ObjectSchema?
    /// Stored type names to the names the migration gives them, for links and embedded models
    /// inside `jsonb` (an embedded model's values do not spell its name: they stay as stored).
    var renamedTypes: [String: String] = [:]

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
        let conversions = try await integerConversions(stored: stored, on: connection)
        let unconvertedJSON = try await jsonKindChanges(stored: stored, on: connection)
        let arrayMoves = try await arrayStorageChanges(stored: stored, on: connection)
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
                // Signed to unsigned or back, or an array moving between a native array and
                // jsonb: every value was found to fit.
                let using = arrayMoves[column.property]
                    ?? (conversions.contains(column.property) ? "\(column.quotedName)::\(column.sqlType)" : nil)
                if existing.type != column.sqlType, let using {
                    statements.append(PostgresQuery(
                        unsafeSQL: "ALTER TABLE \(table.table) ALTER COLUMN \(column.quotedName) TYPE \(column.sqlType) USING \(using)"))
                }
                if (existing.type == column.sqlType && unconvertedJSON[column.property] == nil) || using != nil {
                    if existing.notNull && column.isNullable {
                        statements.append(PostgresQuery(unsafeSQL: "ALTER TABLE \(table.table) ALTER COLUMN \(column.quotedName) DROP NOT NULL"))
                    } else if !existing.notNull && !column.isNullable {
                        statements += try fill(column, onlyNull: true)
                        statements.append(PostgresQuery(unsafeSQL: "ALTER TABLE \(table.table) ALTER COLUMN \(column.quotedName) SET NOT NULL"))
                    }
                    continue
                }
                guard convertsKinds, !column.isPrimaryKey else {
                    let (was, needs) = unconvertedJSON[column.property].map { ($0.description, column.kind.description) } ?? (existing.type, column.sqlType)
                    let enumerate = "convert it in migration.enumerateObjects(ofType: \"\(table.typeName)\")"
                    if let old = unconvertedJSON[column.property], let renamed = BackendModels.renamedModel(
                        from: old, to: column.kind, isModel: { mapping.models.type(named: $0) != nil || renamedTypes[$0] != nil }) {
                        let advice = BackendModels.renameTypeAdvice(from: renamed.stored, to: renamed.model)
                        throw failed("\(column.property) is stored as \(was) and the model needs \(needs), which no automatic rule converts: \(advice); otherwise \(enumerate)")
                    }
                    throw failed("\(column.property) is stored as \(was) and the model needs \(needs); \(enumerate)")
                }
                // Made anew below, with the model's init() value, for the enumeration to set.
                statements.append(PostgresQuery(unsafeSQL: "ALTER TABLE \(table.table) DROP COLUMN \(column.quotedName)"))
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

    /// The properties whose integer kind changes by the automatic rules, once every stored
    /// value was found to fit the new kind, before any statement changes the table.
    ///
    /// - Throws: ``PostgresStoreError`` (`.migrationFailed`) naming the first value that does not fit.
    private func integerConversions(
        stored: [String: (type: String, notNull: Bool)], on connection: PostgresConnection, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Set<String> {
        guard let storedSchema else { return [] }
        var converted: Set<String> = []
        let storedKey = SQL.identifier(renames[table.primaryKey.property] ?? table.primaryKey.property)
        for column in table.columns where !column.isPrimaryKey {
            let storedName = renames[column.property] ?? column.property
            // A jsonb array becoming a native one is `arrayStorageChanges`'s.
            guard let existing = stored[storedName], existing.type != "jsonb", let old = storedSchema.property(named: storedName)?.kind,
                  let conversion = IntegerConversion(from: old, to: column) else { continue }
            let sql = conversion.firstMisfit(table: table.table, key: storedKey, value: SQL.identifier(storedName))
            let rows = try await Failures.translating(mapping) {
                try await connection.query(PostgresQuery(unsafeSQL: sql), logger: PostgresStore.logger).collect()
            }
            if let row = rows.first {
                let (key, value) = try row.decode((String, String).self)
                throw failed("\(column.property) holds \(value) in the object with key \(key), which \(column.kind) cannot hold; convert it in migration.enumerateObjects(ofType: \"\(table.typeName)\")")
            }
            converted.insert(column.property)
        }
        return converted
    }

    /// The `jsonb` properties whose kind, as the metadata describes it, changed in a way no
    /// automatic rule makes, with their stored kind: made anew for an enumeration to convert, or
    /// refused. Those the rules change (`JSONKindChange`) keep their `jsonb`, whose every value
    /// is checked here to fit the new kind.
    ///
    /// - Throws: ``PostgresStoreError`` (`.migrationFailed`) naming the first value that does not fit.
    private func jsonKindChanges(
        stored: [String: (type: String, notNull: Bool)], on connection: PostgresConnection, isolation: isolated (any Actor)? = #isolation
    ) async throws -> [String: PropertyKind] {
        guard let storedSchema else { return [:] }
        var unconverted: [String: PropertyKind] = [:]
        let storedKey = SQL.identifier(renames[table.primaryKey.property] ?? table.primaryKey.property)
        for column in table.columns where !column.isPrimaryKey {
            guard case .json = column.storage else { continue }
            let storedName = renames[column.property] ?? column.property
            guard stored[storedName]?.type == column.sqlType, let old = storedSchema.property(named: storedName)?.kind else { continue }
            let (was, needs) = (Self.unwrapped(old), Self.unwrapped(column.kind))
            // The same kind, or one the metadata does not say (the column then reads as its text).
            if was == needs || was == .string { continue }
            guard let change = JSONKindChange(from: old, to: column.kind, renamedTypes: renamedTypes) else {
                unconverted[column.property] = old
                continue
            }
            if let (key, value) = try await firstMisfit(of: change, column: SQL.identifier(storedName), key: storedKey, property: column.property, on: connection) {
                throw failed("\(column.property) holds \(value) in the object with key \(key), which \(column.kind) cannot hold; convert it in migration.enumerateObjects(ofType: \"\(table.typeName)\")")
            }
        }
        return unconverted
    }

    /// The arrays of integers that move between a native array and `jsonb` by the automatic
    /// rules (`[Int]` to `[UInt]` or to `[Int?]`, and back), each with the `USING` expression
    /// of its `ALTER COLUMN … TYPE`: `to_jsonb(column::text[])` spells each integer as the `jsonb`
    /// encoding does (its decimal text), and `translate` turns that `jsonb` text into an array
    /// literal. Arrays of `Data` move alike (`[Data]` to `[Data?]` and back), through
    /// ``DataArrayConversion``'s functions. Every stored value is checked to fit the new kind first.
    ///
    /// - Throws: ``PostgresStoreError`` (`.migrationFailed`) naming the first value that does not fit.
    private func arrayStorageChanges(
        stored: [String: (type: String, notNull: Bool)], on connection: PostgresConnection, isolation: isolated (any Actor)? = #isolation
    ) async throws -> [String: String] {
        guard let storedSchema else { return [:] }
        var moves: [String: String] = [:]
        var madeFunctions = false
        let storedKey = SQL.identifier(renames[table.primaryKey.property] ?? table.primaryKey.property)
        for column in table.columns where !column.isPrimaryKey {
            let storedName = renames[column.property] ?? column.property
            guard let existing = stored[storedName], existing.type != column.sqlType, let old = storedSchema.property(named: storedName)?.kind,
                  (Self.isIntegerArray(old) && Self.isIntegerArray(column.kind))
                    || (DataArrayConversion.isDataArray(old) && DataArrayConversion.isDataArray(column.kind)),
                  let change = JSONKindChange(from: old, to: column.kind, renamedTypes: [:]) else { continue }
            let storedColumn = SQL.identifier(storedName)
            let isData = DataArrayConversion.isDataArray(old)
            if isData && !madeFunctions {
                try await Failures.translating(mapping) {
                    for statement in DataArrayConversion.functionStatements {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: PostgresStore.logger)
                    }
                }
                madeFunctions = true
            }
            let using: String
            let asJSON: String
            switch column.storage {
            case .array where existing.type == "jsonb":
                using = isData ? DataArrayConversion.usingBytea(column.quotedName) : "translate(\(column.quotedName)::text, '[]\"', '{}')::\(column.sqlType)"
                asJSON = storedColumn
            case .json where existing.type.hasSuffix("[]"):
                using = isData ? DataArrayConversion.usingJSON(column.quotedName) : "to_jsonb(\(column.quotedName)::text[])"
                asJSON = isData ? DataArrayConversion.usingJSON(storedColumn) : "to_jsonb(\(storedColumn)::text[])"
            default:
                continue
            }
            if let (key, value) = try await firstMisfit(of: change, column: asJSON, key: storedKey, property: column.property, on: connection) {
                throw failed("\(column.property) holds \(value) in the object with key \(key), which \(column.kind) cannot hold; convert it in migration.enumerateObjects(ofType: \"\(table.typeName)\")")
            }
            moves[column.property] = using
        }
        return moves
    }

    /// Whether `kind` is an array or a set of integers (optional or not, with optional elements or not).
    private static func isIntegerArray(_ kind: PropertyKind) -> Bool {
        switch unwrapped(kind) {
        case .list(let element), .set(let element): IntegerConversion.range(of: element) != nil
        default: false
        }
    }

    /// The key and the text of the first value of `column` (an SQL expression of `jsonb`, over
    /// the table as stored) of `property` that `change`'s new kind cannot hold, in key order.
    private func firstMisfit(
        of change: JSONKindChange, column: String, key: String, property: String, on connection: PostgresConnection,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> (key: String, value: String)? {
        var found: (key: String, value: String)?
        try await JSONColumnWalk(table: table, key: key, value: column, property: property).forEachBatch(mapping: mapping, on: connection) { batch in
            for (key, json) in batch {
                if let misfit = change.firstMisfit(in: json) {
                    found = (key, misfit)
                    return false
                }
            }
            return true
        }
        return found
    }

    private static func unwrapped(_ kind: PropertyKind) -> PropertyKind {
        if case .optional(let wrapped) = kind { return unwrapped(wrapped) }
        return kind
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
