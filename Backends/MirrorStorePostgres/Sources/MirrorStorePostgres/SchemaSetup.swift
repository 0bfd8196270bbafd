import MirrorStore
import PostgresNIO

/// Creates the tables a store needs and checks those that exist, in one transaction under an
/// advisory lock, so that processes opening the same database at once do not race.
///
/// `mirrorstore_metadata` keeps, per type, the description of the schema its table was made
/// from, the schema version of the app that made it, and the layouts of the embedded models its
/// `jsonb` values hold (``EmbeddedLayouts``; `NULL` in a row written before they were kept).
struct SchemaSetup {
    let mapping: DatabaseMapping
    let schemaVersion: Int
    /// The models the store opens with, whose `init()` values fill added columns.
    var models: [any Persistable.Type] = []
    /// Run once when some table was written with a lower schema version.
    var migration: PostgresMigrationBlock?

    static let metadataTable = "mirrorstore_metadata"
    /// The advisory lock key of schema setup: "MSTORE" in ASCII.
    static let lockKey: Int64 = 0x4D53_544F_5245

    func run(on connection: PostgresConnection) async throws {
        let logger = PostgresStore.logger
        try await Failures.translating(mapping) {
            try await connection.query("BEGIN", logger: logger)
        }
        do {
            try await Failures.translating(mapping) {
                var lock = SQLParameters()
                let placeholder = lock.add(Self.lockKey)
                try await connection.query(PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(\(placeholder))", binds: lock.bindings), logger: logger)
                try await setUpMetadataTable(on: connection)
            }
            var stored: [String: (description: String, version: Int64)] = [:]
            // The embedded layouts the rows know, by stored type name.
            var storedLayouts: [String: EmbeddedLayouts] = [:]
            let rows = try await Failures.translating(mapping) {
                try await connection.query(PostgresQuery(unsafeSQL: "SELECT type_name, schema_description, schema_version, embedded_schemas FROM \(SQL.identifier(Self.metadataTable))"), logger: logger).collect()
            }
            for row in rows {
                let (name, description, version, layouts) = try row.decode((String, String, Int64, String?).self)
                stored[name] = (description, version)
                storedLayouts[name] = EmbeddedLayouts(text: layouts)
            }
            let layouts = mapping.tables.mapValues { EmbeddedLayouts(of: $0, models: mapping.models) }
            var differences: [String] = []
            var newer: Int64?
            var created: [TableMapping] = []
            var migrated: [TableMapping] = []
            for table in mapping.tables.values.sorted(by: { $0.typeName < $1.typeName }) {
                if let existing = stored[table.typeName] {
                    if existing.version > Int64(schemaVersion) { newer = max(newer ?? existing.version, existing.version) }
                    // A row that does not know its embedded layouts is taken to hold the models'.
                    let storedLayout = storedLayouts[table.typeName], layout = layouts[table.typeName]
                    let layoutChanged = storedLayout != nil && layout != nil && storedLayout != layout
                    let changed = existing.description != table.schemaDescription || layoutChanged
                    if changed, existing.version < Int64(schemaVersion) {
                        migrated.append(table)
                    } else if existing.description != table.schemaDescription {
                        differences.append("\(table.typeName) is stored as \(existing.description), and the model is \(table.schemaDescription)")
                    } else if layoutChanged, let storedLayout, let layout {
                        let embedded = storedLayout.differences(to: layout, in: table.typeName)
                        differences += embedded.isEmpty ? ["\(table.typeName) embeds \(storedLayout.text), and the model embeds \(layout.text)"] : embedded
                    }
                } else {
                    created.append(table)
                }
            }
            if let newer {
                throw StoreError(.newerSchemaVersion(stored: Int(newer), configured: schemaVersion))
            }
            if !differences.isEmpty {
                throw StoreError(.schemaChanged(version: schemaVersion, differences: differences))
            }
            // Arrays and sets of `Data` an earlier version kept as `jsonb` (the description is
            // the same); a migrated table's are carried over by its migration.
            try await DataArrayConversion.convertStoredColumns(
                of: mapping.tables.values.filter { table in stored[table.typeName] != nil && !migrated.contains { $0 === table } },
                on: connection, mapping: mapping)
            // Versions are kept per type: stores with other models may share the database.
            var renamed: Set<String> = []
            if let oldVersion = mapping.tables.keys.compactMap({ stored[$0]?.version }).min(), oldVersion < Int64(schemaVersion) {
                renamed = try await migrate(migrated, stored: stored, layouts: storedLayouts, from: [Int(oldVersion)], on: connection)
            } else if migration != nil, !created.isEmpty {
                // No model's type is stored at a lower version, and some are new: the block may
                // rename a stored type no model names, written at a lower version, to one of
                // them (a store whose only change is a type's name). That type's version is the
                // old one, but which type is known only once the block has said, and the block
                // decides by the version: it is tried with each such version, highest first,
                // and the first that renames types whose lowest stored version is the one it was
                // given is carried out. Other stores' types in the database are never mistaken
                // for this one's.
                let candidates = Set(stored.filter { mapping.tables[$0.key] == nil && $0.value.version < Int64(schemaVersion) }.map(\.value.version))
                if !candidates.isEmpty {
                    renamed = try await migrate(
                        migrated, stored: stored, layouts: storedLayouts, from: candidates.sorted(by: >).map { Int($0) }, decidedByRename: true, on: connection)
                }
            }
            created.removeAll { renamed.contains($0.typeName) }
            try await Failures.translating(mapping) {
                for table in created {
                    try await connection.query(PostgresQuery(unsafeSQL: table.createStatement), logger: logger)
                    var parameters = SQLParameters()
                    let name = parameters.add(table.typeName)
                    let description = parameters.add(table.schemaDescription)
                    let version = parameters.add(Int64(schemaVersion))
                    let embedded = parameters.add(layouts[table.typeName]?.text ?? "")
                    try await connection.query(PostgresQuery(
                        unsafeSQL: """
                            INSERT INTO \(SQL.identifier(Self.metadataTable)) (type_name, schema_description, schema_version, embedded_schemas)
                            VALUES (\(name), \(description), \(version), \(embedded))
                            """,
                        binds: parameters.bindings), logger: logger)
                }
                // The layouts of the tables carried over, migrated or not: a row written before
                // they were kept learns them now (the models' layouts are taken as the stored
                // ones then), and a migrated one the new ones.
                for table in mapping.tables.values.sorted(by: { $0.typeName < $1.typeName }) where !created.contains(where: { $0 === table }) {
                    guard let text = layouts[table.typeName]?.text else { continue }
                    var parameters = SQLParameters()
                    let embedded = parameters.add(text)
                    let name = parameters.add(table.typeName)
                    try await connection.query(PostgresQuery(
                        unsafeSQL: """
                            UPDATE \(SQL.identifier(Self.metadataTable)) SET embedded_schemas = \(embedded)
                            WHERE type_name = \(name) AND embedded_schemas IS DISTINCT FROM \(embedded)
                            """,
                        binds: parameters.bindings), logger: logger)
                }
                for table in created {
                    for statement in table.foreignKeyStatements(tables: mapping.tables) {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                }
                // Indexes are not part of the schema: those the models no longer ask for are
                // dropped and new ones built, on every open, as the file store does. Unique ones
                // are constraints, checked at COMMIT: a unique index an earlier version made
                // is replaced by one.
                for table in mapping.tables.values.sorted(by: { $0.typeName < $1.typeName }) {
                    var parameters = SQLParameters()
                    let name = parameters.add(table.typeName)
                    let quoted = parameters.add(table.table)
                    let existing = try await connection.query(PostgresQuery(
                        unsafeSQL: """
                            SELECT i.indexname::text, EXISTS (SELECT FROM pg_constraint c WHERE c.conrelid = to_regclass(\(quoted)) AND c.conname = i.indexname)
                            FROM pg_indexes i WHERE i.schemaname = current_schema() AND i.tablename = \(name)
                            AND (i.indexname LIKE 'mirrorstore\\_ix\\_%' OR i.indexname LIKE 'mirrorstore\\_ux\\_%')
                            """,
                        binds: parameters.bindings), logger: logger).collect()
                    let wanted = Dictionary(table.indexes.map { ($0.name, $0.isUnique) }, uniquingKeysWith: { first, _ in first })
                    var constraints: Set<String> = []
                    var kept: Set<String> = []
                    for row in existing {
                        let (index, isConstraint) = try row.decode((String, Bool).self)
                        if wanted[index] == isConstraint {
                            kept.insert(index)
                            if isConstraint { constraints.insert(index) }
                        } else if isConstraint {
                            try await connection.query(PostgresQuery(unsafeSQL: "ALTER TABLE \(table.table) DROP CONSTRAINT \(SQL.identifier(index))"), logger: logger)
                        } else {
                            try await connection.query(PostgresQuery(unsafeSQL: "DROP INDEX \(SQL.identifier(index))"), logger: logger)
                        }
                    }
                    for statement in table.indexStatements(missingFrom: kept) {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    // Checked at once against the rows stored: a violation names their value.
                    for index in table.indexes where index.isUnique && !constraints.contains(index.name) {
                        try await UniqueClash.checking(table.uniqueConstraintStatement(index), on: connection, mapping: mapping)
                    }
                    try await setUpUniqueElements(of: table, isNew: created.contains { $0 === table }, on: connection)
                }
                // What the migration and the new side tables left, before `COMMIT` would take it.
                try await UniqueClash.checking("SET CONSTRAINTS ALL IMMEDIATE", on: connection, mapping: mapping)
                try await connection.query("COMMIT", logger: logger)
            }
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }

    /// Checks the server's encoding, and makes the metadata table, or adds the column an older
    /// version of this backend did not make, only when they are missing: an open of a database
    /// that has them sends no DDL, which would take a lock on the table each time.
    private func setUpMetadataTable(on connection: PostgresConnection, isolation: isolated (any Actor)? = #isolation) async throws {
        let logger = PostgresStore.logger
        var parameters = SQLParameters()
        let table = parameters.add(SQL.identifier(Self.metadataTable))
        let rows = try await connection.query(PostgresQuery(
            unsafeSQL: """
                SELECT current_setting('server_encoding'), current_database(), to_regclass(\(table)) IS NOT NULL,
                EXISTS (SELECT FROM pg_attribute WHERE attrelid = to_regclass(\(table)) AND attname = 'embedded_schemas' AND NOT attisdropped)
                """,
            binds: parameters.bindings), logger: logger).collect()
        guard let row = rows.first else { return }
        let (encoding, database, hasTable, hasLayouts) = try row.decode((String, String, Bool, Bool).self)
        guard encoding == "UTF8" else {
            throw PostgresStoreError(.unsupportedDatabase(database: database, reason: "its encoding is \(encoding), not UTF8"))
        }
        if !hasTable {
            try await connection.query(PostgresQuery(unsafeSQL: """
                CREATE TABLE IF NOT EXISTS \(SQL.identifier(Self.metadataTable)) (
                    type_name text PRIMARY KEY, schema_description text NOT NULL, schema_version bigint NOT NULL, embedded_schemas text)
                """), logger: logger)
        } else if !hasLayouts {
            // Nullable, so that the rows an older version of this backend wrote read as "layout
            // not known".
            try await connection.query(PostgresQuery(unsafeSQL: """
                ALTER TABLE \(SQL.identifier(Self.metadataTable)) ADD COLUMN IF NOT EXISTS embedded_schemas text
                """), logger: logger)
        }
    }

    /// Makes the side tables of `table`'s unique arrays and sets that are missing, filled from its
    /// rows, makes or replaces their triggers where missing or stale, and drops those of
    /// properties no longer unique (see ``UniqueElements``). A new table's side tables are made
    /// again: one left by an earlier table of that name, dropped since, holds its elements still.
    private func setUpUniqueElements(
        of table: TableMapping, isNew: Bool, on connection: PostgresConnection, isolation: isolated (any Actor)? = #isolation
    ) async throws {
        let triggers = try await dropUniqueElements(of: table, keeping: Set(table.uniqueElements.map(\.triggerName)), on: connection)
        for unique in table.uniqueElements {
            var parameters = SQLParameters()
            let name = parameters.add(unique.sideTable)
            let function = parameters.add(SQL.identifier(unique.functionName) + "()")
            let found = try await connection.query(PostgresQuery(
                unsafeSQL: "SELECT to_regclass(\(name)) IS NOT NULL, (SELECT prosrc FROM pg_proc WHERE oid = to_regprocedure(\(function)))",
                binds: parameters.bindings), logger: PostgresStore.logger).collect()
            var (exists, body) = try found.first?.decode((Bool, String?).self) ?? (false, nil)
            if exists && isNew {
                try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE \(unique.sideTable)"), logger: PostgresStore.logger)
                exists = false
            }
            // A trigger whose function names the columns as they are now is kept as it is.
            let current = exists && triggers.contains(unique.triggerName) && body == unique.functionBody
            let statements = (exists ? [] : unique.createStatements) + (current ? [] : unique.triggerStatements)
            for statement in statements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: PostgresStore.logger)
            }
        }
    }

    /// Drops the triggers, functions and side tables of `table`'s unique arrays and sets but
    /// those whose trigger is named in `keeping`; returns the names of those kept that exist.
    @discardableResult
    private func dropUniqueElements(
        of table: TableMapping, keeping: Set<String>, on connection: PostgresConnection, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Set<String> {
        var parameters = SQLParameters()
        let name = parameters.add(table.table)
        let rows = try await Failures.translating(mapping) {
            try await connection.query(PostgresQuery(
                unsafeSQL: "SELECT tgname FROM pg_trigger WHERE tgrelid = to_regclass(\(name)) AND tgname LIKE 'mirrorstore\\_ut\\_%'",
                binds: parameters.bindings), logger: PostgresStore.logger).collect()
        }
        var kept: Set<String> = []
        for row in rows {
            let trigger = try row.decode(String.self)
            guard !keeping.contains(trigger) else {
                kept.insert(trigger)
                continue
            }
            for statement in UniqueElements.dropStatements(trigger: trigger, table: table.table) {
                try await Failures.translating(mapping) {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: PostgresStore.logger)
                }
            }
        }
        return kept
    }

    /// Runs the migration block, carries `tables` (and the tables renamed to a model's type)
    /// over to their models' schemas, runs the block's enumerations and inserts the objects it
    /// created, and records the new schema version, all in the open's transaction. Returns the
    /// model types that took a renamed table.
    ///
    /// The block is run with each of `candidates` in turn until one is taken: the first, or with
    /// `decidedByRename`, the first whose block renames stored types whose lowest version is that
    /// candidate (the others' steps are dropped unrun; when none is taken, nothing migrates).
    private func migrate(
        _ tables: [TableMapping], stored: [String: (description: String, version: Int64)], layouts storedLayouts: [String: EmbeddedLayouts], from candidates: [Int],
        decidedByRename: Bool = false, on connection: PostgresConnection, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Set<String> {
        let logger = PostgresStore.logger
        let storedTables = try await StoredTable.all(descriptions: stored.mapValues(\.description), layouts: storedLayouts, mapping: mapping, on: connection)
        var defaults: [String: ManagedObject] = [:]
        defer { for record in defaults.values { record.releaseGraph() } }
        for model in models {
            defaults[model.persistedTypeName] = try model.init().managedObject()
        }
        var taken: PostgresMigration?
        for oldVersion in candidates {
            let attempt = PostgresMigration(
                oldSchemaVersion: oldVersion, newSchemaVersion: schemaVersion, mapping: mapping, storedTables: storedTables, defaults: defaults)
            do {
                try self.migration?(attempt, oldVersion)
            } catch {
                attempt.releaseBlocks()
                throw error
            }
            let renamedVersions = attempt.typeRenames.values.compactMap { stored[$0]?.version }
            if !decidedByRename || renamedVersions.min() == Int64(oldVersion) {
                taken = attempt
                break
            }
            // The blocks may hold the migration.
            attempt.releaseBlocks()
        }
        guard let migration = taken else { return [] }
        defer { migration.releaseBlocks() }
        // Type renames first: every later step names the new type.
        var existing = Set(stored.keys)
        for (newName, oldName) in migration.typeRenames.sorted(by: { $0.key < $1.key }) {
            try await renameTable(from: oldName, to: newName, columns: storedTables[oldName]?.columns.map(\.name) ?? [], on: connection)
            existing.remove(oldName)
            existing.insert(newName)
        }
        let tables = tables + migration.typeRenames.keys.sorted().compactMap { mapping.tables[$0] }
        // Their unique elements' triggers name columns the migration may rename or drop, and
        // their side tables the old type: the open makes them again once it is done.
        for table in tables { try await dropUniqueElements(of: table, keeping: [], on: connection) }
        let migratedNames = Set(tables.map(\.typeName))
        // Renames on embedded models are carried out in the tables that hold them.
        if let unchanged = migration.renames.keys.sorted().first(where: { !migratedNames.contains($0) && mapping.tables[$0] != nil }) {
            throw PostgresStoreError(.migrationFailed(typeName: unchanged, reason: "its stored schema already matches the model, so it has no property to rename"))
        }
        // A type without a table yet has nothing to delete.
        for typeName in migration.emptiedTypes.sorted() where existing.contains(typeName) {
            guard let table = mapping.tables[typeName] else { continue }
            try await Failures.translating(mapping) {
                try await connection.query(PostgresQuery(unsafeSQL: "DELETE FROM \(table.table)"), logger: logger)
            }
        }
        // The rows as stored, for the enumerations' `old` records, before any table changes.
        var enumerations: [ObjectEnumeration] = []
        for typeName in migration.enumerations.keys.sorted() where existing.contains(typeName) {
            guard let table = mapping.tables[typeName], let storedTable = migration.storedName(of: typeName).flatMap({ storedTables[$0] }) else { continue }
            let storedKey = migration.renames[typeName]?[table.primaryKey.property] ?? table.primaryKey.property
            let enumeration = ObjectEnumeration(table: table, stored: storedTable, mapping: mapping, storedKey: storedKey)
            try await enumeration.copyTable(on: connection)
            enumerations.append(enumeration)
        }
        // The embedded models whose values were brought to a new layout in some table.
        var evolvedEmbedded: Set<String> = []
        for table in tables {
            var tableMigration = TableMigration(table: table, mapping: mapping, renames: migration.renames[table.typeName] ?? [:], defaults: defaults[table.typeName])
            tableMigration.convertsKinds = migration.enumerations[table.typeName] != nil
            tableMigration.storedSchema = migration.storedName(of: table.typeName).flatMap { storedTables[$0]?.schema }
            tableMigration.renamedTypes = migration.renamedTypes
            try await tableMigration.run(on: connection)
            if let storedName = migration.storedName(of: table.typeName) {
                evolvedEmbedded.formUnion(try await evolveEmbedded(
                    table, stored: storedTables[storedName]?.schema, layout: storedLayouts[storedName], renames: migration.renames,
                    renamedTypes: tableMigration.renamedTypes, converted: Set(migration.enumerations.keys), on: connection))
            }
            var parameters = SQLParameters()
            let description = parameters.add(table.schemaDescription)
            let name = parameters.add(table.typeName)
            try await Failures.translating(mapping) {
                try await connection.query(PostgresQuery(
                    unsafeSQL: "UPDATE \(SQL.identifier(Self.metadataTable)) SET schema_description = \(description) WHERE type_name = \(name)",
                    binds: parameters.bindings), logger: logger)
            }
        }
        if let unapplied = migration.renames.keys.sorted().first(where: { mapping.tables[$0] == nil && !evolvedEmbedded.contains($0) }) {
            throw PostgresStoreError(.migrationFailed(
                typeName: unapplied, reason: "no table holds it with a stored layout that differs from the model's, so it has no property to rename"))
        }
        // What the blocks deleted goes once every enumeration has run, as one delete under the
        // models' delete rules (StoreError.deleteDenied refuses the migration), before the
        // created objects join.
        var dropped: [(table: TableMapping, keys: [RecordValue])] = []
        for enumeration in enumerations {
            let keys = try await enumeration.run(migration, on: connection)
            if !keys.isEmpty { dropped.append((enumeration.table, keys)) }
        }
        if !dropped.isEmpty {
            _ = try await MigrationStatements(connection: connection, mapping: mapping).deleteFollowingRules(dropped)
        }
        for object in migration.created {
            // Objects are only created for a model's type, which has a table by now.
            guard let table = mapping.tables[object.objectSchema.typeName] else { continue }
            try await ObjectEnumeration.insert(object, table: table, mapping: mapping, on: connection)
        }
        if !enumerations.isEmpty || !migration.created.isEmpty {
            // The rows written leave deferred foreign-key checks pending, and a table with
            // pending checks takes no index: run them now (a unique violation names its value),
            // then defer the constraints again, so that the side tables of unique arrays made
            // next are checked with the rest before `COMMIT`, where their rows can be read.
            do {
                try await UniqueClash.checking("SET CONSTRAINTS ALL IMMEDIATE", on: connection, mapping: mapping)
                try await connection.query("SET CONSTRAINTS ALL DEFERRED", logger: logger)
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23503" {
                let detail = error.serverInfo?[.detail] ?? error.serverInfo?[.message] ?? "\(error)"
                throw PostgresStoreError(.migrationFailed(
                    typeName: error.serverInfo?[.tableName] ?? "?", reason: "a migrated object links to one that does not exist (\(detail))"))
            } catch let error as PSQLError where error.code == .server {
                throw Failures.translate(error, mapping: mapping)
            }
        }
        var parameters = SQLParameters()
        let version = parameters.add(Int64(schemaVersion))
        let names = parameters.add(mapping.tables.keys.sorted())
        try await Failures.translating(mapping) {
            try await connection.query(PostgresQuery(
                unsafeSQL: "UPDATE \(SQL.identifier(Self.metadataTable)) SET schema_version = \(version) WHERE schema_version < \(version) AND type_name = ANY(\(names))",
                binds: parameters.bindings), logger: logger)
        }
        return Set(migration.typeRenames.keys)
    }

    /// Brings the embedded models in `table`'s `jsonb` columns from the layouts the table was
    /// stored with (`layout`, `nil` when the metadata does not know them: nothing changes) to the
    /// models' (``EmbeddedEvolution``), after its columns were brought to the model. A column
    /// whose own kind changed beyond the automatic rules was made anew and holds new values.
    /// Returns the embedded types that changed.
    private func evolveEmbedded(
        _ table: TableMapping, stored schema: ObjectSchema?, layout: EmbeddedLayouts?, renames: [String: [String: String]],
        renamedTypes: [String: String], converted: Set<String>, on connection: PostgresConnection, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Set<String> {
        guard let schema, let layout,
              let evolution = try EmbeddedEvolution(
                  stored: layout, model: EmbeddedLayouts(of: table, models: mapping.models), renames: renames, renamedTypes: renamedTypes,
                  converted: converted, models: mapping.models)
        else { return [] }
        let tableRenames = renames[table.typeName] ?? [:]
        for column in table.columns {
            guard case .json = column.storage, evolution.reaches(column.kind),
                  let old = schema.property(named: tableRenames[column.property] ?? column.property)?.kind,
                  JSONKindChange(from: old, to: column.kind, renamedTypes: renamedTypes) != nil else { continue }
            try await evolution.rewrite(column, storedKind: old, of: table, mapping: mapping, on: connection)
        }
        return evolution.changedTypes
    }

    /// Renames the table of `oldName` and its metadata to `newName`, and the constraints named
    /// after the type: the primary key and the table's own foreign keys (those of other tables
    /// follow the table, which PostgreSQL knows by identity, not by name). Indexes are named
    /// anew when the open brings them to the models.
    private func renameTable(
        from oldName: String, to newName: String, columns: [String], on connection: PostgresConnection, isolation: isolated (any Actor)? = #isolation
    ) async throws {
        let logger = PostgresStore.logger
        let table = SQL.identifier(newName)
        var parameters = SQLParameters()
        let new = parameters.add(newName)
        let old = parameters.add(oldName)
        var constraintNames = [oldName + "_pkey": newName + "_pkey"]
        for column in columns {
            constraintNames[SQL.shortName("mirrorstore_fk", oldName, column)] = SQL.shortName("mirrorstore_fk", newName, column)
        }
        try await Failures.translating(mapping) {
            try await connection.query(PostgresQuery(unsafeSQL: "ALTER TABLE \(SQL.identifier(oldName)) RENAME TO \(table)"), logger: logger)
            try await connection.query(PostgresQuery(
                unsafeSQL: "UPDATE \(SQL.identifier(Self.metadataTable)) SET type_name = \(new) WHERE type_name = \(old)", binds: parameters.bindings), logger: logger)
            var names = SQLParameters()
            let name = names.add(table)
            let rows = try await connection.query(PostgresQuery(
                unsafeSQL: "SELECT conname::text FROM pg_constraint WHERE conrelid = to_regclass(\(name)) AND contype IN ('p', 'f')", binds: names.bindings),
                logger: logger).collect()
            for row in rows {
                let constraint = try row.decode(String.self)
                guard let renamed = constraintNames[constraint] else { continue }
                try await connection.query(PostgresQuery(
                    unsafeSQL: "ALTER TABLE \(table) RENAME CONSTRAINT \(SQL.identifier(constraint)) TO \(SQL.identifier(renamed))"), logger: logger)
            }
        }
    }
}
