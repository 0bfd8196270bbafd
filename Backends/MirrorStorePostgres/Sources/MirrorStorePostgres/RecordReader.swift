import MirrorStore
import PostgresNIO

/// Reads rows into records on one connection, following links: each linked row is read once
/// per reader, so shared targets and cycles come back with the same shape.
final class RecordReader {
    let connection: PostgresConnection
    let mapping: DatabaseMapping
    private var loaded: [String: ManagedObject] = [:]
    private var records: [ManagedObject] = []

    init(connection: PostgresConnection, mapping: DatabaseMapping) {
        self.connection = connection
        self.mapping = mapping
    }

    deinit {
        // Records mirror the model graph, cycles included: break them once the models are made.
        for record in records { record.releaseGraph() }
    }

    /// The records of `table`'s rows that `condition` selects, in the order `orderBy` gives.
    func records(table: TableMapping, condition: String?, parameters: SQLParameters, orderBy: String, limit: Int?, isolation: isolated (any Actor)? = #isolation) async throws -> [ManagedObject] {
        var sql = "SELECT \(table.selectList) FROM \(table.table)"
        if let condition { sql += " WHERE \(condition)" }
        sql += " ORDER BY \(orderBy)"
        var parameters = parameters
        if let limit { sql += " LIMIT \(parameters.add(Int64(limit)))" }
        let rows = try await query(sql, parameters)
        var found: [ManagedObject] = []
        for row in rows { found.append(try await record(table: table, row: row)) }
        return found
    }

    /// The record of `table` under `key`, or `nil`.
    func record(table: TableMapping, key: RecordValue, isolation: isolated (any Actor)? = #isolation) async throws -> ManagedObject? {
        let identity = Self.identity(table.typeName, key)
        if let known = loaded[identity] { return known }
        var parameters = SQLParameters()
        guard case .scalar(let keyType) = table.primaryKey.storage else { return nil }
        let placeholder = try parameters.add(key, type: keyType)
        let rows = try await query("SELECT \(table.selectList) FROM \(table.table) WHERE \(table.primaryKey.quotedName) = \(placeholder)", parameters)
        guard let row = rows.first else { return nil }
        return try await record(table: table, row: row)
    }

    /// The model made from `record`.
    func model<Model: Persistable>(_ type: Model.Type, from record: ManagedObject) throws -> Model {
        try Model.modelInstance(managedObject: record)
    }

    private func query(_ sql: String, _ parameters: SQLParameters, isolation: isolated (any Actor)? = #isolation) async throws -> [PostgresRow] {
        try await Failures.translating(mapping) {
            try await connection.query(PostgresQuery(unsafeSQL: sql, binds: parameters.bindings), logger: PostgresStore.logger).collect()
        }
    }

    private func record(table: TableMapping, row: PostgresRow, isolation: isolated (any Actor)? = #isolation) async throws -> ManagedObject {
        let cells = Array(row)
        let coding = ColumnCoding(models: mapping.models, typeName: table.typeName)
        guard let keyIndex = table.columns.firstIndex(where: \.isPrimaryKey), cells.count == table.columns.count else {
            throw PostgresStoreError(.corruptedRow(typeName: table.typeName, key: "?", reason: "the row has \(cells.count) columns, the model \(table.columns.count)"))
        }
        let key = try coding.read(cells[keyIndex], column: table.primaryKey, key: "?")
        let identity = Self.identity(table.typeName, key)
        if let known = loaded[identity] { return known }
        let record = ManagedObject(objectSchema: table.schema)
        // Known before its links are followed, so a cycle back to it finds it.
        loaded[identity] = record
        records.append(record)
        for (column, cell) in zip(table.columns, cells) {
            var value = try coding.read(cell, column: column, key: key.description)
            if case .link(let target, _) = column.storage, !isNull(value) {
                let targetTable = try mapping.table(named: target)
                value = try await self.record(table: targetTable, key: value).map(RecordValue.object) ?? .null
            }
            do {
                try record.setValue(value, forPropertyAt: column.position)
            } catch {
                throw PostgresStoreError(.corruptedRow(typeName: table.typeName, key: key.description, reason: "\(error)"))
            }
        }
        return record
    }

    private func isNull(_ value: RecordValue) -> Bool {
        if case .null = value { return true }
        return false
    }

    private static func identity(_ typeName: String, _ key: RecordValue) -> String {
        "\(typeName)\u{0}\(key)"
    }
}
