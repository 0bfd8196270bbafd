import Foundation
import MirrorStoreEngine

/// Turns a Foundation `Predicate` into a ``QueryNode`` tree: each expression type of
/// `PredicateExpressions` the store understands conforms to ``QueryTranslatable``; anything
/// else becomes ``QueryNode/unknown`` and is answered on the decoded model.
struct PredicateTranslator {
    let registry: ModelRegistry

    /// The translated tree of `predicate`, and the variable that stands for the model.
    func translate<Model: Persistable>(_ predicate: Predicate<Model>) throws -> (node: QueryNode, root: PredicateExpressions.VariableID) {
        (try node(for: predicate.expression), predicate.variable.key)
    }

    /// Generic, not over `Any`: casting a value of a known type skips boxing it into an `Any`
    /// and opening that box again, once per node of every predicate.
    func node<Expression>(for expression: Expression) throws -> QueryNode {
        guard let translatable = expression as? any QueryTranslatable else { return .unknown }
        return try translatable.queryNode(self)
    }

    /// A property read through `keyPath` on a value of `rootType`.
    func member(of base: QueryNode, rootType: Any.Type, keyPath: AnyKeyPath) throws -> QueryNode {
        // Found by the type's identity: its stored name costs a `String(describing:)` each time.
        if let plan = registry.plan(ofType: rootType) {
            guard let name = KeyPathNames.propertyName(of: keyPath, rootType: rootType) else { return .unknown }
            let schema = plan.schema
            if schema.ignoredProperties.contains(name) {
                throw QueryError(.ignoredProperty(typeName: plan.typeName, property: name))
            }
            guard let position = schema.index(ofProperty: name) else { return .unknown }
            return .member(base, property: name, position: position, typeName: plan.typeName)
        }
        if let container = rootType as? any CountedContainer.Type {
            switch container.member(keyPath) {
            case .count?: return .count(base)
            case .isEmpty?: return .isEmpty(base)
            case nil: break
            }
        }
        return .unknown
    }
}

/// The containers whose `count` and `isEmpty` a query reads from records. Each names its own
/// key paths: the ones a predicate holds are the concrete type's, which a generic
/// `\Collection.count` is not equal to.
protocol CountedContainer {
    static func member(_ keyPath: AnyKeyPath) -> ContainerMember?
}

enum ContainerMember {
    case count, isEmpty
}

extension String: CountedContainer {
    static func member(_ keyPath: AnyKeyPath) -> ContainerMember? {
        keyPath == \String.count ? .count : keyPath == \String.isEmpty ? .isEmpty : nil
    }
}

extension Array: CountedContainer {
    static func member(_ keyPath: AnyKeyPath) -> ContainerMember? {
        keyPath == \Array.count ? .count : keyPath == \Array.isEmpty ? .isEmpty : nil
    }
}

extension Set: CountedContainer {
    static func member(_ keyPath: AnyKeyPath) -> ContainerMember? {
        keyPath == \Set.count ? .count : keyPath == \Set.isEmpty ? .isEmpty : nil
    }
}

/// An expression the store can translate.
protocol QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode
    /// The value a predicate captured, for a `Value` expression: a key path applied to it is a
    /// constant. A requirement, so one cast of an expression answers both questions.
    var captured: Any? { get }
}

extension QueryTranslatable {
    var captured: Any? { nil }
}

/// Property names of key paths, read from their debug description (`\Hero.name`), which the
/// toolchain builds from the same field metadata the mapper uses. Only a key path of exactly one
/// stored property of `rootType` has a name here: a computed property or a longer path has none,
/// and is answered on the model.
enum KeyPathNames {
    /// Names already found: the debug description is built anew on every call, and was a quarter
    /// of a query that reads one object by an index. Programs use a few key paths many times; the
    /// cache starts over should one build key paths without end.
    private static let known = Lock<[Entry: String?]>([:])
    private static let capacity = 4_096

    private struct Entry: Hashable, @unchecked Sendable {
        // @unchecked: key paths are immutable values; this one is only hashed and compared.
        let keyPath: AnyKeyPath
        let root: ObjectIdentifier
    }

    static func propertyName(of keyPath: AnyKeyPath, rootType: Any.Type) -> String? {
        let entry = Entry(keyPath: keyPath, root: ObjectIdentifier(rootType))
        if let name = known.withLock({ $0[entry] }) { return name }
        let name = describedName(of: keyPath, rootType: rootType)
        known.withLock { known in
            if known.count >= capacity { known.removeAll() }
            known[entry] = name
        }
        return name
    }

    private static func describedName(of keyPath: AnyKeyPath, rootType: Any.Type) -> String? {
        let text = keyPath.debugDescription
        let prefix = "\\" + String(describing: rootType) + "."
        guard text.hasPrefix(prefix) else { return nil }
        let name = text.dropFirst(prefix.count)
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { return nil }
        return String(name)
    }
}

extension PredicateExpressions.Value: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode {
        QueryValue(constant: value).map(QueryNode.constant) ?? .unknown
    }
}

extension PredicateExpressions.Value {
    var captured: Any? { value }
}

extension PredicateExpressions.NilLiteral: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode { .constant(.null) }
}

extension PredicateExpressions.Variable: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode { .variable(key) }
}

extension PredicateExpressions.KeyPath: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode {
        // `expected.email` of a captured `expected` is a constant: the planner can use it.
        guard let translatable = root as? any QueryTranslatable else {
            return try translator.member(of: .unknown, rootType: Root.Output.self, keyPath: keyPath)
        }
        if let base = translatable.captured as? Root.Output, let constant = QueryValue(constant: base[keyPath: keyPath]) {
            return .constant(constant)
        }
        return try translator.member(of: translatable.queryNode(translator), rootType: Root.Output.self, keyPath: keyPath)
    }
}

extension PredicateExpressions.Equal: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode {
        .equal(try translator.node(for: lhs), try translator.node(for: rhs))
    }
}

extension PredicateExpressions.NotEqual: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode {
        .notEqual(try translator.node(for: lhs), try translator.node(for: rhs))
    }
}

extension PredicateExpressions.Comparison: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode {
        let comparison: QueryComparison = switch op {
        case .lessThan: .lessThan
        case .lessThanOrEqual: .lessThanOrEqual
        case .greaterThan: .greaterThan
        case .greaterThanOrEqual: .greaterThanOrEqual
        @unknown default: .lessThan
        }
        return .compare(try translator.node(for: lhs), comparison, try translator.node(for: rhs))
    }
}

extension PredicateExpressions.Conjunction: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode {
        .and(try translator.node(for: lhs), try translator.node(for: rhs))
    }
}

extension PredicateExpressions.Disjunction: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode {
        .or(try translator.node(for: lhs), try translator.node(for: rhs))
    }
}

extension PredicateExpressions.Negation: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode {
        .not(try translator.node(for: wrapped))
    }
}

extension PredicateExpressions.OptionalFlatMap: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode {
        .flatMap(try translator.node(for: wrapped), variable.key, try translator.node(for: transform))
    }
}

extension PredicateExpressions.NilCoalesce: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode {
        .nilCoalesce(try translator.node(for: lhs), try translator.node(for: rhs))
    }
}

extension PredicateExpressions.ForcedUnwrap: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode {
        .forceUnwrap(try translator.node(for: inner))
    }
}

extension PredicateExpressions.SequenceContains: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode {
        .contains(try translator.node(for: sequence), try translator.node(for: element))
    }
}

extension PredicateExpressions.SequenceContainsWhere: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode {
        .containsWhere(try translator.node(for: sequence), variable.key, try translator.node(for: test))
    }
}

extension PredicateExpressions.SequenceAllSatisfy: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode {
        .allSatisfy(try translator.node(for: sequence), variable.key, try translator.node(for: test))
    }
}

extension PredicateExpressions.SequenceStartsWith: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode {
        .startsWith(try translator.node(for: base), try translator.node(for: prefix))
    }
}

extension PredicateExpressions.CollectionContainsCollection: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode {
        .containsText(try translator.node(for: base), try translator.node(for: other))
    }
}

extension PredicateExpressions.ClosedRange: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode {
        .range(lower: try translator.node(for: lower), upper: try translator.node(for: upper), isClosed: true)
    }
}

extension PredicateExpressions.Range: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode {
        .range(lower: try translator.node(for: lower), upper: try translator.node(for: upper), isClosed: false)
    }
}

extension PredicateExpressions.RangeExpressionContains: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode {
        .inRange(try translator.node(for: range), try translator.node(for: element))
    }
}

extension PredicateExpressions.Conditional: QueryTranslatable {
    func queryNode(_ translator: PredicateTranslator) throws -> QueryNode {
        .conditional(try translator.node(for: test), try translator.node(for: trueBranch), try translator.node(for: falseBranch))
    }
}
