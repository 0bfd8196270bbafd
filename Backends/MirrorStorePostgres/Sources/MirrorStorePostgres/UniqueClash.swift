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
    /// The server stops at the first broken constraint it meets, in an order of its own. With
    /// `writtenTypes`, the types with unique values a write block wrote, the violation reported
    /// is the one ``MirrorStore/StoreError/Kind/uniqueViolation(typeName:property:value:)`` says
    /// every store reports: the constraints of those types that come before the broken one in
    /// that order are read too, and the first that two objects break is named. Without, the
    /// broken one is (a statement that adds one constraint, a migration's check).
    ///
    /// - Throws: `StoreError.uniqueViolation` naming the shared value when `statement` breaks
    ///   one of `mapping`'s unique constraints; the server's other refusals as they are (a
    ///   `PSQLError`, for the caller to translate as it needs).
    static func checking(
        _ statement: String, on connection: PostgresConnection, mapping: DatabaseMapping, writtenTypes: Set<String>? = nil,
        isolation: isolated (any Actor)? = #isolation
    ) async throws {
        // Sent without waiting for its answer, as `BEGIN` is: its failure fails the statement.
        _ = connection.query(PostgresQuery(unsafeSQL: "SAVEPOINT mirrorstore_unique"), logger: PostgresStore.logger) { _ in }
        do {
            _ = try await connection.rows(of: PostgresQuery(unsafeSQL: statement))
        } catch let error as PSQLError where error.code == .server {
            let state = error.serverInfo?[.sqlState]
            guard state == "23505" || state == "23P01", let constraint = error.serverInfo?[.constraintName],
                  mapping.uniqueIndexes[constraint] != nil
            else { throw error }
            try await Failures.translating(mapping) {
                try await connection.rows(of: "ROLLBACK TO SAVEPOINT mirrorstore_unique")
            }
            let reader = RowReader(connection: connection, mapping: mapping)
            let candidates = writtenTypes.map { constraints(of: $0, through: constraint, mapping: mapping) } ?? [constraint]
            for candidate in candidates {
                guard let violated = mapping.uniqueIndexes[candidate], let table = mapping.tables[violated.typeName],
                      let value = try await sharedValue(constraint: candidate, table: table, reader: reader) else { continue }
                throw StoreError(.uniqueViolation(typeName: violated.typeName, property: violated.property, value: value))
            }
            throw Failures.translate(error, mapping: mapping)
        }
    }

    /// The unique constraints of `types`' tables in the order a violation is reported in, up to
    /// and including `constraint`: by type name, then by property name (a compound index's
    /// `team+number` as one name).
    static func constraints(of types: Set<String>, through constraint: String, mapping: DatabaseMapping) -> [String] {
        let ordered = types.sorted().flatMap { typeName in
            mapping.uniqueIndexes.filter { $0.value.typeName == typeName }.sorted { $0.value.property < $1.value.property }.map(\.key)
        }
        guard let end = ordered.firstIndex(of: constraint) else { return ordered + [constraint] }
        return Array(ordered[...end])
    }

    /// The value, or element, that two of `table`'s objects share under the unique `constraint`
    /// as `reader`'s transaction stands, spelled as the file store spells it; `nil` when none
    /// does (a writer that committed it has since let it go). Of several, the first in the
    /// index's order (the order sorted results use), the first object holding it in key order.
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
            try await reader.connection.rows(of: PostgresQuery(unsafeSQL: elements.firstSharedPositionQuery))
        }
        guard let position = try positions.first?.decode(Int64.self) else { return nil }
        let found = try await reader.records(table: table, condition: elements.firstSharerCondition, parameters: SQLParameters(), orderBy: table.keyOrder, limit: 1)
        guard let record = found.first, case .list(let list) = record[propertyAt: column.position],
              position >= 1, position <= list.count else { return nil }
        return BackendModels.uniqueValueText(list[Int(position) - 1])
    }
}
