import Foundation

/// A predicate translated for a storage backend: a read-only view of the tree the file store
/// plans its queries from, made by ``BackendModels/queryTree(for:)``.
///
/// ```swift
/// let tree = try models.queryTree(for: #Predicate<Hero> { $0.age >= 40 && $0.name.starts(with: "S") })
/// tree.condition        // .and(.compare(.property(["age"]), .greaterThanOrEqual, .constant(.int(40))), …)
/// tree.isComplete       // true: no part is `.other`
/// ```
public struct QueryTree: Sendable, Equatable, CustomStringConvertible {
    /// The whole condition an object must meet.
    public let condition: QueryExpression

    /// Whether every part of the condition is exposed: no ``QueryExpression/other`` in it.
    public var isComplete: Bool { condition.isComplete }

    /// The conjuncts of a chain of `&&`, in order (the condition alone when it is no `&&`).
    public var conjuncts: [QueryExpression] { condition.conjuncts }

    /// The condition in a Swift-like spelling, for plans and messages.
    public var description: String { condition.description }
}

/// One node of a ``QueryTree``: a value read from the model, a constant, or an operation on them,
/// with Swift's meaning (`==` of strings is canonical equivalence, as `String` compares).
public indirect enum QueryExpression: Sendable, Equatable, CustomStringConvertible {
    /// A constant the predicate holds: enums by their raw value.
    case constant(QueryConstant)
    /// A stored property read from the model, through to-one links and embedded models:
    /// `["publisher", "name"]` for `$0.publisher?.name`. A `nil` on the way gives `nil`.
    case property([String])
    /// `lhs == rhs`.
    case equal(QueryExpression, QueryExpression)
    /// `lhs != rhs`.
    case notEqual(QueryExpression, QueryExpression)
    /// `lhs < rhs` and the other orderings.
    case compare(QueryExpression, QueryComparisonOperator, QueryExpression)
    /// `lhs && rhs`.
    case and(QueryExpression, QueryExpression)
    /// `lhs || rhs`.
    case or(QueryExpression, QueryExpression)
    /// `!operand`.
    case not(QueryExpression)
    /// `value ?? fallback`.
    case nilCoalesce(QueryExpression, QueryExpression)
    /// `string.starts(with: prefix)`.
    case startsWith(QueryExpression, QueryExpression)
    /// `string.contains(other)`.
    case containsText(QueryExpression, QueryExpression)
    /// `sequence.contains(element)`.
    case contains(QueryExpression, QueryExpression)
    /// `collection.count`.
    case count(QueryExpression)
    /// `collection.isEmpty`.
    case isEmpty(QueryExpression)
    /// `(lower...upper).contains(value)` (`isClosed`) or `(lower..<upper).contains(value)`.
    case inRange(QueryExpression, lower: QueryExpression, upper: QueryExpression, isClosed: Bool)
    /// A part this view does not expose (a closure, arithmetic, a subscript, a computed
    /// property …): only evaluating the predicate on the model decides it.
    case other

    init(_ node: QueryNode, root: PredicateExpressions.VariableID) {
        func map(_ node: QueryNode) -> QueryExpression { QueryExpression(node, root: root) }
        switch node {
        case .constant(let value): self = QueryConstant(value).map(QueryExpression.constant) ?? .other
        case .member, .flatMap: self = Self.path(of: node, root: root).map(QueryExpression.property) ?? .other
        case .equal(let a, let b): self = .equal(map(a), map(b))
        case .notEqual(let a, let b): self = .notEqual(map(a), map(b))
        case .compare(let a, let comparison, let b): self = .compare(map(a), QueryComparisonOperator(comparison), map(b))
        case .and(let a, let b): self = .and(map(a), map(b))
        case .or(let a, let b): self = .or(map(a), map(b))
        case .not(let a): self = .not(map(a))
        case .nilCoalesce(let a, let b): self = .nilCoalesce(map(a), map(b))
        case .startsWith(let a, let b): self = .startsWith(map(a), map(b))
        case .containsText(let a, let b): self = .containsText(map(a), map(b))
        case .contains(let a, let b): self = .contains(map(a), map(b))
        case .count(let a): self = .count(map(a))
        case .isEmpty(let a): self = .isEmpty(map(a))
        case .inRange(.range(let lower, let upper, let isClosed), let value):
            self = .inRange(map(value), lower: map(lower), upper: map(upper), isClosed: isClosed)
        default: self = .other
        }
    }

    /// The property path `node` reads from the model bound to `root`: members of the root, and
    /// members of a link or embedded model reached through optional chaining.
    private static func path(of node: QueryNode, root: PredicateExpressions.VariableID) -> [String]? {
        switch node {
        case .member(.variable(let variable), let property, _, _) where variable == root:
            return [property]
        case .member(let base, let property, _, _):
            return path(of: base, root: root).map { $0 + [property] }
        case .flatMap(let wrapped, let variable, let body):
            guard let prefix = path(of: wrapped, root: root), let rest = path(of: body, root: variable) else { return nil }
            return prefix + rest
        default:
            return nil
        }
    }

    /// Whether no part of the expression is ``other``.
    public var isComplete: Bool {
        switch self {
        case .other: false
        case .constant, .property: true
        case .not(let a), .count(let a), .isEmpty(let a): a.isComplete
        case .equal(let a, let b), .notEqual(let a, let b), .compare(let a, _, let b), .and(let a, let b), .or(let a, let b),
             .nilCoalesce(let a, let b), .startsWith(let a, let b), .containsText(let a, let b), .contains(let a, let b):
            a.isComplete && b.isComplete
        case .inRange(let a, let lower, let upper, _): a.isComplete && lower.isComplete && upper.isComplete
        }
    }

    /// The conjuncts of a chain of `&&`, in order.
    public var conjuncts: [QueryExpression] {
        if case .and(let a, let b) = self { return a.conjuncts + b.conjuncts }
        return [self]
    }

    /// A Swift-like spelling: `name == "Hulk" && !(age < 40)`.
    public var description: String {
        switch self {
        case .constant(let value): value.description
        case .property(let path): path.joined(separator: ".")
        case .equal(let a, let b): "\(a) == \(b)"
        case .notEqual(let a, let b): "\(a) != \(b)"
        case .compare(let a, let op, let b): "\(a) \(op.rawValue) \(b)"
        case .and(let a, let b): "(\(a) && \(b))"
        case .or(let a, let b): "(\(a) || \(b))"
        case .not(let a): "!(\(a))"
        case .nilCoalesce(let a, let b): "(\(a) ?? \(b))"
        case .startsWith(let a, let b): "\(a).starts(with: \(b))"
        case .containsText(let a, let b): "\(a).contains(\(b))"
        case .contains(let a, let b): "\(a).contains(\(b))"
        case .count(let a): "\(a).count"
        case .isEmpty(let a): "\(a).isEmpty"
        case .inRange(let a, let lower, let upper, let isClosed): "(\(lower)\(isClosed ? "..." : "..<")\(upper)).contains(\(a))"
        case .other: "<evaluated on the model>"
        }
    }
}

/// The orderings of ``QueryExpression/compare(_:_:_:)``.
public enum QueryComparisonOperator: String, Sendable, Equatable {
    /// `<`
    case lessThan = "<"
    /// `<=`
    case lessThanOrEqual = "<="
    /// `>`
    case greaterThan = ">"
    /// `>=`
    case greaterThanOrEqual = ">="

    init(_ comparison: QueryComparison) {
        switch comparison {
        case .lessThan: self = .lessThan
        case .lessThanOrEqual: self = .lessThanOrEqual
        case .greaterThan: self = .greaterThan
        case .greaterThanOrEqual: self = .greaterThanOrEqual
        }
    }
}

/// A constant in a ``QueryTree``: a single value, as a record holds it (every integer widened to
/// 64 bits, enums by their raw value). Constants of other shapes (arrays, models) are
/// ``QueryExpression/other``.
public enum QueryConstant: Sendable, Hashable, CustomStringConvertible {
    /// `nil`.
    case null
    /// A `Bool`.
    case bool(Bool)
    /// A signed integer of any width.
    case int(Int64)
    /// An unsigned integer of any width.
    case uint(UInt64)
    /// A `Float`.
    case float(Float)
    /// A `Double`.
    case double(Double)
    /// A `String`.
    case string(String)
    /// A `Data` value.
    case data(Data)
    /// A `Date`.
    case date(Date)
    /// A `UUID`.
    case uuid(UUID)
    /// A `Decimal`.
    case decimal(Decimal)
    /// A `URL`, by its absolute string.
    case url(String)

    init?(_ value: QueryValue) {
        switch value {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .int(let value): self = .int(value)
        case .uint(let value): self = .uint(value)
        case .float(let value): self = .float(value)
        case .double(let value): self = .double(value)
        case .string(let value): self = .string(value)
        case .data(let bytes): self = .data(Data(bytes))
        case .date(let value): self = .date(value)
        case .uuid(let value): self = .uuid(value)
        case .decimal(let value): self = .decimal(value)
        case .url(let value): self = .url(value)
        case .link, .embedded, .list, .dictionary: return nil
        }
    }

    /// The constant as Swift would spell it.
    public var description: String {
        switch self {
        case .null: "nil"
        case .bool(let value): "\(value)"
        case .int(let value): "\(value)"
        case .uint(let value): "\(value)"
        case .float(let value): "\(value)"
        case .double(let value): "\(value)"
        case .string(let value): "\"\(value)\""
        case .data(let value): "Data(\(value.count) bytes)"
        case .date(let value): "Date(timeIntervalSinceReferenceDate: \(value.timeIntervalSinceReferenceDate))"
        case .uuid(let value): "UUID(\(value.uuidString))"
        case .decimal(let value): "Decimal(\(value))"
        case .url(let value): "URL(\(value))"
        }
    }
}
