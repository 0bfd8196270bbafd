import Foundation
import MirrorStore
import PostgresNIO

/// The objects of one model type that predicates select, in primary-key order or sorted, as
/// MirrorStore's `Results` spells it: `filter(_:)`, `sorted(using:)`, `sorted(byProperty:ascending:)`
/// and `prefix(_:)`. Nothing is read until ``all(isolation:)`` or ``count(isolation:)``.
///
/// Each predicate goes through MirrorStore's query tree (``QueryTree``): the part SQL answers
/// exactly as Swift does runs in the `WHERE` clause with bound parameters; the rest is decided by
/// evaluating the predicate in Swift on the rows SQL returned. ``plan`` says which part ran where.
///
/// ```swift
/// let veterans = try store.objects(Hero.self)
///     .filter(#Predicate { $0.age >= 40 && $0.name.contains("an") })
///     .sorted(byProperty: "age", ascending: false)
///     .prefix(10)
/// print(veterans.plan)   // SQL: age >= 40 AND (superset) name contains; Swift: the predicate
/// let found = try await veterans.all()
/// ```
public struct PostgresResults<Model: Persistable>: Sendable {
    struct Filter: Sendable {
        let predicate: Predicate<Model>
        let tree: QueryTree
        /// Whether the SQL translation decides every object, so Swift need not.
        let isExact: Bool
        let sqlText: String?
        /// The parameters of `sqlText`, numbered from `$1`: what a query with this filter alone binds.
        let parameters: SQLParameters
    }

    struct PropertySort: Sendable {
        let column: String
        let expression: String
        let ascending: Bool
    }

    let store: PostgresStore
    let table: TableMapping
    var filters: [Filter] = []
    /// The predicates of the filters SQL does not decide exactly, which Swift evaluates on the
    /// rows read: kept apart so a read need not sort the filters again.
    var swiftPredicates: [Predicate<Model>] = []
    /// The conditions of ``linking(to:through:)``, all exact SQL.
    var inverseLinks: [InverseLinkCondition] = []
    var propertySorts: [PropertySort] = []
    var descriptors: [SortDescriptor<Model>] = []
    var limit: Int?

    init(store: PostgresStore, table: TableMapping) {
        self.store = store
        self.table = table
    }

    /// The results that also satisfy `predicate`.
    ///
    /// - Throws: `QueryError` for a predicate on an ignored property; ``PostgresStoreError``
    ///   (`.unsupportedQuery`) after ``prefix(_:)``, whose first objects a later filter would change.
    public func filter(_ predicate: Predicate<Model>) throws -> PostgresResults<Model> {
        guard limit == nil else { throw PostgresStoreError(.unsupportedQuery(reason: "filter(_:) after prefix(_:) is not supported yet; filter first")) }
        let tree = try store.mapping.models.queryTree(for: predicate)
        var parameters = SQLParameters()
        let condition = try SQLConditionTranslator(table: table, mapping: store.mapping).condition(tree.condition, &parameters)
        var copy = self
        let isExact = condition?.isExact ?? false
        copy.filters.append(Filter(predicate: predicate, tree: tree, isExact: isExact, sqlText: condition?.text, parameters: parameters))
        if !isExact { copy.swiftPredicates.append(predicate) }
        return copy
    }

    /// The results sorted by one descriptor: `SortDescriptor(\.age)`.
    public func sorted(using descriptor: SortDescriptor<Model>) throws -> PostgresResults<Model> {
        try sorted(using: [descriptor])
    }

    /// The results sorted by several descriptors, the first deciding most; equal objects keep the
    /// order they had.
    ///
    /// Descriptors on stored integers, `Decimal`s and `Date`s (not optional) run in SQL
    /// (`ORDER BY`), where PostgreSQL orders them as Swift does; any other descriptor (strings,
    /// which Foundation compares with its own comparator, doubles, which may hold NaN, enums,
    /// optionals) makes the whole sort run in Swift on the rows read.
    public func sorted(using descriptors: [SortDescriptor<Model>]) throws -> PostgresResults<Model> {
        guard limit == nil else { throw PostgresStoreError(.unsupportedQuery(reason: "sorting after prefix(_:) is not supported yet; sort first")) }
        var copy = self
        if self.descriptors.isEmpty, let sorts = sqlSorts(for: descriptors) {
            // A later sort decides first; equal objects keep the earlier order.
            copy.propertySorts = sorts + copy.propertySorts
        } else {
            copy.descriptors = descriptors + copy.descriptors
        }
        return copy
    }

    /// The SQL sorts of `descriptors`, or `nil` when one of them must run in Swift.
    private func sqlSorts(for descriptors: [SortDescriptor<Model>]) -> [PropertySort]? {
        var sorts: [PropertySort] = []
        for descriptor in descriptors {
            guard descriptor.stringComparator == nil, let keyPath = descriptor.keyPath,
                  Self.sqlOrderedTypes.contains(ObjectIdentifier(type(of: keyPath).valueType)),
                  let name = store.mapping.models.propertyName(of: keyPath),
                  let column = table.column(named: name), !column.isNullable else { return nil }
            switch column.storage {
            case .scalar(.bigint), .scalar(.unsigned), .scalar(.decimal), .scalar(.date): break
            default: return nil
            }
            sorts.append(PropertySort(column: name, expression: table.qualified(column), ascending: descriptor.order == .forward))
        }
        return sorts
    }

    /// The value types whose order PostgreSQL's matches: integers, `Decimal` and `Date` (neither
    /// ever NaN when stored). Raw-value enums, whose own `<` may differ, are not among them.
    private static var sqlOrderedTypes: Set<ObjectIdentifier> {
        [Int.self, Int8.self, Int16.self, Int32.self, Int64.self, UInt.self, UInt8.self, UInt16.self, UInt32.self, UInt64.self,
         Decimal.self, Date.self].reduce(into: []) { $0.insert(ObjectIdentifier($1)) }
    }

    /// The results sorted by the stored property `name`, in SQL (`ORDER BY`): numbers, dates and
    /// `Bool` by value, strings as Swift's `<` orders them (their NFC form, code point by code
    /// point), `nil` first when ascending.
    ///
    /// - Throws: `QueryError` (`.unknownProperty`, `.unsortableProperty`); ``PostgresStoreError``
    ///   (`.unsupportedQuery`) after ``sorted(using:)-(SortDescriptor<Model>)``, which runs in Swift.
    public func sorted(byProperty name: String, ascending: Bool = true) throws -> PostgresResults<Model> {
        guard limit == nil, descriptors.isEmpty else {
            throw PostgresStoreError(.unsupportedQuery(reason: "sorted(byProperty:) after sorted(using:) or prefix(_:) is not supported yet; sort by property first"))
        }
        guard let column = table.column(named: name) else {
            throw QueryError(.unknownProperty(typeName: table.typeName, property: name))
        }
        let expression: String
        switch column.storage {
        case .scalar(.text): expression = "normalize(\(table.qualified(column)), NFC) COLLATE \"C\""
        case .scalar(.boolean), .scalar(.bigint), .scalar(.unsigned), .scalar(.real), .scalar(.double), .scalar(.date), .scalar(.decimal):
            expression = table.qualified(column)
        default:
            throw QueryError(.unsortableProperty(typeName: table.typeName, property: name, kind: column.kind.description))
        }
        var copy = self
        copy.propertySorts.insert(PropertySort(column: name, expression: expression, ascending: ascending), at: 0)
        return copy
    }

    /// The first `maxLength` results at most: `LIMIT` in SQL when SQL decides the whole query.
    public func prefix(_ maxLength: Int) -> PostgresResults<Model> {
        var copy = self
        copy.limit = Swift.min(copy.limit ?? Int.max, Swift.max(0, maxLength))
        return copy
    }

    /// Where each part of the query runs.
    public var plan: PostgresQueryPlan {
        let sqlParts = filters.compactMap(\.sqlText) + inverseLinks.compactMap { link in
            var parameters = SQLParameters()
            return try? link.text(&parameters)
        }
        let swiftParts = filters.filter { !$0.isExact }.map(\.tree.description)
        var order = propertySorts.map { "\($0.column) \($0.ascending ? "ascending" : "descending")" }
        order.append("\(table.primaryKey.property) ascending")
        let inSwift = !swiftParts.isEmpty || !descriptors.isEmpty
        return PostgresQueryPlan(
            sql: statement(condition: sqlParts.isEmpty ? nil : sqlParts.joined(separator: " AND "), limitInSQL: limit != nil && !inSwift),
            sqlPart: sqlParts.isEmpty ? nil : sqlParts.joined(separator: " AND "),
            swiftPart: swiftParts.isEmpty ? nil : swiftParts.joined(separator: " && "),
            sqlOrder: order.joined(separator: ", "),
            swiftSort: descriptors.isEmpty ? nil : "\(descriptors.count) sort descriptor\(descriptors.count == 1 ? "" : "s")",
            limit: limit.map { inSwift ? "\($0) in Swift" : "\($0) in SQL" })
    }

    private func statement(condition: String?, limitInSQL: Bool) -> String {
        var sql = "SELECT … FROM \(table.table)"
        if let condition { sql += " WHERE \(condition)" }
        sql += " ORDER BY \(orderBy)"
        if limitInSQL { sql += " LIMIT $n" }
        return sql
    }

    var orderBy: String {
        guard !propertySorts.isEmpty else { return table.keyOrder }
        var terms = propertySorts.map { "\($0.expression) \($0.ascending ? "ASC NULLS FIRST" : "DESC NULLS LAST")" }
        terms.append(table.keyOrder)
        return terms.joined(separator: ", ")
    }

    /// Every object of the results, read and decided now.
    ///
    /// - Throws: ``PostgresStoreError`` when the server refuses or a row does not read back;
    ///   what a predicate throws for an object when Swift evaluates it.
    public func all(isolation: isolated (any Actor)? = #isolation) async throws -> [Model] {
        try await models().value
    }

    /// ``all(isolation:)``, away from the caller's actor: every step awaits the connection, and
    /// each would otherwise come back to the actor; the caller's actor is met once, at the end.
    private func models() async throws -> Handoff<[Model]> {
        let table = table
        return Handoff(try await read(isolation: nil, { reader, condition, parameters, orderBy, limit in
            try await reader.models(Model.self, table: table, condition: condition, parameters: parameters, orderBy: orderBy, limit: limit)
        }, model: { $0 }))
    }

    /// One object of the results, with what observation compares it by.
    struct Entry {
        let model: Model
        let key: RecordValue
        let fingerprint: Fingerprint
    }

    /// Every object of the results with its key and its fingerprint (of the values the paths
    /// `watching` read, or of all), read and decided now.
    func entries(watching: WatchedPaths? = nil, isolation: isolated (any Actor)? = #isolation) async throws -> [Entry] {
        let table = table
        return try await read(isolation: isolation, { reader, condition, parameters, orderBy, limit in
            let records = try await reader.records(table: table, condition: condition, parameters: parameters, orderBy: orderBy, limit: limit)
            return try records.map { record in
                Entry(model: try reader.model(Model.self, from: record), key: record[propertyAt: table.primaryKey.position],
                      fingerprint: Fingerprint(record, watching: watching, inverses: reader.inverseRecords(of:)))
            }
        }, model: { $0.model })
    }

    /// The SQL condition of every filter and inverse link and its parameters: the one filter's
    /// own translation when only one has SQL, else all of them translated again into one numbering.
    func condition() throws -> (text: String?, parameters: SQLParameters) {
        if inverseLinks.isEmpty {
            var translated: Filter?
            var count = 0
            for filter in filters where filter.sqlText != nil {
                translated = filter
                count += 1
            }
            if count <= 1 { return (translated?.sqlText, translated?.parameters ?? SQLParameters()) }
        }
        var parameters = SQLParameters()
        var conditions: [String] = []
        let translator = SQLConditionTranslator(table: table, mapping: store.mapping)
        for filter in filters {
            if let condition = try translator.condition(filter.tree.condition, &parameters) { conditions.append(condition.text) }
        }
        for link in inverseLinks { conditions.append(try link.text(&parameters)) }
        return (conditions.isEmpty ? nil : conditions.joined(separator: " AND "), parameters)
    }

    /// Every object of the results as `load` reads them (given the reader, the SQL condition,
    /// its parameters, the order and the limit SQL applies), decided and sorted now; `model`
    /// gives back the model of an element, for the parts run in Swift.
    func read<Element>(
        isolation: isolated (any Actor)? = #isolation,
        _ load: (RowReader, String?, SQLParameters, String, Int?) async throws -> [Element], model: (Element) -> Model
    ) async throws -> [Element] {
        let swiftFilters = swiftPredicates
        let inSwift = !swiftFilters.isEmpty || !descriptors.isEmpty
        let limit = limit, orderBy = orderBy, descriptors = descriptors
        let (condition, parameters) = try condition()
        return try await store.withConnection(isolation: isolation) { connection in
            let reader = RowReader(connection: connection, mapping: store.mapping, statements: store.preparedStatements)
            var entries = try await load(reader, condition, parameters, orderBy, inSwift ? nil : limit)
            if !swiftFilters.isEmpty {
                entries = try entries.filter { entry in try swiftFilters.allSatisfy { try $0.evaluate(model(entry)) } }
            }
            if !descriptors.isEmpty {
                // Sorts the models, carrying each entry along (the sort is stable, as `sorted(using:)` is).
                let order = entries.indices.sorted { left, right in
                    for descriptor in descriptors {
                        switch descriptor.compare(model(entries[left]), model(entries[right])) {
                        case .orderedAscending: return true
                        case .orderedDescending: return false
                        case .orderedSame: continue
                        }
                    }
                    return left < right
                }
                entries = order.map { entries[$0] }
            }
            if inSwift, let limit, entries.count > limit { entries = Array(entries.prefix(limit)) }
            return Handoff(entries)
        }.value
    }

    /// The number of results: `count(*)` in SQL when SQL decides every filter.
    public func count(isolation: isolated (any Actor)? = #isolation) async throws -> Int {
        guard filters.allSatisfy({ $0.isExact }) else { return try await all().count }
        let table = table, limit = limit
        let (condition, parameters) = try condition()
        return try await store.withConnection(isolation: isolation) { connection in
            var sql = "SELECT count(*) FROM \(table.table)"
            if let condition { sql += " WHERE " + condition }
            let rows = try await Failures.translating(store.mapping) {
                try await connection.rows(of: PostgresQuery(unsafeSQL: sql, binds: parameters.bindings))
            }
            let count = try rows.first?.decode(Int64.self) ?? 0
            return Swift.min(Int(count), limit ?? Int.max)
        }
    }
}

/// Where each part of a ``PostgresResults`` query runs: `sqlPart` in the `WHERE` clause,
/// `swiftPart` on the models read (the whole predicate is evaluated there whenever SQL does not
/// decide it exactly).
///
/// ```swift
/// let plan = try store.objects(Hero.self).filter(#Predicate { $0.age > 40 }).plan
/// plan.sqlPart     // "(\"age\" > $1)"
/// plan.swiftPart   // nil
/// ```
public struct PostgresQueryPlan: Sendable, Equatable, CustomStringConvertible {
    /// The statement's shape, parameters as `$n`.
    public let sql: String
    /// The condition SQL decides, or `nil` when it reads every row.
    public let sqlPart: String?
    /// The conditions decided in Swift, as the query tree spells them, or `nil`.
    public let swiftPart: String?
    /// The order SQL reads rows in.
    public let sqlOrder: String
    /// The sort run in Swift, or `nil`.
    public let swiftSort: String?
    /// Where the limit applies, or `nil`.
    public let limit: String?

    /// One line per part.
    public var description: String {
        var lines = ["SQL: \(sql)"]
        lines.append("Swift: " + (swiftPart.map { "evaluate the predicate where SQL is not exact: \($0)" } ?? "nothing to evaluate"))
        if let swiftSort { lines.append("Swift sort: \(swiftSort)") }
        if let limit { lines.append("limit: \(limit)") }
        return lines.joined(separator: "\n")
    }
}
