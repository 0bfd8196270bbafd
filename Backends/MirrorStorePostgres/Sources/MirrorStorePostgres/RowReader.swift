import MirrorStore
import PostgresNIO

/// Reads rows into records on one connection, following links: each linked row is read once
/// per reader, so shared targets and cycles come back with the same shape, and the targets of a
/// batch of rows are read together, one query per linked type and depth (`WHERE key = ANY($1)`),
/// not one per row.
final class RowReader {
    let connection: PostgresConnection
    let mapping: DatabaseMapping
    private var loaded: [String: ManagedObject] = [:]
    /// The error a statement of this reader failed with, if any.
    private(set) var statementFailure: (any Error)?
    private var records: [ManagedObject] = []

    /// A link read from a row, set once its target is read.
    private struct PendingLink {
        let record: ManagedObject
        let column: ColumnMapping
        let target: String
        let key: RecordValue
    }

    init(connection: PostgresConnection, mapping: DatabaseMapping) {
        self.connection = connection
        self.mapping = mapping
    }

    deinit {
        // Records mirror the model graph, cycles included: break them once the models are made.
        for record in records { record.releaseGraph() }
    }

    /// The records of `table`'s rows that `condition` selects, in the order `orderBy` gives.
    func records(
        table: TableMapping, condition: String?, parameters: SQLParameters, orderBy: String, limit: Int?,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> [ManagedObject] {
        var sql = "SELECT \(table.selectList) FROM \(table.table)"
        if let condition { sql += " WHERE \(condition)" }
        sql += " ORDER BY \(orderBy)"
        var parameters = parameters
        if let limit { sql += " LIMIT \(parameters.add(Int64(limit)))" }
        var pending: [PendingLink] = []
        let found = try await query(sql, parameters).map { try record(table: table, row: $0, pending: &pending) }
        try await resolve(pending)
        return found
    }

    /// The record of `table` under `key`, or `nil`.
    func record(table: TableMapping, key: RecordValue, isolation: isolated (any Actor)? = #isolation) async throws -> ManagedObject? {
        if let known = loaded[Self.identity(table.typeName, key)] { return known }
        var pending: [PendingLink] = []
        guard let found = try await read(table: table, keys: [key], pending: &pending).first else { return nil }
        try await resolve(pending)
        return found
    }

    /// The model made from `record`.
    func model<Model: Persistable>(_ type: Model.Type, from record: ManagedObject) throws -> Model {
        try Model.modelInstance(managedObject: record)
    }

    /// Reads the rows of `table` under `keys` (not read yet), noting their links in `pending`.
    private func read(
        table: TableMapping, keys: [RecordValue], pending: inout [PendingLink], isolation: isolated (any Actor)? = #isolation
    ) async throws -> [ManagedObject] {
        var parameters = SQLParameters()
        let placeholder = try parameters.addKeys(keys, of: table)
        let rows = try await query("SELECT \(table.selectList) FROM \(table.table) WHERE \(table.primaryKey.quotedName) = ANY(\(placeholder))", parameters)
        return try rows.map { try record(table: table, row: $0, pending: &pending) }
    }

    /// Reads the targets of `pending` links, type by type, then the links those rows hold, until
    /// every link is set.
    private func resolve(_ links: [PendingLink], isolation: isolated (any Actor)? = #isolation) async throws {
        var pending = links
        while !pending.isEmpty {
            var missing: [String: [RecordValue]] = [:]
            var asked = Set<String>()
            for link in pending {
                let identity = Self.identity(link.target, link.key)
                guard loaded[identity] == nil, asked.insert(identity).inserted else { continue }
                missing[link.target, default: []].append(link.key)
            }
            var next: [PendingLink] = []
            for target in missing.keys.sorted() {
                _ = try await read(table: try mapping.table(named: target), keys: missing[target] ?? [], pending: &next)
            }
            for link in pending {
                // A target that is gone reads as nil, as the foreign key's ON DELETE SET NULL makes it.
                let value = loaded[Self.identity(link.target, link.key)].map(RecordValue.object) ?? .null
                try set(value, link.column, of: link.record)
            }
            pending = next
        }
    }

    private func query(_ sql: String, _ parameters: SQLParameters, isolation: isolated (any Actor)? = #isolation) async throws -> [PostgresRow] {
        do {
            return try await Failures.translating(mapping) {
                try await connection.query(PostgresQuery(unsafeSQL: sql, binds: parameters.bindings), logger: PostgresStore.logger).collect()
            }
        } catch {
            statementFailure = statementFailure ?? error
            throw error
        }
    }

    /// The record of one row, known by its key before its links are set, so a cycle back to it
    /// finds it; its links go to `pending`.
    private func record(table: TableMapping, row: PostgresRow, pending: inout [PendingLink]) throws -> ManagedObject {
        let cells = Array(row)
        let coding = ColumnCoding(models: mapping.models, typeName: table.typeName)
        guard let keyIndex = table.columns.firstIndex(where: \.isPrimaryKey), cells.count == table.columns.count else {
            throw PostgresStoreError(.corruptedRow(typeName: table.typeName, key: "?", reason: "the row has \(cells.count) columns, the model \(table.columns.count)"))
        }
        let key = try coding.read(cells[keyIndex], column: table.primaryKey, key: "?")
        let identity = Self.identity(table.typeName, key)
        if let known = loaded[identity] { return known }
        let record = ManagedObject(objectSchema: table.schema)
        loaded[identity] = record
        records.append(record)
        for (column, cell) in zip(table.columns, cells) {
            let value = try coding.read(cell, column: column, key: key.description)
            if case .link(let target, _) = column.storage, !isNull(value) {
                pending.append(PendingLink(record: record, column: column, target: target, key: value))
            } else {
                try set(value, column, of: record)
            }
        }
        return record
    }

    private func set(_ value: RecordValue, _ column: ColumnMapping, of record: ManagedObject) throws {
        do {
            try record.setValue(value, forPropertyAt: column.position)
        } catch {
            let key = record.objectSchema.primaryKey.flatMap { record[$0] }?.description ?? "?"
            throw PostgresStoreError(.corruptedRow(typeName: record.objectSchema.typeName, key: key, reason: "\(error)"))
        }
    }

    private func isNull(_ value: RecordValue) -> Bool {
        if case .null = value { return true }
        return false
    }

    private static func identity(_ typeName: String, _ key: RecordValue) -> String {
        "\(typeName)\u{0}\(key)"
    }
}
