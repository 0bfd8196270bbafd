import Foundation
import MirrorStoreEngine

/// Turns a Foundation `Predicate` into a ``QueryNode`` tree: each expression type of
/// `PredicateExpressions` the store understands conforms to ``QueryTranslatable``; anything
/// else becomes ``QueryNode/unknown`` and is answered on the decoded model.
///
/// A predicate's expression type is its whole shape (`$0.email == email` is an `Equal` of a
/// `KeyPath` and a `Value`), and a program has few of them. So each shape is compiled once into
/// a ``Translation`` (see ``Translations``) that knows its children's translations; translating a
/// predicate then runs that over its values, with no dynamic cast per node, which cost more than
/// a third of a lookup by an indexed value.
struct PredicateTranslator {
    let registry: ModelRegistry

    /// The translated tree of `predicate`, and the variable that stands for the model.
    func translate<Model: Persistable>(_ predicate: Predicate<Model>) throws -> (node: QueryNode, root: PredicateExpressions.VariableID) {
        (try translate(predicate.expression), predicate.variable.key)
    }

    /// The translated tree of a predicate's expression.
    func translate(_ expression: any StandardPredicateExpression<Bool>) throws -> QueryNode {
        try node(for: expression)
    }

    private func node<Expression>(for expression: Expression) throws -> QueryNode {
        let translation = Translations.compiled(for: Expression.self)
        return try withUnsafePointer(to: expression) { try translation(UnsafeRawPointer($0), self) }
    }

    /// A property read through `keyPath` on a value of `rootType`; `memo` remembers the last
    /// property found at one place in a predicate's shape.
    func member(of base: QueryNode, rootType: Any.Type, keyPath: AnyKeyPath, memo: MemberMemo) throws -> QueryNode {
        // Found by the type's identity: its stored name costs a `String(describing:)` each time.
        if let plan = registry.plan(ofType: rootType) {
            if let known = memo.member(keyPath: keyPath, plan: plan) {
                return .member(base, property: known.name, position: known.position, typeName: plan.typeName)
            }
            guard let name = KeyPathNames.propertyName(of: keyPath, rootType: rootType) else { return .unknown }
            let schema = plan.schema
            if schema.ignoredProperties.contains(name) {
                throw QueryError(.ignoredProperty(typeName: plan.typeName, property: name))
            }
            guard let position = schema.index(ofProperty: name) else { return .unknown }
            memo.remember(keyPath: keyPath, plan: plan, name: name, position: position)
            return .member(base, property: name, position: position, typeName: plan.typeName)
        }
        if let container = rootType as? any CountedContainer.Type {
            switch container.member(keyPath) {
            case .count?: return .count(base)
            case .isEmpty?: return .isEmpty(base)
            case nil: break
            }
        }
        switch EnumKeyPath.reading(keyPath, on: rootType) {
        case .rawValue?: return base
        case .mapped(let mapping)?: return .enumProperty(base, mapping)
        case nil: return .unknown
        }
    }
}

/// How to translate the values of one expression type, made once per type and then run for
/// each predicate of that shape. It reads the expression where it lies, through a pointer: its
/// operands are found at offsets measured when the translation is made, so running it copies no
/// expression and asks the runtime for no type metadata.
typealias Translation = (UnsafeRawPointer, PredicateTranslator) throws -> QueryNode

/// The translation of each expression type met so far.
enum Translations {
    private struct Compiled: @unchecked Sendable {
        // @unchecked: a translation captures only metatypes, offsets, key paths, other
        // translations and a `MemberMemo`, none of which changes after it is made but behind
        // its own lock.
        let run: Translation
    }

    /// Keyed by type: a program has a bounded number of expression types, each compiled once.
    /// The last one asked for is kept apart as well: a program runs the same shape many times
    /// in a row, which is then found without hashing the type.
    private static let known = Lock<Known>(Known())

    private struct Known {
        var last: (type: ObjectIdentifier, compiled: Compiled)?
        var byType: [ObjectIdentifier: Compiled] = [:]
    }

    /// The translation of a whole predicate's expression type, compiled on first use.
    static func compiled<Expression>(for type: Expression.Type) -> Translation {
        let key = ObjectIdentifier(type)
        let found = known.withLock { known -> Compiled? in
            if let last = known.last, last.type == key { return last.compiled }
            guard let compiled = known.byType[key] else { return nil }
            known.last = (key, compiled)
            return compiled
        }
        if let found { return found.run }
        let translation = translation(for: type)
        known.withLock { known in
            known.byType[key] = Compiled(run: translation)
            known.last = (key, Compiled(run: translation))
        }
        return translation
    }

    /// The translation of `type`'s values: ``QueryNode/unknown`` for a type the store does not
    /// understand.
    static func translation<Expression>(for type: Expression.Type) -> Translation {
        guard let translatable = type as? any QueryTranslatable.Type else { return { _, _ in .unknown } }
        return translatable.makeTranslation()
    }

    /// The translation of the operand `field` of a `Parent` expression, run on the operand in
    /// place.
    static func operand<Parent, Child>(_ field: KeyPath<Parent, Child>) -> Translation {
        let translation = translation(for: Child.self)
        guard let offset = MemoryLayout<Parent>.offset(of: field) else {
            // An operand that is not a stored property in place (Foundation's are): a copy.
            return { parent, translator in
                try withUnsafePointer(to: parent.assumingMemoryBound(to: Parent.self).pointee[keyPath: field]) {
                    try translation(UnsafeRawPointer($0), translator)
                }
            }
        }
        return { parent, translator in try translation(parent + offset, translator) }
    }

    /// Reads the key path `field` of a `Parent` expression as an `AnyKeyPath`, a reference read
    /// in place with no generic type metadata.
    static func keyPathReader<Parent, Child: AnyKeyPath>(_ field: KeyPath<Parent, Child>) -> (UnsafeRawPointer) -> AnyKeyPath {
        guard let offset = MemoryLayout<Parent>.offset(of: field) else {
            let read = reader(field)
            return { read($0) }
        }
        return anyKeyPath(at: offset)
    }

    /// Not generic, so that the closure it makes has no generic context to look types up in.
    private static func anyKeyPath(at offset: Int) -> (UnsafeRawPointer) -> AnyKeyPath {
        { ($0 + offset).load(as: AnyKeyPath.self) }
    }

    /// The translation of a `PredicateExpressions.Variable` whose key lies at `offset`; not
    /// generic, for the same reason.
    static func variable(at offset: Int) -> Translation {
        { expression, _ in .variable((expression + offset).load(as: PredicateExpressions.VariableID.self)) }
    }

    /// Reads the value `field` of a `Parent` expression.
    static func reader<Parent, Child>(_ field: KeyPath<Parent, Child>) -> (UnsafeRawPointer) -> Child {
        guard let offset = MemoryLayout<Parent>.offset(of: field) else {
            return { $0.assumingMemoryBound(to: Parent.self).pointee[keyPath: field] }
        }
        return { ($0 + offset).assumingMemoryBound(to: Child.self).pointee }
    }
}

/// The property the last key path seen at one place of a predicate's shape names: finding it
/// anew costs a search by key path and another by name. Key path literals are made once per
/// place in a program, so the same object comes back query after query.
final class MemberMemo: Sendable {
    struct Member {
        let name: String
        let position: Int
    }

    /// A class, so that reading it under the lock copies one reference rather than its parts.
    private final class Known: @unchecked Sendable {
        // @unchecked: key paths are immutable; this one is only compared by identity.
        let keyPath: AnyKeyPath
        let plan: TypePlan
        let member: Member

        init(keyPath: AnyKeyPath, plan: TypePlan, member: Member) {
            self.keyPath = keyPath
            self.plan = plan
            self.member = member
        }
    }

    private let last = Lock<Known?>(nil)

    func member(keyPath: AnyKeyPath, plan: TypePlan) -> Member? {
        guard let known = last.withLock({ $0 }), known.keyPath === keyPath, known.plan === plan else { return nil }
        return known.member
    }

    func remember(keyPath: AnyKeyPath, plan: TypePlan, name: String, position: Int) {
        last.withLock { $0 = Known(keyPath: keyPath, plan: plan, member: Member(name: name, position: position)) }
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

/// Ranges a predicate captures whole (`let adults = 18...64`, then `adults.contains($0.age)`):
/// their bounds are constants, as in a range the predicate writes out.
protocol CapturedRange {
    var translation: QueryNode { get }
}

extension ClosedRange: CapturedRange {
    var translation: QueryNode { Self.range(lowerBound, upperBound, isClosed: true) }
}

extension Range: CapturedRange {
    var translation: QueryNode { Self.range(lowerBound, upperBound, isClosed: false) }
}

extension RangeExpression {
    /// `lower...upper` or `lower..<upper` of constants; ``QueryNode/unknown`` for bounds with no
    /// record form or an order of their own (see ``OwnOrder``), which the models decide.
    fileprivate static func range(_ lower: Bound, _ upper: Bound, isClosed: Bool) -> QueryNode {
        guard !OwnOrder.applies(to: Bound.self), let lower = QueryValue(constant: lower), let upper = QueryValue(constant: upper) else {
            return .unknown
        }
        return .range(lower: .constant(lower), upper: .constant(upper), isClosed: isClosed)
    }
}

/// Arrays: a record lists their elements in the model's own order, so a position in one, what
/// `filter` keeps and which of equal elements `max()` returns are the model's. (A set's stored
/// order need not be the order the model's set iterates in.)
protocol ListedInOrder {}

extension Array: ListedInOrder {}

/// Collections whose `==` ignores the order they list their elements in. Their values reach a
/// query as lists in that order (a set's depends on its capacity and history), so `==` on them
/// becomes ``QueryNode/sameElements(_:_:)``.
protocol UnorderedCollection {}

extension Set: UnorderedCollection {}

extension Optional: UnorderedCollection where Wrapped: UnorderedCollection {}

/// Types a query cannot order by what the store keeps of them: a type stored by its raw value
/// (an enum) that is `Comparable`. Swift synthesizes no `Comparable` for raw-value enums, so the
/// app wrote its `<` (`low < medium < high`), which raw values need not follow. Comparisons and
/// sorts of such values are decided on the models, with that `<`.
enum OwnOrder {
    static func applies(to type: Any.Type) -> Bool {
        // Primitives first: the common case, answered by one conformance check (an optional
        // primitive is one too, and its wrapped type has no order of its own).
        if type is any RecordPrimitive.Type { return false }
        if let optional = type as? any OptionalType.Type { return applies(to: optional.wrappedType) }
        return type is any RawRepresentable.Type && type is any Comparable.Type
    }
}

private protocol OptionalType {
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalType {
    fileprivate static var wrappedType: Any.Type { Wrapped.self }
}

/// An expression the store can translate.
protocol QueryTranslatable {
    /// How to translate any value of this type, made once (``Translations``): it finds its
    /// operands' translations here, not per value.
    static func makeTranslation() -> Translation
}

/// Property names of key paths, read from their debug description (`\Hero.name`), which the
/// toolchain builds from the same field metadata the mapper uses. Only a key path of exactly one
/// stored property of `rootType` has a name here: a computed property or a longer path has none,
/// and is answered on the model.
enum KeyPathNames {
    /// Names already found: the debug description is built anew on every call, and was a quarter
    /// of a query that reads one object by an index. Programs use a few key paths many times; the
    /// cache starts over should one build key paths without end.
    ///
    /// Found first by the key path's identity: the runtime makes a key path literal once and
    /// hands out that object each time, and hashing and comparing a key path's components cost
    /// as much as the rest of planning a sort. A key path built at run time (appended, say) is a
    /// new object each time and is found by its value.
    private static let known = Lock<Known>(Known())
    private static let capacity = 4_096

    private struct Known {
        var byIdentity: [Identity: (entry: Entry, name: String?)] = [:]
        var byValue: [Entry: String?] = [:]
    }

    private struct Identity: Hashable {
        let keyPath: ObjectIdentifier
        let root: ObjectIdentifier
    }

    private struct Entry: Hashable, @unchecked Sendable {
        // @unchecked: key paths are immutable values; this one is only hashed and compared.
        let keyPath: AnyKeyPath
        let root: ObjectIdentifier
    }

    static func propertyName(of keyPath: AnyKeyPath, rootType: Any.Type) -> String? {
        let root = ObjectIdentifier(rootType)
        let identity = Identity(keyPath: ObjectIdentifier(keyPath), root: root)
        // The cache holds the key paths it names, so an identity it holds is not reused.
        if let kept = known.withLock({ $0.byIdentity[identity] }), kept.entry.keyPath === keyPath { return kept.name }
        let entry = Entry(keyPath: keyPath, root: root)
        let name = known.withLock({ $0.byValue[entry] }) ?? describedName(of: keyPath, rootType: rootType)
        known.withLock { known in
            if known.byIdentity.count >= capacity || known.byValue.count >= capacity {
                known.byIdentity.removeAll()
                known.byValue.removeAll()
            }
            known.byIdentity[identity] = (entry, name)
            known.byValue[entry] = name
        }
        return name
    }

    /// How an error names a key path that names no stored property: its text after the root
    /// type, or "a computed property" for one Swift does not name at run time.
    static func errorName(of keyPath: AnyKeyPath, rootType: Any.Type) -> String {
        let text = path(of: keyPath, rootType: rootType).map(String.init) ?? keyPath.debugDescription
        return text.contains("<computed") ? "a computed property" : text
    }

    /// `\Hero.publisher?.name` as `publisher.name`: the key path's components, optional
    /// chaining and force-unwrapping dropped (a `nil` link reads `nil` either way); `nil` for a
    /// key path that is not a chain of property names (a subscript, a computed property).
    static func dottedPath(of keyPath: AnyKeyPath, rootType: Any.Type) -> String? {
        guard let path = path(of: keyPath, rootType: rootType)?.filter({ $0 != "?" && $0 != "!" }) else { return nil }
        let names = path.split(separator: ".", omittingEmptySubsequences: false)
        guard names.allSatisfy(isPropertyName) else { return nil }
        return path
    }

    private static func describedName(of keyPath: AnyKeyPath, rootType: Any.Type) -> String? {
        guard let name = path(of: keyPath, rootType: rootType), isPropertyName(name) else { return nil }
        return String(name)
    }

    /// The key path's text after `\Root.`, or `nil` when it does not start so.
    private static func path(of keyPath: AnyKeyPath, rootType: Any.Type) -> Substring? {
        let text = keyPath.debugDescription
        let prefix = "\\" + String(describing: rootType) + "."
        guard text.hasPrefix(prefix) else { return nil }
        return text.dropFirst(prefix.count)
    }

    private static func isPropertyName(_ name: Substring) -> Bool {
        !name.isEmpty && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
    }
}

extension PredicateExpressions.Value: QueryTranslatable {
    static func makeTranslation() -> Translation {
        if Output.self is any CapturedRange.Type {
            let range = Translations.reader(\Self.value)
            return { expression, _ in (range(expression) as? any CapturedRange)?.translation ?? .unknown }
        }
        let value = Translations.reader(\Self.value), convert = QueryValue.constantConversion(for: Output.self)
        return { expression, _ in convert(value(expression)).map(QueryNode.constant) ?? .unknown }
    }
}

extension PredicateExpressions.NilLiteral: QueryTranslatable {
    static func makeTranslation() -> Translation { { _, _ in .constant(.null) } }
}

extension PredicateExpressions.Variable: QueryTranslatable {
    static func makeTranslation() -> Translation {
        guard let offset = MemoryLayout<Self>.offset(of: \Self.key) else {
            let key = Translations.reader(\Self.key)
            return { expression, _ in .variable(key(expression)) }
        }
        return Translations.variable(at: offset)
    }
}

extension PredicateExpressions.KeyPath: QueryTranslatable {
    static func makeTranslation() -> Translation {
        let root = Translations.operand(\Self.root), keyPath = Translations.reader(\Self.keyPath)
        let memo = MemberMemo()
        guard Root.self == PredicateExpressions.Value<Root.Output>.self else {
            // The root type and the key path as a plain reference, found now: asking for them in
            // the translation looked up generic type metadata for each predicate.
            let rootType: Any.Type = Root.Output.self
            let anyKeyPath = Translations.keyPathReader(\Self.keyPath)
            return { expression, translator in
                try translator.member(of: root(expression, translator), rootType: rootType, keyPath: anyKeyPath(expression), memo: memo)
            }
        }
        // `expected.email` of a captured `expected` is a constant: the planner can use it.
        let captured = Translations.reader(\Self.root), convert = QueryValue.constantConversion(for: Output.self)
        return { expression, translator in
            let path = keyPath(expression)
            let base = unsafeBitCast(captured(expression), to: PredicateExpressions.Value<Root.Output>.self).value
            if let constant = convert(base[keyPath: path]) { return .constant(constant) }
            return try translator.member(of: root(expression, translator), rootType: Root.Output.self, keyPath: path, memo: memo)
        }
    }
}

extension PredicateExpressions.Equal: QueryTranslatable {
    static func makeTranslation() -> Translation {
        let lhs = Translations.operand(\Self.lhs), rhs = Translations.operand(\Self.rhs)
        if LHS.Output.self is any UnorderedCollection.Type {
            return { expression, translator in .sameElements(try lhs(expression, translator), try rhs(expression, translator)) }
        }
        return { expression, translator in .equal(try lhs(expression, translator), try rhs(expression, translator)) }
    }
}

extension PredicateExpressions.NotEqual: QueryTranslatable {
    static func makeTranslation() -> Translation {
        let lhs = Translations.operand(\Self.lhs), rhs = Translations.operand(\Self.rhs)
        if LHS.Output.self is any UnorderedCollection.Type {
            return { expression, translator in .not(.sameElements(try lhs(expression, translator), try rhs(expression, translator))) }
        }
        return { expression, translator in .notEqual(try lhs(expression, translator), try rhs(expression, translator)) }
    }
}

extension PredicateExpressions.Comparison: QueryTranslatable {
    static func makeTranslation() -> Translation {
        guard !OwnOrder.applies(to: LHS.Output.self) else { return { _, _ in .unknown } }
        let lhs = Translations.operand(\Self.lhs), rhs = Translations.operand(\Self.rhs), op = Translations.reader(\Self.op)
        return { expression, translator in
            let comparison: QueryComparison = switch op(expression) {
            case .lessThan: .lessThan
            case .lessThanOrEqual: .lessThanOrEqual
            case .greaterThan: .greaterThan
            case .greaterThanOrEqual: .greaterThanOrEqual
            @unknown default: .lessThan
            }
            return .compare(try lhs(expression, translator), comparison, try rhs(expression, translator))
        }
    }
}

extension PredicateExpressions.Conjunction: QueryTranslatable {
    static func makeTranslation() -> Translation {
        let lhs = Translations.operand(\Self.lhs), rhs = Translations.operand(\Self.rhs)
        return { expression, translator in .and(try lhs(expression, translator), try rhs(expression, translator)) }
    }
}

extension PredicateExpressions.Disjunction: QueryTranslatable {
    static func makeTranslation() -> Translation {
        let lhs = Translations.operand(\Self.lhs), rhs = Translations.operand(\Self.rhs)
        return { expression, translator in .or(try lhs(expression, translator), try rhs(expression, translator)) }
    }
}

extension PredicateExpressions.Negation: QueryTranslatable {
    static func makeTranslation() -> Translation {
        let wrapped = Translations.operand(\Self.wrapped)
        return { expression, translator in .not(try wrapped(expression, translator)) }
    }
}

extension PredicateExpressions.OptionalFlatMap: QueryTranslatable {
    static func makeTranslation() -> Translation {
        let wrapped = Translations.operand(\Self.wrapped), transform = Translations.operand(\Self.transform)
        let variable = Translations.reader(\Self.variable.key)
        return { expression, translator in
            .flatMap(try wrapped(expression, translator), variable(expression), try transform(expression, translator))
        }
    }
}

extension PredicateExpressions.NilCoalesce: QueryTranslatable {
    static func makeTranslation() -> Translation {
        let lhs = Translations.operand(\Self.lhs), rhs = Translations.operand(\Self.rhs)
        return { expression, translator in .nilCoalesce(try lhs(expression, translator), try rhs(expression, translator)) }
    }
}

extension PredicateExpressions.ForcedUnwrap: QueryTranslatable {
    static func makeTranslation() -> Translation {
        let inner = Translations.operand(\Self.inner)
        return { expression, translator in .forceUnwrap(try inner(expression, translator)) }
    }
}

extension PredicateExpressions.SequenceContains: QueryTranslatable {
    static func makeTranslation() -> Translation {
        let sequence = Translations.operand(\Self.sequence), element = Translations.operand(\Self.element)
        return { expression, translator in .contains(try sequence(expression, translator), try element(expression, translator)) }
    }
}

extension PredicateExpressions.SequenceContainsWhere: QueryTranslatable {
    static func makeTranslation() -> Translation {
        let sequence = Translations.operand(\Self.sequence), test = Translations.operand(\Self.test)
        let variable = Translations.reader(\Self.variable.key)
        return { expression, translator in
            .containsWhere(try sequence(expression, translator), variable(expression), try test(expression, translator))
        }
    }
}

extension PredicateExpressions.SequenceAllSatisfy: QueryTranslatable {
    static func makeTranslation() -> Translation {
        let sequence = Translations.operand(\Self.sequence), test = Translations.operand(\Self.test)
        let variable = Translations.reader(\Self.variable.key)
        return { expression, translator in
            .allSatisfy(try sequence(expression, translator), variable(expression), try test(expression, translator))
        }
    }
}

extension PredicateExpressions.SequenceStartsWith: QueryTranslatable {
    static func makeTranslation() -> Translation {
        let base = Translations.operand(\Self.base), prefix = Translations.operand(\Self.prefix)
        return { expression, translator in .startsWith(try base(expression, translator), try prefix(expression, translator)) }
    }
}

extension PredicateExpressions.CollectionContainsCollection: QueryTranslatable {
    static func makeTranslation() -> Translation {
        let base = Translations.operand(\Self.base), other = Translations.operand(\Self.other)
        return { expression, translator in .containsText(try base(expression, translator), try other(expression, translator)) }
    }
}

extension PredicateExpressions.ClosedRange: QueryTranslatable {
    static func makeTranslation() -> Translation {
        guard !OwnOrder.applies(to: LHS.Output.self) else { return { _, _ in .unknown } }
        let lower = Translations.operand(\Self.lower), upper = Translations.operand(\Self.upper)
        return { expression, translator in
            .range(lower: try lower(expression, translator), upper: try upper(expression, translator), isClosed: true)
        }
    }
}

extension PredicateExpressions.Range: QueryTranslatable {
    static func makeTranslation() -> Translation {
        guard !OwnOrder.applies(to: LHS.Output.self) else { return { _, _ in .unknown } }
        let lower = Translations.operand(\Self.lower), upper = Translations.operand(\Self.upper)
        return { expression, translator in
            .range(lower: try lower(expression, translator), upper: try upper(expression, translator), isClosed: false)
        }
    }
}

extension PredicateExpressions.RangeExpressionContains: QueryTranslatable {
    static func makeTranslation() -> Translation {
        let range = Translations.operand(\Self.range), element = Translations.operand(\Self.element)
        return { expression, translator in .inRange(try range(expression, translator), try element(expression, translator)) }
    }
}

extension PredicateExpressions.Conditional: QueryTranslatable {
    static func makeTranslation() -> Translation {
        let test = Translations.operand(\Self.test)
        let trueBranch = Translations.operand(\Self.trueBranch), falseBranch = Translations.operand(\Self.falseBranch)
        return { expression, translator in
            .conditional(try test(expression, translator), try trueBranch(expression, translator), try falseBranch(expression, translator))
        }
    }
}

// Arithmetic in the predicate's own numeric type. `-50` reaches the store as a minus applied to
// `50`, so a minus or an operation on constants becomes a constant here.

extension PredicateExpressions.UnaryMinus: QueryTranslatable {
    static func makeTranslation() -> Translation {
        let wrapped = Translations.operand(\Self.wrapped)
        if Output.self == Decimal.self {
            return { expression, translator in .decimalNegation(try wrapped(expression, translator)) }
        }
        guard let number = QueryNumber(type: Output.self) else { return { _, _ in .unknown } }
        return { expression, translator in .negation(try wrapped(expression, translator), number) }
    }
}

extension PredicateExpressions.Arithmetic: QueryTranslatable {
    static func makeTranslation() -> Translation {
        let isDecimal = Output.self == Decimal.self
        let number = QueryNumber(type: Output.self)
        guard isDecimal || number != nil else { return { _, _ in .unknown } }
        let lhs = Translations.operand(\Self.lhs), rhs = Translations.operand(\Self.rhs), op = Translations.reader(\Self.op)
        return { expression, translator in
            let operation: ArithmeticOperation
            switch op(expression) {
            case .add: operation = .add
            case .subtract: operation = .subtract
            case .multiply: operation = .multiply
            @unknown default: return .unknown
            }
            let (left, right) = (try lhs(expression, translator), try rhs(expression, translator))
            guard let number else { return .decimalArithmetic(left, operation, right) }
            return .arithmetic(left, operation, right, number)
        }
    }
}

extension PredicateExpressions.IntDivision: QueryTranslatable {
    static func makeTranslation() -> Translation {
        Translations.arithmetic(Output.self, .divide, lhs: \Self.lhs, rhs: \Self.rhs)
    }
}

extension PredicateExpressions.IntRemainder: QueryTranslatable {
    static func makeTranslation() -> Translation {
        Translations.arithmetic(Output.self, .remainder, lhs: \Self.lhs, rhs: \Self.rhs)
    }
}

extension PredicateExpressions.FloatDivision: QueryTranslatable {
    static func makeTranslation() -> Translation {
        Translations.arithmetic(Output.self, .divide, lhs: \Self.lhs, rhs: \Self.rhs)
    }
}

extension Translations {
    /// The translation of a `Parent` expression computing `lhs operation rhs` in `Output`.
    static func arithmetic<Parent, Output, LHS, RHS>(
        _ output: Output.Type, _ operation: ArithmeticOperation, lhs: KeyPath<Parent, LHS>, rhs: KeyPath<Parent, RHS>
    ) -> Translation {
        guard let number = QueryNumber(type: output) else { return { _, _ in .unknown } }
        let lhs = operand(lhs), rhs = operand(rhs)
        return { expression, translator in
            .arithmetic(try lhs(expression, translator), operation, try rhs(expression, translator), number)
        }
    }
}

// Collections: filters, positions and extremes of arrays, lookups in dictionaries.

extension PredicateExpressions.Filter: QueryTranslatable {
    static func makeTranslation() -> Translation {
        guard LHS.Output.self is any ListedInOrder.Type else { return { _, _ in .unknown } }
        let sequence = Translations.operand(\Self.sequence), test = Translations.operand(\Self.filter)
        let variable = Translations.reader(\Self.variable.key)
        return { expression, translator in
            .filter(try sequence(expression, translator), variable(expression), try test(expression, translator))
        }
    }
}

extension PredicateExpressions.CollectionIndexSubscript: QueryTranslatable {
    static func makeTranslation() -> Translation {
        guard Wrapped.Output.self is any ListedInOrder.Type else { return { _, _ in .unknown } }
        let wrapped = Translations.operand(\Self.wrapped), index = Translations.operand(\Self.index)
        return { expression, translator in .element(try wrapped(expression, translator), try index(expression, translator)) }
    }
}

extension PredicateExpressions.DictionaryKeySubscript: QueryTranslatable {
    static func makeTranslation() -> Translation {
        // Records keep `[String: Value]`.
        guard Key.Output.self == String.self else { return { _, _ in .unknown } }
        let wrapped = Translations.operand(\Self.wrapped), key = Translations.operand(\Self.key)
        // A dictionary of optionals gives a double optional.
        if Value.self is any OptionalType.Type {
            return { expression, translator in .optionalLookup(try wrapped(expression, translator), try key(expression, translator)) }
        }
        return { expression, translator in
            .lookup(try wrapped(expression, translator), try key(expression, translator), default: nil)
        }
    }
}

extension PredicateExpressions.DictionaryKeyDefaultValueSubscript: QueryTranslatable {
    static func makeTranslation() -> Translation {
        // With a default, a dictionary of optionals gives a single optional: the value held
        // (`nil` too), or the default.
        guard Key.Output.self == String.self else { return { _, _ in .unknown } }
        let wrapped = Translations.operand(\Self.wrapped), key = Translations.operand(\Self.key)
        let fallback = Translations.operand(\Self.default)
        return { expression, translator in
            .lookup(try wrapped(expression, translator), try key(expression, translator), default: try fallback(expression, translator))
        }
    }
}

extension PredicateExpressions.SequenceMaximum: QueryTranslatable {
    static func makeTranslation() -> Translation {
        Translations.extreme(Elements.Output.self, Elements.Output.Element.self, isMaximum: true, elements: \Self.elements)
    }
}

extension PredicateExpressions.SequenceMinimum: QueryTranslatable {
    static func makeTranslation() -> Translation {
        Translations.extreme(Elements.Output.self, Elements.Output.Element.self, isMaximum: false, elements: \Self.elements)
    }
}

extension Translations {
    /// The translation of `max()` or `min()` of a `Parent` expression's `elements`, of an array
    /// whose elements the store orders as Swift does (not an enum with an order of its own).
    static func extreme<Parent, Elements, Element, Operand>(
        _ elements: Elements.Type, _ element: Element.Type, isMaximum: Bool, elements operand: KeyPath<Parent, Operand>
    ) -> Translation {
        guard elements is any ListedInOrder.Type, !OwnOrder.applies(to: element) else { return { _, _ in .unknown } }
        let array = Translations.operand(operand)
        return { expression, translator in .extreme(try array(expression, translator), isMaximum: isMaximum) }
    }
}
