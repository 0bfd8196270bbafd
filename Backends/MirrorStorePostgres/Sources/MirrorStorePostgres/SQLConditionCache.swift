import Foundation
import MirrorStore
import Synchronization

/// The SQL conditions of query trees by shape, so that a query repeated with other constants
/// (`$0.category == c` for each `c`) binds its constants without spelling the SQL again.
///
/// A shape is the tree with each constant replaced by what the translation reads of it besides
/// its value: its kind, and whether it is `true` (a `Bool`), NaN (a number or a date), holds a NUL
/// (a string), or does not parse (a URL); a range also keeps whether its bounds are in order.
/// Given those, ``SQLConditionTranslator`` spells the same text and binds the same constants as
/// the same types, so the entry of a shape says which constant (by its place among the tree's
/// constants) each parameter binds. That is learnt from a translation whose bound values each
/// match exactly one constant; a tree whose values leave a doubt is translated and not kept.
///
/// Entries are kept with the ``DatabaseMapping`` they were spelled for: a store opened again, or
/// after a migration, has a mapping of its own and starts with none.
final class SQLConditionCache: Sendable {
    /// What trees of one shape translate to.
    private struct Entry: Sendable {
        let text: String?
        let isExact: Bool
        /// For each parameter, in order: the constant it binds and its type.
        let parameters: [(constant: Int, type: ScalarType)]
    }

    /// A tree's shape, for one table.
    struct Shape: Hashable, Sendable {
        let typeName: String
        fileprivate(set) var tokens: [Token] = []
    }

    /// One node of a shape, in pre-order.
    enum Token: Hashable, Sendable {
        case node(UInt8)
        case compare(QueryComparisonOperator)
        /// A range: closed or not, and whether SQL may compare with it (its bounds are constants in order).
        case range(isClosed: Bool, isOrdered: Bool)
        case property([String])
        case constant(kind: UInt8, flag: Bool)
    }

    private let entries = Mutex<[Shape: Entry]>([:])
    /// The most shapes kept; others are translated each time.
    static let capacity = 512

    /// How many shapes are kept.
    var shapeCount: Int { entries.withLock { $0.count } }

    /// The SQL condition of `expression` on `translator`'s table and its parameters, numbered
    /// from `$1`: what ``SQLConditionTranslator/condition(_:_:)`` gives on empty parameters.
    func condition(_ expression: QueryExpression, translator: SQLConditionTranslator) throws -> (SQLCondition?, SQLParameters) {
        var shape = Shape(typeName: translator.table.typeName)
        var constants: [QueryConstant] = []
        Self.walk(expression, into: &shape, constants: &constants)
        var parameters = SQLParameters()
        if let entry = entries.withLock({ $0[shape] }) {
            // Every constant is of the kind the entry was learnt with: it converts as it did.
            for parameter in entry.parameters {
                guard let value = Self.boundValue(constants[parameter.constant], type: parameter.type) else {
                    return try translate(expression, translator: translator)
                }
                _ = try parameters.add(value, type: parameter.type)
            }
            return (entry.text.map { SQLCondition(text: $0, isExact: entry.isExact) }, parameters)
        }
        let (condition, translated) = try translate(expression, translator: translator)
        // Only parameters the translation bound through `add(_:type:)` can be placed.
        guard translated.bound.count == translated.count else { return (condition, translated) }
        var places: [(constant: Int, type: ScalarType)] = []
        for bound in translated.bound {
            let matching = constants.indices.filter { Self.boundValue(constants[$0], type: bound.type) == bound.value }
            guard matching.count == 1 else { return (condition, translated) }
            places.append((matching[0], bound.type))
        }
        let entry = Entry(text: condition?.text, isExact: condition?.isExact ?? false, parameters: places)
        entries.withLock { entries in
            if entries.count < Self.capacity { entries[shape] = entry }
        }
        return (condition, translated)
    }

    private func translate(_ expression: QueryExpression, translator: SQLConditionTranslator) throws -> (SQLCondition?, SQLParameters) {
        var parameters = SQLParameters()
        let condition = try translator.condition(expression, &parameters)
        return (condition, parameters)
    }

    /// The value the translation binds for `constant` as a `type`, as it converts it.
    static func boundValue(_ constant: QueryConstant, type: ScalarType) -> RecordValue? {
        if let value = SQLConditionTranslator.recordValue(constant, for: type) { return value }
        // `starts(with:)` and `contains` on text bind the string as it is.
        if type == .text, case .string(let text) = constant { return .string(text) }
        return nil
    }

    /// Appends the shape of `expression` to `shape` and its constants to `constants`, in pre-order.
    static func walk(_ expression: QueryExpression, into shape: inout Shape, constants: inout [QueryConstant]) {
        func node(_ tag: UInt8, _ children: QueryExpression...) {
            shape.tokens.append(.node(tag))
            for child in children { walk(child, into: &shape, constants: &constants) }
        }
        switch expression {
        case .constant(let constant):
            shape.tokens.append(trait(of: constant))
            constants.append(constant)
        case .property(let path): shape.tokens.append(.property(path))
        case .equal(let a, let b): node(1, a, b)
        case .notEqual(let a, let b): node(2, a, b)
        case .compare(let a, let op, let b):
            shape.tokens.append(.compare(op))
            walk(a, into: &shape, constants: &constants)
            walk(b, into: &shape, constants: &constants)
        case .and(let a, let b): node(3, a, b)
        case .or(let a, let b): node(4, a, b)
        case .not(let a): node(5, a)
        case .nilCoalesce(let a, let b): node(6, a, b)
        case .startsWith(let a, let b): node(7, a, b)
        case .containsText(let a, let b): node(8, a, b)
        case .contains(let a, let b): node(9, a, b)
        case .count(let a): node(10, a)
        case .isEmpty(let a): node(11, a)
        case .inRange(let value, let lower, let upper, let isClosed):
            var isOrdered = false
            if case .constant(let low) = lower, case .constant(let high) = upper {
                isOrdered = SQLConditionTranslator.precedes(low, high) == true
            }
            shape.tokens.append(.range(isClosed: isClosed, isOrdered: isOrdered))
            walk(value, into: &shape, constants: &constants)
            walk(lower, into: &shape, constants: &constants)
            walk(upper, into: &shape, constants: &constants)
        case .other: shape.tokens.append(.node(0))
        }
    }

    /// What the translation reads of `constant` besides its value.
    private static func trait(of constant: QueryConstant) -> Token {
        switch constant {
        case .null: .constant(kind: 0, flag: false)
        case .bool(let value): .constant(kind: 1, flag: value)
        case .int: .constant(kind: 2, flag: false)
        case .uint: .constant(kind: 3, flag: false)
        case .float(let value): .constant(kind: 4, flag: value.isNaN)
        case .double(let value): .constant(kind: 5, flag: value.isNaN)
        case .string(let value): .constant(kind: 6, flag: value.utf8.contains(0))
        case .data: .constant(kind: 7, flag: false)
        case .date(let value): .constant(kind: 8, flag: value.timeIntervalSinceReferenceDate.isNaN)
        case .uuid: .constant(kind: 9, flag: false)
        case .decimal(let value): .constant(kind: 10, flag: value.isNaN)
        case .url(let value): .constant(kind: 11, flag: URL(string: value) == nil)
        }
    }
}
