import Foundation

/// Parses a condition written as text into the ``QueryNode`` a predicate would translate to, for
/// tools that have the stored schemas but no model types:
///
/// ```text
/// condition  := or
/// or         := and ("||" and)*
/// and        := unary ("&&" unary)*
/// unary      := "!" unary | "(" or ")" | comparison
/// comparison := path (("==" | "!=" | "<" | "<=" | ">" | ">=") literal)?
///             | literal ("==" | "!=" | "<" | "<=" | ">" | ">=") path
/// path       := name ("." name)*          e.g. age, publisher.name
/// literal    := "string" | 42 | -4.5e3 | true | false | nil
/// ```
///
/// A path alone tests a `Bool` property for `true`. Strings stand for dates (ISO 8601), UUIDs
/// and URLs where the property holds those. Every mistake is a ``QueryError`` naming where it is;
/// no input traps, and nesting is bounded by ``maximumDepth``.
struct ConditionParser {
    /// Parentheses and negations nest at most this deep.
    static let maximumDepth = 64

    private let tokens: [ConditionToken]
    private var position = 0
    private var depth = 0
    private let schema: ObjectSchema
    private let schemas: any SchemaSource
    private let root: PredicateExpressions.VariableID

    /// The condition `text` on records of `schema`, reading the record bound to `root`.
    static func parse(
        _ text: String, schema: ObjectSchema, schemas: any SchemaSource, root: PredicateExpressions.VariableID
    ) throws(QueryError) -> QueryNode {
        var parser = ConditionParser(tokens: try ConditionLexer.tokens(of: text), schema: schema, schemas: schemas, root: root)
        let node = try parser.disjunction()
        let last = parser.current
        guard last.kind == .end else { throw parser.error("expected && or || or the end, found \(Self.describe(last.kind))", at: last) }
        return node
    }

    private init(tokens: [ConditionToken], schema: ObjectSchema, schemas: any SchemaSource, root: PredicateExpressions.VariableID) {
        self.tokens = tokens
        self.schema = schema
        self.schemas = schemas
        self.root = root
    }

    /// The token at the current position; the lexer always ends the list with `.end`.
    private var current: ConditionToken {
        tokens.indices.contains(position) ? tokens[position] : ConditionToken(kind: .end, offset: tokens.last?.offset ?? 0)
    }

    private func error(_ message: String, at token: ConditionToken) -> QueryError {
        QueryError(.syntax(offset: token.offset, message: message))
    }

    private mutating func disjunction() throws(QueryError) -> QueryNode {
        var operands = [try conjunction()]
        while current.kind == .or {
            position += 1
            operands.append(try conjunction())
        }
        return Self.balanced(operands[...], QueryNode.or)
    }

    private mutating func conjunction() throws(QueryError) -> QueryNode {
        var operands = [try unary()]
        while current.kind == .and {
            position += 1
            operands.append(try unary())
        }
        return Self.balanced(operands[...], QueryNode.and)
    }

    /// `a || b || c …` as a balanced tree, so that a long chain is evaluated with a shallow stack;
    /// `&&` and `||` are associative, also in three-valued logic, and keep their operands' order.
    private static func balanced(_ operands: ArraySlice<QueryNode>, _ combine: (QueryNode, QueryNode) -> QueryNode) -> QueryNode {
        guard operands.count > 1, let first = operands.first else { return operands.first ?? .constant(.bool(true)) }
        if operands.count == 2, let last = operands.last { return combine(first, last) }
        let middle = operands.startIndex + operands.count / 2
        return combine(balanced(operands[..<middle], combine), balanced(operands[middle...], combine))
    }

    private mutating func unary() throws(QueryError) -> QueryNode {
        let token = current
        switch token.kind {
        case .not:
            position += 1
            try enter(token)
            defer { depth -= 1 }
            return .not(try unary())
        case .open:
            position += 1
            try enter(token)
            defer { depth -= 1 }
            let inner = try disjunction()
            guard current.kind == .close else { throw error("expected ), found \(Self.describe(current.kind))", at: current) }
            position += 1
            return inner
        default:
            return try comparison()
        }
    }

    private mutating func enter(_ token: ConditionToken) throws(QueryError) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw QueryError(.nestingTooDeep(limit: Self.maximumDepth)) }
    }

    private mutating func comparison() throws(QueryError) -> QueryNode {
        let first = current
        position += 1
        let operation: PropertyComparison? = if case .comparison(let operation) = current.kind { operation } else { nil }
        if case .path(let name) = first.kind {
            let path = try PropertyPath(name, in: schema, schemas: schemas, root: root)
            guard let operation else { return try path.comparison(.equal, .bool(true), parsingText: true) }
            position += 1
            let valueToken = current
            guard let value = Self.literal(valueToken.kind) else {
                throw error("expected a value after the comparison, found \(Self.describe(valueToken.kind))", at: valueToken)
            }
            position += 1
            return try path.comparison(operation, value, parsingText: true)
        }
        guard let value = Self.literal(first.kind) else {
            throw error("expected a property name, a value, ! or (, found \(Self.describe(first.kind))", at: first)
        }
        guard let operation else { throw error("expected a comparison after the value", at: current) }
        position += 1
        let pathToken = current
        guard case .path(let name) = pathToken.kind else {
            throw error("compare a value with a property, found \(Self.describe(pathToken.kind))", at: pathToken)
        }
        position += 1
        let path = try PropertyPath(name, in: schema, schemas: schemas, root: root)
        return try path.comparison(Self.mirrored(operation), value, parsingText: true)
    }

    /// `3 < age` is `age > 3`.
    private static func mirrored(_ operation: PropertyComparison) -> PropertyComparison {
        if case .ordered(let order) = operation { return .ordered(order.mirrored) }
        return operation
    }

    private static func literal(_ kind: ConditionToken.Kind) -> RecordValue? {
        switch kind {
        case .string(let text): .string(text)
        case .integer(let value): .int(value)
        case .unsigned(let value): .uint(value)
        case .double(let value): .double(value)
        case .bool(let value): .bool(value)
        case .null: .null
        default: nil
        }
    }

    private static func describe(_ kind: ConditionToken.Kind) -> String {
        switch kind {
        case .path(let name): "the property \(name)"
        case .string(let text): "the string \(text.debugDescription)"
        case .integer(let value): "\(value)"
        case .unsigned(let value): "\(value)"
        case .double(let value): "\(value)"
        case .bool(let value): "\(value)"
        case .null: "nil"
        case .comparison: "a comparison"
        case .and: "&&"
        case .or: "||"
        case .not: "!"
        case .open: "("
        case .close: ")"
        case .end: "the end"
        }
    }
}
