import Foundation
import MirrorStoreEngine

/// A predicate as the store evaluates it on encoded records: Foundation's `#Predicate`
/// expression tree, translated once per query into nodes the store understands. A part it does
/// not understand becomes ``unknown``, and a record whose outcome depends on it is decided by
/// evaluating the original predicate on the decoded model.
///
/// Only the cases that hold nodes are indirect: constants and variables, the leaves of every
/// condition, are kept in place instead of in an object each.
enum QueryNode: Sendable {
    case constant(QueryValue)
    /// The value bound to a predicate variable: the model itself, or a closure's argument.
    case variable(PredicateExpressions.VariableID)
    /// A stored property of a record value, at its position in that type's schema.
    indirect case member(QueryNode, property: String, position: Int, typeName: String)
    indirect case count(QueryNode)
    indirect case isEmpty(QueryNode)
    indirect case equal(QueryNode, QueryNode)
    /// `==` of two sets (or optional sets): the same elements, whatever order each lists them in.
    indirect case sameElements(QueryNode, QueryNode)
    indirect case notEqual(QueryNode, QueryNode)
    indirect case compare(QueryNode, QueryComparison, QueryNode)
    indirect case and(QueryNode, QueryNode)
    indirect case or(QueryNode, QueryNode)
    indirect case not(QueryNode)
    /// `wrapped.flatMap { variable in transform }`.
    indirect case flatMap(QueryNode, PredicateExpressions.VariableID, QueryNode)
    indirect case nilCoalesce(QueryNode, QueryNode)
    indirect case forceUnwrap(QueryNode)
    /// `sequence.contains(element)`.
    indirect case contains(QueryNode, QueryNode)
    /// `sequence.contains { variable in test }`.
    indirect case containsWhere(QueryNode, PredicateExpressions.VariableID, QueryNode)
    /// `sequence.allSatisfy { variable in test }`.
    indirect case allSatisfy(QueryNode, PredicateExpressions.VariableID, QueryNode)
    /// `array.filter { variable in test }`: the elements `test` holds for, in order.
    indirect case filter(QueryNode, PredicateExpressions.VariableID, QueryNode)
    /// `array[index]`.
    indirect case element(QueryNode, QueryNode)
    /// `dictionary[key]`, or `dictionary[key, default: value]`.
    indirect case lookup(QueryNode, QueryNode, default: QueryNode?)
    /// `dictionary[key]` of a dictionary of optionals: a double optional, whose `.some(nil)`
    /// (the key holds `nil`) no query value tells from `nil` (the key is absent), so only the
    /// model decides a record where it is met.
    indirect case optionalLookup(QueryNode, QueryNode)
    /// `array.max()` (`isMaximum`) or `array.min()`.
    indirect case extreme(QueryNode, isMaximum: Bool)
    /// `string.starts(with: prefix)`.
    indirect case startsWith(QueryNode, QueryNode)
    /// `string.contains(other)`.
    indirect case containsText(QueryNode, QueryNode)
    /// The string `text` folded as `options` ask (``TextFolding``): what a ``TextMatch`` compares.
    indirect case folded(QueryNode, TextOptions)
    /// `lower...upper` or `lower..<upper`.
    indirect case range(lower: QueryNode, upper: QueryNode, isClosed: Bool)
    /// `range.contains(element)`.
    indirect case inRange(QueryNode, QueryNode)
    /// `test ? then : otherwise`.
    indirect case conditional(QueryNode, QueryNode, QueryNode)
    /// `lhs op rhs` on numbers of one type, as Swift computes it (see ``QueryNumber``); made
    /// through ``arithmetic(_:_:_:_:)``, which computes constants at once.
    indirect case compute(QueryNode, ArithmeticOperation, QueryNode, QueryNumber)
    /// `-value`; made through ``negation(_:_:)``.
    indirect case negate(QueryNode, QueryNumber)
    /// `lhs op rhs` on `Decimal`s, with Foundation's operators (see ``DecimalArithmetic``);
    /// made through ``decimalArithmetic(_:_:_:)``.
    indirect case decimalCompute(QueryNode, ArithmeticOperation, QueryNode)
    /// `-value` of a `Decimal`; made through ``decimalNegation(_:)``.
    indirect case decimalNegate(QueryNode)
    /// A key path on a raw-value enum applied to the enum made from the stored raw value
    /// (``EnumKeyPath``).
    indirect case enumProperty(QueryNode, EnumKeyPath.Mapping)
    /// Something only the model can answer.
    case unknown

    /// The names of the stored properties this node reads directly from the record bound to
    /// `variable`: the only ones a projection of that record must decode.
    func properties(readFrom variable: PredicateExpressions.VariableID) -> Set<String> {
        var names = Set<String>()
        collectProperties(of: variable, into: &names)
        return names
    }

    private func collectProperties(of variable: PredicateExpressions.VariableID, into names: inout Set<String>) {
        if case .member(.variable(let bound), let property, _, _) = self, bound == variable {
            names.insert(property)
        }
        for child in children { child.collectProperties(of: variable, into: &names) }
    }

    private var children: [QueryNode] {
        switch self {
        case .constant, .variable, .unknown: []
        case .member(let base, _, _, _), .count(let base), .isEmpty(let base), .not(let base), .forceUnwrap(let base),
             .negate(let base, _), .extreme(let base, _), .folded(let base, _), .enumProperty(let base, _), .decimalNegate(let base):
            [base]
        case .equal(let a, let b), .sameElements(let a, let b), .notEqual(let a, let b), .compare(let a, _, let b), .and(let a, let b), .or(let a, let b),
             .nilCoalesce(let a, let b), .contains(let a, let b), .startsWith(let a, let b), .containsText(let a, let b),
             .inRange(let a, let b), .flatMap(let a, _, let b), .containsWhere(let a, _, let b), .allSatisfy(let a, _, let b),
             .compute(let a, _, let b, _), .decimalCompute(let a, _, let b), .filter(let a, _, let b), .element(let a, let b), .optionalLookup(let a, let b):
            [a, b]
        case .range(let a, let b, _): [a, b]
        case .conditional(let a, let b, let c): [a, b, c]
        case .lookup(let a, let b, let c): [a, b] + (c.map { [$0] } ?? [])
        }
    }

    /// Whether the node can be decided without the model for every record.
    var isFullyTranslated: Bool {
        switch self {
        case .unknown: false
        // Leaves and the usual shapes of a condition without making a list of children, which
        // is an allocation per node of every query.
        case .constant, .variable: true
        case .member(let base, _, _, _), .not(let base), .folded(let base, _): base.isFullyTranslated
        case .equal(let a, let b), .notEqual(let a, let b), .compare(let a, _, let b), .and(let a, let b), .or(let a, let b),
             .startsWith(let a, let b):
            a.isFullyTranslated && b.isFullyTranslated
        default: children.allSatisfy(\.isFullyTranslated)
        }
    }

    /// Whether Swift's evaluation of the node may throw: it holds a part only the model answers,
    /// an array subscript (out of bounds), a force unwrap, a half-open range whose bounds may be the wrong
    /// way round, or integer arithmetic (which traps in Swift where the store throws). Objects
    /// must then reach it as they would in Swift.
    var mayThrow: Bool {
        switch self {
        case .unknown, .forceUnwrap, .element: true
        case .compute(_, _, _, let number) where number.isInteger: true
        case .negate(_, let number) where number.isInteger: true
        case .range(.constant(let lower), .constant(let upper), let isClosed):
            ConditionEvaluator.isBackwardsRange(lower, upper, isClosed: isClosed)
        case .range(_, _, isClosed: false): true
        // Leaves and the usual shapes of a condition without making a list of children, which
        // is an allocation per node of every query.
        case .constant, .variable: false
        case .member(let base, _, _, _), .not(let base), .folded(let base, _): base.mayThrow
        case .equal(let a, let b), .notEqual(let a, let b), .compare(let a, _, let b), .and(let a, let b), .or(let a, let b),
             .startsWith(let a, let b):
            a.mayThrow || b.mayThrow
        default: children.contains(where: \.mayThrow)
        }
    }

    /// Whether the node is a chain of `&&`, with more than one conjunct.
    var isConjunction: Bool {
        if case .and = self { return true }
        return false
    }

    /// The conjuncts of a chain of `&&`.
    var conjuncts: [QueryNode] {
        var conjuncts: [QueryNode] = []
        forEachConjunct { conjuncts.append($0) }
        return conjuncts
    }

    /// Calls `body` with each conjunct of a chain of `&&`, in order.
    func forEachConjunct(_ body: (QueryNode) -> Void) {
        if case .and(let lhs, let rhs) = self {
            lhs.forEachConjunct(body)
            rhs.forEachConjunct(body)
        } else {
            body(self)
        }
    }
}

/// The four orderings a predicate's `Comparison` can ask for.
enum QueryComparison: Sendable {
    case lessThan, lessThanOrEqual, greaterThan, greaterThanOrEqual

    func holds(_ order: ComparisonResult) -> Bool {
        switch self {
        case .lessThan: order == .orderedAscending
        case .lessThanOrEqual: order != .orderedDescending
        case .greaterThan: order == .orderedDescending
        case .greaterThanOrEqual: order != .orderedAscending
        }
    }

    /// The same test with its operands swapped: `c < x` is `x > c`.
    var mirrored: QueryComparison {
        switch self {
        case .lessThan: .greaterThan
        case .lessThanOrEqual: .greaterThanOrEqual
        case .greaterThan: .lessThan
        case .greaterThanOrEqual: .lessThanOrEqual
        }
    }
}
