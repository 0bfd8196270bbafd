import MirrorStore
import PostgresNIO

/// Names the value a unique violation is about as the file store names it: read from the
/// objects that share it and spelled by `BackendModels.uniqueValueText`, never taken from the
/// server's message, which spells values its own way (`(hulk@example.com)`, unquoted).
///
/// Unique properties and arrays are constraints deferred to `COMMIT`, whose failure ends the
/// transaction with every value it wrote. So they are checked a step earlier, or the statement
/// that may break one runs, behind a savepoint: on a violation the transaction goes back to it,
/// where the values still are, and reads them.
enum UniqueClash {
    /// Runs `statement` behind a savepoint on `connection`, inside a transaction.
    ///
    /// - Throws: `StoreError.uniqueViolation` naming the shared value when `statement` breaks
    ///   one of `mapping`'s unique constraints; the server's other refusals as they are (a
    ///   `PSQLError`, for the caller to translate as it needs).
    static func checking(
        _ statement: String, on connection: PostgresConnection, mapping: DatabaseMapping, isolation: isolated (any Actor)? = #isolation
    ) async throws {
        // Sent without waiting for its answer, as `BEGIN` is: its failure fails the statement.
        _ = connection.query(PostgresQuery(unsafeSQL: "SAVEPOINT mirrorstore_unique"), logger: PostgresStore.logger) { _ in }
        do {
            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: PostgresStore.logger)
        } catch let error as PSQLError where error.code == .server {
            let state = error.serverInfo?[.sqlState]
            guard state == "23505" || state == "23P01", let constraint = error.serverInfo?[.constraintName],
                  let violated = mapping.uniqueIndexes[constraint], let table = mapping.tables[violated.typeName]
            else { throw error }
            try await Failures.translating(mapping) {
                try await connection.query("ROLLBACK TO SAVEPOINT mirrorstore_unique", logger: PostgresStore.logger)
            }
            let reader = RowReader(connection: connection, mapping: mapping)
            guard let value = try await sharedValue(constraint: constraint, table: table, reader: reader) else {
                throw Failures.translate(error, mapping: mapping)
            }
            throw StoreError(.uniqueViolation(typeName: violated.typeName, property: violated.property, value: value))
        }
    }

    /// The value, or element, that two of `table`'s objects share under the unique `constraint`
    /// as `reader`'s transaction stands, spelled as the file store spells it; `nil` when none
    /// does (a writer that committed it has since let it go). Of several, the first in the
    /// index's order, the first object holding it in key order.
    private static func sharedValue(
        constraint: String, table: TableMapping, reader: RowReader, isolation: isolated (any Actor)? = #isolation
    ) async throws -> String? {
        if let index = table.indexes.first(where: { $0.name == constraint }) {
            let columns = index.property.split(separator: "+").compactMap { table.column(named: String($0)) }
            let expressions = index.expressions.joined(separator: ", ")
            let present = index.expressions.map { "\($0) IS NOT NULL" }.joined(separator: " AND ")
            let condition = """
                (\(expressions)) = (SELECT \(expressions) FROM \(table.table) WHERE \(present) \
                GROUP BY \(expressions) HAVING count(*) > 1 ORDER BY \(expressions) LIMIT 1)
                """
            let found = try await reader.records(table: table, condition: condition, parameters: SQLParameters(), orderBy: table.keyOrder, limit: 1)
            guard let record = found.first else { return nil }
            let values = columns.map { record[propertyAt: $0.position] }
            return columns.count == 1 ? BackendModels.uniqueValueText(values[0]) : BackendModels.uniqueValueText(compound: values)
        }
        guard let elements = table.uniqueElements.first(where: { $0.indexName == constraint }),
              let column = table.column(named: elements.property) else { return nil }
        let positions = try await Failures.translating(reader.mapping) {
            try await reader.connection.query(PostgresQuery(unsafeSQL: elements.firstSharedPositionQuery), logger: PostgresStore.logger).collect()
        }
        guard let position = try positions.first?.decode(Int64.self) else { return nil }
        let found = try await reader.records(table: table, condition: elements.firstSharerCondition, parameters: SQLParameters(), orderBy: table.keyOrder, limit: 1)
        guard let record = found.first, case .list(let list) = record[propertyAt: column.position],
              position >= 1, position <= list.count else { return nil }
        return BackendModels.uniqueValueText(list[Int(position) - 1])
    }
}
