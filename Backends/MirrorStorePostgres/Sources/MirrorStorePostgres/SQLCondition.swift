import Foundation
import MirrorStore
import PostgresNIO

/// Parameters of one statement, numbered as they are added: values only ever travel here.
///
/// They are kept as `PostgresData`, which a prepared statement runs with (``PreparedStatements``);
/// an unprepared statement binds the same bytes (``bindings``).
struct SQLParameters: Sendable {
    private(set) var values: [PostgresData] = []
    var count: Int { values.count }

    /// The values, bound for an unprepared statement.
    var bindings: PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values { bindings.append(value) }
        return bindings
    }

    /// The type each value is bound as: what a statement prepared for them must declare.
    var dataTypes: [PostgresDataType] { values.map(\.type) }

    /// Binds `value` as a `type` and returns its placeholder, cast where it is bound as text.
    mutating func add(_ value: RecordValue, type: ScalarType) throws -> String {
        try ColumnCoding.bindScalar(value, type: type, into: &values) { reason in
            PostgresStoreError(.unstorableValue(typeName: "query", property: "constant", reason: reason))
        }
        return type.isTextEncoded ? "$\(count)::\(type.sqlType)" : "$" + String(count)
    }

    /// Binds the primary keys `keys` of `table` as one array and returns its placeholder, for
    /// `key = ANY(…)`.
    mutating func addKeys(_ keys: [RecordValue], of table: TableMapping) throws -> String {
        func failure(_ value: RecordValue) -> PostgresStoreError {
            PostgresStoreError(.unstorableValue(typeName: table.typeName, property: table.primaryKey.property, reason: "\(value), which is not a key of this table"))
        }
        guard case .scalar(let type) = table.primaryKey.storage else { throw failure(.null) }
        switch type {
        case .bigint:
            return add(try keys.map { key -> Int64 in if case .int(let v) = key { return v }; throw failure(key) })
        case .unsigned:
            return add(try keys.map { key -> String in if case .uint(let v) = key { return String(v) }; throw failure(key) }) + "::numeric(20,0)[]"
        case .text:
            return add(try keys.map { key -> String in if case .string(let v) = key { return v }; throw failure(key) })
        case .uuid:
            return add(try keys.map { key -> UUID in if case .uuid(let v) = key { return v }; throw failure(key) })
        default:
            throw failure(keys.first ?? .null)
        }
    }

    /// Binds a raw value and returns its placeholder.
    mutating func add(_ value: some PostgresNonThrowingEncodable & Sendable) -> String {
        values.bind(value)
        return "$\(count)"
    }
}

/// A condition spelled in SQL: `isExact` when its rows are exactly the objects the Swift
/// predicate holds for; otherwise a superset, which the predicate then decides in Swift.
struct SQLCondition {
    let text: String
    let isExact: Bool
}

/// Translates a ``QueryTree`` into a SQL `WHERE` condition with bound parameters, with Swift's
/// meaning: only what PostgreSQL answers exactly as Swift does is exact; strings are compared in
/// their NFC form byte by byte (`COLLATE "C"`), which is how Swift's `String` compares; `NULL`s
/// never leak into `NOT` (every condition is two-valued); doubles keep NaN out of `>` and `>=`.
struct SQLConditionTranslator {
    let table: TableMapping
    /// The tables of the store's models, by type name: what a path through links reads.
    let tables: [String: TableMapping]

    init(table: TableMapping, mapping: DatabaseMapping) {
        self.table = table
        tables = mapping.tables
    }

    /// A value a condition reads: its SQL expression, where it is kept, and whether it may be `NULL`.
    struct Operand {
        let sql: String
        let storage: ColumnStorage
        let isNullable: Bool
    }

    /// The SQL of `expression` as a condition, or `nil` when SQL cannot say anything useful;
    /// `parameters` then holds no parameter of it.
    func condition(_ expression: QueryExpression, _ parameters: inout SQLParameters) throws -> SQLCondition? {
        let saved = parameters
        guard let condition = try translate(expression, &parameters) else {
            parameters = saved
            return nil
        }
        return condition
    }

    private func translate(_ expression: QueryExpression, _ parameters: inout SQLParameters) throws -> SQLCondition? {
        switch expression {
        case .and(let a, let b):
            let left = try condition(a, &parameters), right = try condition(b, &parameters)
            switch (left, right) {
            case (let l?, let r?): return SQLCondition(text: "(\(l.text) AND \(r.text))", isExact: l.isExact && r.isExact)
            // One side alone keeps a superset: the predicate then decides the rest in Swift.
            case (let l?, nil): return SQLCondition(text: l.text, isExact: false)
            case (nil, let r?): return SQLCondition(text: r.text, isExact: false)
            case (nil, nil): return nil
            }
        case .or(let a, let b):
            guard let l = try condition(a, &parameters), let r = try condition(b, &parameters) else { return nil }
            return SQLCondition(text: "(\(l.text) OR \(r.text))", isExact: l.isExact && r.isExact)
        case .not(let a):
            // The negation of a superset is no superset: only an exact condition is negated.
            guard let inner = try condition(a, &parameters), inner.isExact else { return nil }
            return SQLCondition(text: "(NOT \(inner.text))", isExact: true)
        case .property:
            guard let column = try column(expression), case .scalar(.boolean) = column.storage else { return nil }
            return SQLCondition(text: twoValued(column, column.sql), isExact: true)
        case .constant(.bool(let value)):
            return SQLCondition(text: value ? "TRUE" : "FALSE", isExact: true)
        case .equal(let a, let b):
            return try equality(a, b, negated: false, &parameters)
        case .notEqual(let a, let b):
            return try equality(a, b, negated: true, &parameters)
        case .compare(let a, let op, let b):
            if case .constant = a { return try comparison(b, mirrored(op), a, &parameters) }
            return try comparison(a, op, b, &parameters)
        case .inRange(let value, let lower, let upper, let isClosed):
            guard case .constant(let low) = lower, case .constant(let high) = upper,
                  let ordered = Self.precedes(low, high), ordered else { return nil }
            guard let l = try comparison(value, .greaterThanOrEqual, lower, &parameters),
                  let u = try comparison(value, isClosed ? .lessThanOrEqual : .lessThan, upper, &parameters) else { return nil }
            return SQLCondition(text: "(\(l.text) AND \(u.text))", isExact: l.isExact && u.isExact)
        case .startsWith(let a, let b):
            guard let column = try column(a), case .scalar(.text) = column.storage, case .constant(.string(let prefix)) = b else { return nil }
            let placeholder = try parameters.add(.string(prefix), type: .text)
            // A superset: Swift compares whole characters, which NFC code points only approach.
            return SQLCondition(text: twoValued(column, "starts_with(normalize(\(column.sql), NFC), normalize(\(placeholder), NFC))"), isExact: false)
        case .containsText(let a, let b):
            guard let column = try column(a), case .scalar(.text) = column.storage, case .constant(.string(let part)) = b else { return nil }
            let placeholder = try parameters.add(.string(part), type: .text)
            return SQLCondition(text: twoValued(column, "strpos(normalize(\(column.sql), NFC), normalize(\(placeholder), NFC)) > 0"), isExact: false)
        case .contains(let sequence, let element):
            guard let column = try column(sequence), case .array(let type) = column.storage, case .constant(let constant) = element,
                  let value = Self.recordValue(constant, for: type), !Self.isNaN(value) else { return nil }
            let placeholder = try parameters.add(value, type: type)
            if type == .text {
                return SQLCondition(text: twoValued(column, "EXISTS (SELECT 1 FROM unnest(\(column.sql)) AS e WHERE normalize(e, NFC) = normalize(\(placeholder), NFC))"), isExact: true)
            }
            // `@>` is what a GIN index on the array answers; equal to `= ANY` for these types.
            return SQLCondition(text: twoValued(column, "\(column.sql) @> ARRAY[\(placeholder)]"), isExact: true)
        case .isEmpty(let a):
            guard let column = try column(a) else { return nil }
            switch column.storage {
            case .array: return SQLCondition(text: twoValued(column, "cardinality(\(column.sql)) = 0"), isExact: true)
            case .scalar(.text): return SQLCondition(text: twoValued(column, "\(column.sql) = ''"), isExact: true)
            default: return nil
            }
        default:
            return nil
        }
    }

    /// What a property path reads: a column of the table, or, through to-one links, a scalar
    /// subquery per link (`NULL` when a link is `nil`, as optional chaining gives `nil`). Paths
    /// into embedded models (`jsonb`) are left to Swift for now.
    private func column(_ expression: QueryExpression) throws -> Operand? {
        guard case .property(let path) = expression, let first = path.first,
              let column = table.column(named: first) else { return nil }
        if path.count == 1 { return Operand(sql: column.quotedName, storage: column.storage, isNullable: column.isNullable) }
        var current = column
        var sql = "\(table.table).\(column.quotedName)"
        for (hop, name) in path.dropFirst().enumerated() {
            guard case .link(let target, _) = current.storage, let targetTable = tables[target],
                  let next = targetTable.column(named: name) else { return nil }
            let alias = SQL.identifier("mirrorstore_link\(hop + 1)")
            sql = "(SELECT \(alias).\(next.quotedName) FROM \(targetTable.table) AS \(alias) WHERE \(alias).\(targetTable.primaryKey.quotedName) = \(sql))"
            current = next
        }
        return Operand(sql: sql, storage: current.storage, isNullable: true)
    }

    /// What a compared value reads: a property path, `count` of a native array, or a property
    /// path `?? constant`.
    private func operand(_ expression: QueryExpression, _ parameters: inout SQLParameters) throws -> Operand? {
        switch expression {
        case .count(let inner):
            guard let array = try column(inner), case .array = array.storage else { return nil }
            return Operand(sql: "cardinality(\(array.sql))", storage: .scalar(.bigint), isNullable: array.isNullable)
        case .nilCoalesce(let inner, .constant(let fallback)):
            guard let value = try column(inner), case .scalar(let type) = value.storage,
                  let bound = Self.recordValue(fallback, for: type), !Self.isNaN(bound) else { return nil }
            let placeholder = try parameters.add(bound, type: type)
            return Operand(sql: "COALESCE(\(value.sql), \(placeholder))", storage: value.storage, isNullable: false)
        default:
            return try column(expression)
        }
    }

    /// `condition` made two-valued: `NULL` (a `nil` column) is false, as Swift's comparisons of
    /// `nil` with a value are.
    private func twoValued(_ column: Operand, _ condition: String) -> String {
        column.isNullable ? "(\(column.sql) IS NOT NULL AND \(condition))" : condition
    }

    private func equality(_ a: QueryExpression, _ b: QueryExpression, negated: Bool, _ parameters: inout SQLParameters) throws -> SQLCondition? {
        var (property, constant) = (a, b)
        if case .constant = a { (property, constant) = (b, a) }
        guard case .constant(let value) = constant else { return nil }
        if case .null = value {
            guard let column = try column(property) else { return nil }
            // A column that is never NULL never equals nil.
            guard column.isNullable else { return SQLCondition(text: negated ? "TRUE" : "FALSE", isExact: true) }
            return SQLCondition(text: "\(column.sql) IS \(negated ? "NOT " : "")NULL", isExact: true)
        }
        guard let column = try operand(property, &parameters) else { return nil }
        guard case .scalar(let type) = column.storage,
              let bound = Self.recordValue(value, for: type), !Self.isNaN(bound) else { return nil }
        let placeholder = try parameters.add(bound, type: type)
        let test: String
        switch type {
        case .text: test = "normalize(\(column.sql), NFC) COLLATE \"C\" = normalize(\(placeholder), NFC)"
        default: test = "\(column.sql) = \(placeholder)"
        }
        let positive = twoValued(column, test)
        return SQLCondition(text: negated ? "(NOT \(positive))" : positive, isExact: true)
    }

    private func comparison(_ a: QueryExpression, _ op: QueryComparisonOperator, _ b: QueryExpression, _ parameters: inout SQLParameters) throws -> SQLCondition? {
        guard case .constant(let value) = b, let column = try operand(a, &parameters), case .scalar(let type) = column.storage,
              let bound = Self.recordValue(value, for: type), !Self.isNaN(bound) else { return nil }
        switch type {
        case .bigint, .unsigned, .real, .double, .date, .text, .decimal: break
        case .boolean, .bytea, .uuid, .url: return nil
        }
        let placeholder = try parameters.add(bound, type: type)
        var test: String
        if type == .text {
            test = "normalize(\(column.sql), NFC) COLLATE \"C\" \(op.rawValue) normalize(\(placeholder), NFC)"
        } else {
            test = "\(column.sql) \(op.rawValue) \(placeholder)"
        }
        // PostgreSQL orders NaN above every number, where Swift's > and >= are false for it.
        if (type == .real || type == .double) && (op == .greaterThan || op == .greaterThanOrEqual) {
            test = "(\(test) AND \(column.sql) <> 'NaN'::\(type.sqlType))"
        }
        return SQLCondition(text: twoValued(column, test), isExact: true)
    }

    private func mirrored(_ op: QueryComparisonOperator) -> QueryComparisonOperator {
        switch op {
        case .lessThan: .greaterThan
        case .lessThanOrEqual: .greaterThanOrEqual
        case .greaterThan: .lessThan
        case .greaterThanOrEqual: .lessThanOrEqual
        }
    }

    /// The record value of a query constant for a column of `type`, or `nil` when the kinds
    /// differ (Swift then decides).
    static func recordValue(_ constant: QueryConstant, for type: ScalarType) -> RecordValue? {
        switch (type, constant) {
        case (.boolean, .bool(let v)): .bool(v)
        case (.bigint, .int(let v)): .int(v)
        case (.unsigned, .uint(let v)): .uint(v)
        case (.real, .float(let v)): .float(v)
        case (.double, .double(let v)): .double(v)
        case (.text, .string(let v)): v.utf8.contains(0) ? nil : .string(v)
        case (.bytea, .data(let v)): .data(v)
        case (.date, .date(let v)): .date(v)
        case (.uuid, .uuid(let v)): .uuid(v)
        case (.decimal, .decimal(let v)): .decimal(v)
        case (.url, .url(let v)): URL(string: v).map(RecordValue.url)
        default: nil
        }
    }

    private static func isNaN(_ value: RecordValue) -> Bool {
        switch value {
        case .double(let v): v.isNaN
        case .float(let v): v.isNaN
        case .date(let v): v.timeIntervalSinceReferenceDate.isNaN
        // Never stored (writes refuse it), and PostgreSQL's NaN equals itself where Swift's does not.
        case .decimal(let v): v.isNaN
        default: false
        }
    }

    /// Whether `lower` comes before `upper` or equals it: a range Swift makes without trapping. `nil` when the constants do not compare.
    static func precedes(_ lower: QueryConstant, _ upper: QueryConstant) -> Bool? {
        // Both `a...b` and `a..<b` need a <= b.
        func check<T: Comparable>(_ a: T, _ b: T) -> Bool { a <= b }
        switch (lower, upper) {
        case (.int(let a), .int(let b)): return check(a, b)
        case (.uint(let a), .uint(let b)): return check(a, b)
        case (.double(let a), .double(let b)): return a.isNaN || b.isNaN ? nil : check(a, b)
        case (.float(let a), .float(let b)): return a.isNaN || b.isNaN ? nil : check(a, b)
        case (.string(let a), .string(let b)): return check(a, b)
        case (.date(let a), .date(let b)): return check(a, b)
        default: return nil
        }
    }
}
