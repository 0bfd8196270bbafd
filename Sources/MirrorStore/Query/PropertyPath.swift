import Foundation

/// A stored property named at run time: `"name"`, or a dotted path through to-one links and
/// embedded models, `"publisher.name"`. It reads what the key path `\.publisher?.name` reads in a
/// predicate: an optional link along the way is followed with `?.`, so the path reads `nil` when
/// the link is `nil`.
struct PropertyPath {
    /// Longer paths are refused: each link is one more level of evaluation.
    static let maximumLength = 32

    /// The node reading the path from the record bound to the predicate variable.
    let node: QueryNode
    /// The kind of the last property, without its optional.
    let kind: PropertyKind
    /// Whether the path can read `nil`: the last property or a link on the way is optional.
    let isOptional: Bool
    /// The type that declares the last property, and its name, for error messages.
    let typeName: String
    let property: String

    private struct Step {
        let property: String
        let position: Int
        let typeName: String
        let isOptional: Bool
    }

    /// Resolves `text` against `schema`, reading linked and embedded types' schemas from `schemas`.
    ///
    /// - Throws: ``QueryError`` for a property the type does not store, an ignored one, a path
    ///   going on from a property that is not a to-one link or an embedded model, or a path
    ///   longer than ``maximumLength``.
    init(_ text: String, in schema: ObjectSchema, schemas: any SchemaSource, root: PredicateExpressions.VariableID) throws(QueryError) {
        let names = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard names.count <= Self.maximumLength else { throw QueryError(.nestingTooDeep(limit: Self.maximumLength)) }
        var steps: [Step] = []
        var current = schema
        var kind = PropertyKind.bool
        for (offset, name) in names.enumerated() {
            if offset > 0 {
                let previous = steps[offset - 1]
                guard case .object(let linked) = kind, let next = schemas.schema(named: linked) else {
                    throw QueryError(.unknownProperty(typeName: "\(previous.typeName).\(previous.property)", property: name))
                }
                current = next
            }
            if current.ignoredProperties.contains(name) {
                throw QueryError(.ignoredProperty(typeName: current.typeName, property: name))
            }
            guard let position = current.index(ofProperty: name), let property = current.property(named: name) else {
                throw QueryError(.unknownProperty(typeName: current.typeName, property: name))
            }
            kind = property.kind.unwrapped
            steps.append(Step(property: name, position: position, typeName: current.typeName, isOptional: property.kind.isOptional))
        }
        self.kind = kind
        isOptional = steps.contains(where: \.isOptional)
        typeName = current.typeName
        property = names[names.count - 1]
        node = Self.node(steps[...], base: .variable(root))
    }

    /// `base.first?.rest…`: an optional step binds its value to a fresh variable with `flatMap`,
    /// as a predicate's optional chaining does, so that `nil` stops the path. Recursion is as
    /// deep as the path, which ``maximumLength`` bounds.
    private static func node(_ steps: ArraySlice<Step>, base: QueryNode) -> QueryNode {
        guard let step = steps.first else { return base }
        let member = QueryNode.member(base, property: step.property, position: step.position, typeName: step.typeName)
        let rest = steps.dropFirst()
        guard step.isOptional, !rest.isEmpty else { return node(rest, base: member) }
        let variable = PredicateExpressions.Variable<Int>().key
        return .flatMap(member, variable, node(rest, base: .variable(variable)))
    }

    /// The condition `path <operator> value`, its value checked against the property's kind.
    ///
    /// - Throws: ``QueryError`` when the value does not fit the property, or when an ordering
    ///   operator meets a property with no order, or `nil`.
    func comparison(_ comparison: PropertyComparison, _ value: RecordValue, parsingText: Bool) throws(QueryError) -> QueryNode {
        guard let constant = queryValue(value, parsingText: parsingText) else {
            let expected = isOptional ? "\(kind)?" : kind.description
            throw QueryError(.valueMismatch(typeName: typeName, property: property, expected: expected, found: value.kindDescription))
        }
        switch comparison {
        case .equal: return .equal(node, .constant(constant))
        case .notEqual: return .notEqual(node, .constant(constant))
        case .ordered(let order):
            guard isOrdered, !constant.isNull else {
                throw QueryError(.unorderedComparison(typeName: typeName, property: property, kind: kind.description))
            }
            return .compare(node, order, .constant(constant))
        }
    }

    /// The query form of `value` compared with this path's values, or `nil` when it does not fit.
    ///
    /// Integers convert to any numeric kind that holds them exactly, as an integer literal would;
    /// doubles to `Float` as a float literal would. With `parsingText`, for conditions written as
    /// text, a string also stands for a date (ISO 8601), a UUID or a URL.
    func queryValue(_ value: RecordValue, parsingText: Bool) -> QueryValue? {
        if case .null = value { return isOptional ? .null : nil }
        let type = kind.storedValueType
        switch (kind, value) {
        case (_, .int(let number)) where type?.isUnsigned == true:
            return UInt64(exactly: number).flatMap { fitting(.uint($0)) }
        case (_, .uint(let number)) where type?.tag == .int:
            return Int64(exactly: number).flatMap { fitting(.int($0)) }
        case (.double, .int(let number)): return Double(exactly: number).map(QueryValue.double)
        case (.double, .uint(let number)): return Double(exactly: number).map(QueryValue.double)
        case (.double, .float(let number)): return .double(Double(number))
        case (.float, .int(let number)): return Float(exactly: number).map(QueryValue.float)
        case (.float, .uint(let number)): return Float(exactly: number).map(QueryValue.float)
        case (.float, .double(let number)): return .float(Float(number))
        case (.decimal, .int(let number)): return .decimal(Decimal(number))
        case (.decimal, .uint(let number)): return .decimal(Decimal(number))
        case (.date, .string(let text)) where parsingText:
            return (try? Date.ISO8601FormatStyle().parse(text)).map(QueryValue.date)
        case (.uuid, .string(let text)) where parsingText: return UUID(uuidString: text).map(QueryValue.uuid)
        case (.url, .string(let text)) where parsingText: return URL(string: text).map { .url($0.absoluteString) }
        default: return fitting(value)
        }
    }

    private func fitting(_ value: RecordValue) -> QueryValue? {
        kind.accepts(value) ? QueryValue(value) : nil
    }

    /// Whether `<`, `<=`, `>` and `>=` order this path's values as Swift orders the property's.
    var isOrdered: Bool { kind.storedValueType?.isComparable == true }
}

/// How a condition named at run time compares a property with a value.
enum PropertyComparison: Equatable {
    case equal, notEqual
    case ordered(QueryComparison)
}

extension RecordValue {
    /// The value's Swift type, for error messages: `String`, `Int`, `nil`.
    var kindDescription: String {
        switch self {
        case .null: "nil"
        case .bool: "Bool"
        case .int: "Int"
        case .uint: "UInt"
        case .float: "Float"
        case .double: "Double"
        case .string: "String"
        case .data: "Data"
        case .date: "Date"
        case .uuid: "UUID"
        case .decimal: "Decimal"
        case .url: "URL"
        case .object(let record): record.objectSchema.typeName
        case .list: "an array"
        case .dictionary: "a dictionary"
        }
    }
}

extension PropertyKind {
    /// The kind without its optional.
    var unwrapped: PropertyKind {
        if case .optional(let wrapped) = self { return wrapped.unwrapped }
        return self
    }
}
