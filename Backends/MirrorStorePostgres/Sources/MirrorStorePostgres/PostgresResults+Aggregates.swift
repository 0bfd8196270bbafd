import Foundation
import MirrorStore
import PostgresNIO

/// An aggregate of one property of ``PostgresResults``, named for ``PostgresResults/plan(of:_:)``.
public enum PostgresAggregate: String, Sendable {
    /// ``PostgresResults/values(_:isolation:)``.
    case values
    /// ``PostgresResults/distinct(_:isolation:)``.
    case distinct
    /// `min(_:)`.
    case min
    /// `max(_:)`.
    case max
    /// `sum(_:)`.
    case sum
    /// `average(_:)`.
    case average
}

/// Where an aggregate of ``PostgresResults`` runs: the statement SQL runs, and what Swift then
/// computes on what it returns.
///
/// ```swift
/// let plan = try store.objects(Hero.self).filter(#Predicate { $0.age > 40 }).plan(of: .sum, \.age)
/// plan.sql         // SELECT coalesce(sum("Hero"."age"), 0)::text, … WHERE ("Hero"."age" > $1)
/// plan.swiftPart   // nil: SQL adds
/// ```
public struct PostgresAggregatePlan: Sendable, Equatable, CustomStringConvertible {
    /// The statement's shape, parameters as `$n`.
    public let sql: String
    /// What Swift computes on the rows, or `nil` when SQL gives the answer.
    public let swiftPart: String?

    /// One line per part.
    public var description: String {
        "SQL: \(sql)\nSwift: \(swiftPart ?? "nothing to compute")"
    }
}

/// Aggregates and projections of one stored property, with the answers MirrorStore's `Results`
/// gives (`min`, `max`, `sum`, `average`, `distinct`, `values`; see `ValueAggregation`): NaN and
/// `nil` skipped by `min` and `max`, the first of equal values in the results' order, an integer
/// sum that leaves its type's range at any step in that order a `QueryError`, `nil` for no results.
///
/// When SQL decides the whole query (every filter exact, no Swift sort), they run in SQL: `min`
/// and `max` of integers as `min()`/`max()`, of other ordered values as `ORDER BY` the value and
/// then the results' order, `LIMIT 1` (strings by their NFC form, `COLLATE "C"`: Swift's `<`;
/// NaN left out); sums and averages of integers as `sum()` and `count()`, with the sums of the
/// positive and of the negative values: when both fit the property's type no partial sum can
/// leave it, and otherwise Swift adds the values in the results' order, as `Results` does.
/// Floating-point and decimal sums, `distinct` and `values` read the column alone (`SELECT key,
/// column … ORDER BY …`), and Swift adds in the results' order, since SQL's sums round in an
/// order of their own. With a limit (`prefix(_:)`) the column is read and Swift aggregates; when
/// Swift decides part of the query, the models are read as ``all(isolation:)`` reads them.
/// ``plan(of:_:)`` says which.
extension PostgresResults {
    /// The values of `property` in the results, in their order: `all().map(property)`, reading
    /// the column alone when SQL decides the query.
    ///
    /// - Throws: `QueryError` (`.unknownProperty`, `.ignoredProperty`) for a key path that is no
    ///   stored property; ``PostgresStoreError`` as ``all(isolation:)``.
    public func values<Value: RecordPrimitive>(
        _ property: KeyPath<Model, Value>, isolation: isolated (any Actor)? = #isolation
    ) async throws -> [Value] {
        let column = try aggregatedColumn(property)
        return try await columnValues(property, column: column, route: try route(.values, column: column)).value
    }

    /// The values of `property` in the results, each once (as `Set` counts them), in the order
    /// of their first result.
    public func distinct<Value: Hashable & RecordPrimitive>(
        _ property: KeyPath<Model, Value>, isolation: isolated (any Actor)? = #isolation
    ) async throws -> [Value] {
        let column = try aggregatedColumn(property)
        return ValueAggregation.distinct(try await columnValues(property, column: column, route: try route(.distinct, column: column)).value)
    }

    /// The least value of `property` in the results (the first of equal ones, NaN skipped), or
    /// `nil` when there are none.
    public func min<Value: Comparable & RecordPrimitive>(
        _ property: KeyPath<Model, Value>, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Value? {
        try await extreme(property, least: true, { $0 }).value
    }

    /// The least non-`nil` value of `property` in the results, or `nil` when there is none.
    public func min<Value: Comparable & RecordPrimitive>(
        _ property: KeyPath<Model, Value?>, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Value? {
        try await extreme(property, least: true, { $0 }).value
    }

    /// The greatest value of `property` in the results (the first of equal ones, NaN skipped),
    /// or `nil` when there are none.
    public func max<Value: Comparable & RecordPrimitive>(
        _ property: KeyPath<Model, Value>, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Value? {
        try await extreme(property, least: false, { $0 }).value
    }

    /// The greatest non-`nil` value of `property` in the results, or `nil` when there is none.
    public func max<Value: Comparable & RecordPrimitive>(
        _ property: KeyPath<Model, Value?>, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Value? {
        try await extreme(property, least: false, { $0 }).value
    }

    /// The sum of `property` over the results, added in their order (`zero` for none).
    ///
    /// - Throws: `QueryError` (`.aggregateOverflow`) when a partial sum of integers leaves
    ///   `Value`'s range; what ``values(_:isolation:)`` throws.
    public func sum<Value: AdditiveArithmetic & RecordPrimitive>(
        _ property: KeyPath<Model, Value>, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Value {
        try await total(property, .sum, { $0 }).value.sum
    }

    /// The sum of the non-`nil` values of `property` over the results.
    public func sum<Value: AdditiveArithmetic & RecordPrimitive>(
        _ property: KeyPath<Model, Value?>, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Value {
        try await total(property, .sum, { $0 }).value.sum
    }

    /// The mean of the integer `property` over the results (their sum as `Double` over their
    /// number), or `nil` when there are none.
    public func average<Value: BinaryInteger & RecordPrimitive>(
        _ property: KeyPath<Model, Value>, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Double? {
        let (sum, count) = try await total(property, .average, { $0 }).value
        return count == 0 ? nil : Double(sum) / Double(count)
    }

    /// The mean of the non-`nil` values of the integer `property`, or `nil` when there is none.
    public func average<Value: BinaryInteger & RecordPrimitive>(
        _ property: KeyPath<Model, Value?>, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Double? {
        let (sum, count) = try await total(property, .average, { $0 }).value
        return count == 0 ? nil : Double(sum) / Double(count)
    }

    /// The mean of the floating-point `property` over the results, summed in their order, or
    /// `nil` when there are none.
    public func average<Value: BinaryFloatingPoint & RecordPrimitive>(
        _ property: KeyPath<Model, Value>, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Double? {
        let (sum, count) = try await total(property, .average, { $0 }).value
        return count == 0 ? nil : Double(sum) / Double(count)
    }

    /// The mean of the non-`nil` values of the floating-point `property`, or `nil` when there is none.
    public func average<Value: BinaryFloatingPoint & RecordPrimitive>(
        _ property: KeyPath<Model, Value?>, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Double? {
        let (sum, count) = try await total(property, .average, { $0 }).value
        return count == 0 ? nil : Double(sum) / Double(count)
    }

    /// Where `aggregate` of `property` runs.
    ///
    /// - Throws: `QueryError` for a key path that is no stored property.
    public func plan<Value>(of aggregate: PostgresAggregate, _ property: KeyPath<Model, Value>) throws -> PostgresAggregatePlan {
        let column = try aggregatedColumn(property)
        switch try route(aggregate, column: column) {
        case .answer(let sql, _):
            return PostgresAggregatePlan(sql: sql, swiftPart: nil)
        case .integerTotal(let sql, _):
            return PostgresAggregatePlan(
                sql: sql, swiftPart: "nothing, unless the positive or the negative values add up past the property's type: then the column is read and added in the results' order")
        case .column(let sql, _):
            return PostgresAggregatePlan(sql: sql, swiftPart: "\(aggregate.rawValue) of the values read, in the results' order")
        case .models:
            let query = plan
            let decided = query.swiftPart.map { "the predicate where SQL is not exact (\($0)), " } ?? ""
            let sorted = query.swiftSort.map { "the sort (\($0)), " } ?? ""
            return PostgresAggregatePlan(sql: query.sql, swiftPart: "\(decided)\(sorted)then \(aggregate.rawValue) of \(column.property) on the models read")
        }
    }

    // MARK: Implementation

    /// How an aggregate runs.
    enum AggregateRoute {
        /// The statement gives the answer in one cell of the column's type, `NULL` for none.
        case answer(String, SQLParameters)
        /// The statement gives the sum, the sum of the positive and of the negative values (as
        /// text) and the count, of an integer column.
        case integerTotal(String, SQLParameters)
        /// The statement reads the key and the column of the results, in their order.
        case column(String, SQLParameters)
        /// The models are read and decided as ``all(isolation:)`` does.
        case models
    }

    /// The column `property` names, as `Results` checks it.
    private func aggregatedColumn<Value>(_ property: KeyPath<Model, Value>) throws -> ColumnMapping {
        let name = try store.mapping.models.storedPropertyName(of: property)
        guard let column = table.column(named: name) else {
            throw QueryError(.unknownProperty(typeName: table.typeName, property: name))
        }
        return column
    }

    private func route(_ aggregate: PostgresAggregate, column: ColumnMapping) throws -> AggregateRoute {
        guard filters.allSatisfy(\.isExact), descriptors.isEmpty, case .scalar(let type) = column.storage else { return .models }
        let (condition, parameters) = try condition()
        let value = table.qualified(column)
        func statement(_ select: String, _ extra: [String] = []) -> String {
            let conditions = (condition.map { [$0] } ?? []) + extra
            return "SELECT \(select) FROM \(table.table)" + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
        }
        if limit == nil {
            switch (aggregate, type) {
            case (.min, .bigint), (.max, .bigint), (.min, .unsigned), (.max, .unsigned):
                // Equal integers are the same value: which one comes first does not matter. The
                // second cell is a stored value the property's type cannot hold (damage), which
                // then fails the read as it fails a read of the models.
                let cast = type.isTextEncoded ? "::text" : ""
                let misfit = IntegerConversion.range(of: column.kind).map {
                    "\(aggregate.rawValue)(\(value)) FILTER (WHERE \(value) < \($0.low) OR \(value) > \($0.high))\(cast)"
                } ?? "NULL"
                return .answer(statement("\(aggregate.rawValue)(\(value))\(cast), \(misfit)"), parameters)
            case (.min, .real), (.max, .real), (.min, .double), (.max, .double), (.min, .date), (.max, .date),
                 (.min, .decimal), (.max, .decimal), (.min, .text), (.max, .text):
                // Equal values may differ (0.0 and -0.0, canonically equivalent strings): the first in the results' order.
                let order = type == .text ? "normalize(\(value), NFC) COLLATE \"C\"" : value
                var extra = ["\(value) IS NOT NULL"]
                if type == .real || type == .double { extra.append("\(value) <> 'NaN'") }
                let direction = aggregate == .min ? "ASC" : "DESC"
                return .answer(statement(column.selectExpression(table: table.table), extra) + " ORDER BY \(order) \(direction), \(orderBy) LIMIT 1", parameters)
            case (.sum, .bigint), (.average, .bigint), (.sum, .unsigned), (.average, .unsigned):
                let totals = "coalesce(sum(\(value)), 0)::text, coalesce(sum(\(value)) FILTER (WHERE \(value) > 0), 0)::text, "
                    + "coalesce(sum(\(value)) FILTER (WHERE \(value) < 0), 0)::text, count(\(value))"
                return .integerTotal(statement(totals), parameters)
            default:
                break
            }
        }
        return columnRoute(condition: condition, parameters: parameters, column: column)
    }

    private func columnRoute(condition: String?, parameters: SQLParameters, column: ColumnMapping) -> AggregateRoute {
        var sql = "SELECT \(table.primaryKey.selectExpression(table: table.table)), \(column.selectExpression(table: table.table)) FROM \(table.table)"
        if let condition { sql += " WHERE \(condition)" }
        sql += " ORDER BY \(orderBy)"
        var parameters = parameters
        if let limit { sql += " LIMIT \(parameters.add(Int64(limit)))" }
        return .column(sql, parameters)
    }

    /// The values of `property` in the results, in their order, as `route` reads them (the
    /// column, or the models).
    private func columnValues<Value: RecordPrimitive>(
        _ property: KeyPath<Model, Value>, column: ColumnMapping, route: AggregateRoute, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Handoff<[Value]> {
        guard case .column(let sql, let parameters) = route else {
            return Handoff(try await all(isolation: isolation).map { $0[keyPath: property] })
        }
        let table = table, mapping = store.mapping
        return try await store.withConnection(isolation: isolation) { connection in
            let rows = try await Self.rows(sql, parameters, mapping: mapping, on: connection)
            let coding = ColumnCoding(models: mapping.models, typeName: table.typeName)
            var values: [Value] = []
            values.reserveCapacity(rows.count)
            for row in rows {
                var cells = row.makeIterator()
                guard let keyCell = cells.next(), let cell = cells.next() else {
                    throw PostgresStoreError(.corruptedRow(typeName: table.typeName, key: "?", reason: "the row has \(row.count) columns, not 2"))
                }
                func key() -> String { (try? coding.read(keyCell, column: table.primaryKey, key: { "?" })).map(PrimaryKeys.messageText) ?? "?" }
                let stored = try coding.read(cell, column: column, key: key)
                guard let value = Value(recordValue: stored) else {
                    throw PostgresStoreError(.corruptedRow(typeName: table.typeName, key: key(), reason: "\(column.property) holds \(stored), not a \(Value.self)"))
                }
                values.append(value)
            }
            return Handoff(values)
        }
    }

    /// The least or greatest non-`nil` value of `property` (`unwrap` gives a value's `Value`,
    /// `nil` for none).
    private func extreme<Stored: RecordPrimitive, Value: Comparable & RecordPrimitive>(
        _ property: KeyPath<Model, Stored>, least: Bool, _ unwrap: @escaping (Stored) -> Value?, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Handoff<Value?> {
        let column = try aggregatedColumn(property)
        let route = try route(least ? .min : .max, column: column)
        guard case .answer(let sql, let parameters) = route else {
            let values = try await columnValues(property, column: column, route: route).value.compactMap(unwrap)
            return Handoff(least ? ValueAggregation.least(values) : ValueAggregation.greatest(values))
        }
        let table = table, mapping = store.mapping
        return try await store.withConnection(isolation: isolation) { connection in
            let rows = try await Self.rows(sql, parameters, mapping: mapping, on: connection)
            guard let row = rows.first else { return Handoff(nil) }
            let coding = ColumnCoding(models: mapping.models, typeName: table.typeName)
            // The answer, then (for integers) a value that does not fit, when there is one.
            var answer: Value?
            for (position, cell) in row.enumerated() {
                let stored = try coding.read(cell, column: column, key: { "?" })
                if case .null = stored { continue }
                guard let value = Value(recordValue: stored) else {
                    throw PostgresStoreError(.corruptedRow(typeName: table.typeName, key: "?", reason: "\(column.property) holds \(stored), not a \(Value.self)"))
                }
                if position == 0 { answer = value }
            }
            return Handoff(answer)
        }
    }

    /// The sum and the number of the non-`nil` values of `property`, added in the results' order
    /// (`unwrap` gives a value's `Value`, `nil` for none).
    private func total<Stored: RecordPrimitive, Value: AdditiveArithmetic & RecordPrimitive>(
        _ property: KeyPath<Model, Stored>, _ aggregate: PostgresAggregate, _ unwrap: @escaping (Stored) -> Value?,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> Handoff<(sum: Value, count: Int)> {
        let column = try aggregatedColumn(property)
        var route = try route(aggregate, column: column)
        if case .integerTotal(let sql, let parameters) = route {
            let mapping = store.mapping
            let found: Handoff<(sum: Value, count: Int)?> = try await store.withConnection(isolation: isolation) { connection in
                let rows = try await Self.rows(sql, parameters, mapping: mapping, on: connection)
                guard let row = rows.first else { return Handoff(nil) }
                let (sum, positive, negative, count) = try row.decode((String, String, String, Int64).self)
                return Handoff(Self.integerTotal(sum: sum, positive: positive, negative: negative, as: Value.self).map { ($0, Int(count)) })
            }
            if let found = found.value { return Handoff(found) }
            // A partial sum may leave the type's range: add in the results' order, as `Results` does.
            let (condition, parameters) = try condition()
            route = columnRoute(condition: condition, parameters: parameters, column: column)
        }
        let values = try await columnValues(property, column: column, route: route).value.compactMap(unwrap)
        return Handoff((try ValueAggregation.sum(values, typeName: table.typeName, property: column.property), values.count))
    }

    /// The sum as a `Value` when the sums of the positive and of the negative values fit it too:
    /// every partial sum then lies between them, so none overflows in any order. `nil` otherwise.
    private static func integerTotal<Value>(sum: String, positive: String, negative: String, as type: Value.Type) -> Value? {
        guard let integer = Value.self as? any FixedWidthInteger.Type,
              parsed(positive, as: integer) != nil, parsed(negative, as: integer) != nil else { return nil }
        return parsed(sum, as: integer) as? Value
    }

    private static func parsed<Integer: FixedWidthInteger>(_ text: String, as type: Integer.Type) -> Integer? {
        Integer(text)
    }

    /// The rows `sql` returns, the server's errors translated.
    private static func rows(
        _ sql: String, _ parameters: SQLParameters, mapping: DatabaseMapping, on connection: PostgresConnection,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> [PostgresRow] {
        try await Failures.translating(mapping) {
            try await connection.rows(of: PostgresQuery(unsafeSQL: sql, binds: parameters.bindings))
        }
    }
}
