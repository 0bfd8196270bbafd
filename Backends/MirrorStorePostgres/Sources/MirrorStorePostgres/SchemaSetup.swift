import MirrorStore
import PostgresNIO

/// Creates the tables a store needs and checks those that exist, in one transaction under an
/// advisory lock, so that processes opening the same database at once do not race.
///
/// `mirrorstore_metadata` keeps, per type, the description of the schema its table was made
/// from and the schema version of the app that made it.
struct SchemaSetup {
    let mapping: DatabaseMapping
    let schemaVersion: Int

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
                try await connection.query(PostgresQuery(unsafeSQL: """
                    CREATE TABLE IF NOT EXISTS \(SQL.identifier(Self.metadataTable)) (
                        type_name text PRIMARY KEY, schema_description text NOT NULL, schema_version bigint NOT NULL)
                    """), logger: logger)
            }
            let encoding = try await Failures.translating(mapping) {
                try await connection.query("SELECT current_setting('server_encoding'), current_database()", logger: logger).collect()
            }
            if let row = encoding.first {
                let (name, database) = try row.decode((String, String).self)
                guard name == "UTF8" else {
                    throw PostgresStoreError(.unsupportedDatabase(database: database, reason: "its encoding is \(name), not UTF8"))
                }
            }
            var stored: [String: (description: String, version: Int64)] = [:]
            let rows = try await Failures.translating(mapping) {
                try await connection.query(PostgresQuery(unsafeSQL: "SELECT type_name, schema_description, schema_version FROM \(SQL.identifier(Self.metadataTable))"), logger: logger).collect()
            }
            for row in rows {
                let (name, description, version) = try row.decode((String, String, Int64).self)
                stored[name] = (description, version)
            }
            var differences: [String] = []
            var newer: Int64?
            var created: [TableMapping] = []
            for table in mapping.tables.values.sorted(by: { $0.typeName < $1.typeName }) {
                if let existing = stored[table.typeName] {
                    if existing.version > Int64(schemaVersion) { newer = max(newer ?? existing.version, existing.version) }
                    if existing.description != table.schemaDescription {
                        differences.append("\(table.typeName) is stored as \(existing.description), and the model is \(table.schemaDescription)")
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
            try await Failures.translating(mapping) {
                for table in created {
                    try await connection.query(PostgresQuery(unsafeSQL: table.createStatement), logger: logger)
                    var parameters = SQLParameters()
                    let name = parameters.add(table.typeName)
                    let description = parameters.add(table.schemaDescription)
                    let version = parameters.add(Int64(schemaVersion))
                    try await connection.query(PostgresQuery(
                        unsafeSQL: "INSERT INTO \(SQL.identifier(Self.metadataTable)) (type_name, schema_description, schema_version) VALUES (\(name), \(description), \(version))",
                        binds: parameters.bindings), logger: logger)
                }
                for table in created {
                    for statement in table.foreignKeyStatements(tables: mapping.tables) {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                }
                // Indexes are not part of the schema: those the models no longer ask for are
                // dropped and new ones built, on every open, as the file store does.
                for table in mapping.tables.values.sorted(by: { $0.typeName < $1.typeName }) {
                    var parameters = SQLParameters()
                    let name = parameters.add(table.typeName)
                    let existing = try await connection.query(PostgresQuery(
                        unsafeSQL: "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = \(name) AND (indexname LIKE 'mirrorstore\\_ix\\_%' OR indexname LIKE 'mirrorstore\\_ux\\_%')",
                        binds: parameters.bindings), logger: logger).collect()
                    let wanted = Set(table.indexes.map(\.name))
                    for row in existing {
                        let index = try row.decode(String.self)
                        if !wanted.contains(index) {
                            try await connection.query(PostgresQuery(unsafeSQL: "DROP INDEX \(SQL.identifier(index))"), logger: logger)
                        }
                    }
                    for statement in table.indexStatements {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                }
                try await connection.query("COMMIT", logger: logger)
            }
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }
}
