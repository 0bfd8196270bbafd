import Foundation
import MirrorStoreEngine

/// One condition of a query: a predicate as given, and its translation; or a condition built at
/// run time, which has no predicate.
///
/// Not generic over the model: results keep lists of these, and a list of a generic type made
/// every filter look up type metadata at run time.
struct QueryCondition: Sendable {
    /// Decides what `node` leaves undecided: the expression of a `Predicate` of the queried model.
    /// Without one (a condition built at run time, which only reads stored values) an undecided
    /// record does not match.
    private let expression: (any StandardPredicateExpression<Bool>)?
    /// The predicate's `PredicateExpressions.Variable` of the model, which `expression` reads the
    /// model through. The predicate is kept as these two parts, all it holds, rather than whole:
    /// a `Predicate` does not fit an existential's inline buffer and its copy looks up its
    /// variadic generic type's metadata, which cost a tenth of a lookup by an indexed value.
    private let variable: (any Sendable)?
    let node: QueryNode
    /// The variable that stands for the model in `node`.
    let root: PredicateExpressions.VariableID

    /// A condition that `predicate`, a `Predicate` of the queried model, decides where `node` does not.
    init<Model>(predicate: Predicate<Model>, node: QueryNode, root: PredicateExpressions.VariableID) {
        self.init(expression: predicate.expression, variable: predicate.variable, node: node, root: root)
    }

    /// A condition that a predicate's `expression`, read through `variable` (its
    /// `PredicateExpressions.Variable` of the queried model), decides where `node` does not.
    init(expression: any StandardPredicateExpression<Bool>, variable: any Sendable, node: QueryNode, root: PredicateExpressions.VariableID) {
        self.expression = expression
        self.variable = variable
        self.node = node
        self.root = root
    }

    /// A condition built at run time, with no predicate.
    init(node: QueryNode, root: PredicateExpressions.VariableID) {
        expression = nil
        variable = nil
        self.node = node
        self.root = root
    }

    /// The predicate, for models of the type it was given for: evaluated as `Predicate.evaluate`
    /// evaluates it, its expression with its variable bound to the model.
    func predicate<Model>(of type: Model.Type) -> PredicateEvaluation<Model>? {
        guard let expression, let variable = variable as? PredicateExpressions.Variable<Model> else { return nil }
        return PredicateEvaluation(expression: expression, variable: variable)
    }
}

/// A predicate of `Model` as its expression and variable, evaluated as `Predicate.evaluate`
/// does: the expression, with the variable bound to the model.
struct PredicateEvaluation<Model> {
    let expression: any StandardPredicateExpression<Bool>
    let variable: PredicateExpressions.Variable<Model>

    func evaluate(_ model: Model) throws -> Bool {
        try expression.evaluate(PredicateBindings((variable, model)))
    }
}

/// Where a query's candidates come from, chosen from the conditions' conjuncts: a primary-key
/// lookup, a range of a secondary index, or every object.
struct AccessPath: Sendable {
    /// Each case's payload is one word at most, so that matching a case copies no more.
    enum Source: Sendable {
        case scan
        case primaryKeys([StorageKey])
        /// A range of an index.
        case index(IndexAccess)
        /// The objects linking to those a condition on the linked type selects.
        indirect case linked(LinkJoin)
        /// The objects whose to-one link reads `nil`, or reads an object.
        indirect case linkPresence(LinkPresence)
    }

    let source: Source
    /// Whether every candidate matches, so the conditions need not be tested again.
    let isExact: Bool
    /// The range as the plan prints it.
    let rangeText: RangeText?
    /// When `source` is an index: the properties whose values order its entries in the range, with
    /// their kinds (the property of a one-property index; a compound index's after those its
    /// equalities fix, none when they fix them all).
    let order: [(name: String, kind: PropertyKind)]?

    static let scan = AccessPath(source: .scan, isExact: false, rangeText: nil, order: nil)

    /// The access as a plan reports it, for objects of `typeName`.
    func planAccess(typeName: String) -> QueryPlan.AccessSource {
        switch source {
        case .scan: .described(.scan(typeName: typeName))
        case .primaryKeys(let keys): .described(.primaryKey(typeName: typeName, keys: keys.count))
        case .index(let access): .index(name: access.name, range: rangeText)
        case .linked(let join): .described(.linked(index: join.linkIndex, target: join.target.planAccess(typeName: join.targetType).access.description))
        case .linkPresence(let presence): .index(name: presence.indexName, range: RangeText(.linkIsNil(!presence.isPresent)))
        }
    }
}

/// A range of one index as the planner chose it: the index `chosen` (its snapshot in the source's
/// snapshot, and its name), between the bounds (`nil`: unbounded). A class: a range that answers
/// a filter keeps it whole (``IndexRange``), rather than copying the index and both bounds out of
/// the access path and freeing them with it.
final class IndexAccess: Sendable {
    /// The index, as the query source found it: kept by reference, where a copy of its name and
    /// snapshot was several retains here and as many releases when the access was freed.
    private let chosen: TypeIndexes.Index
    let lower: IndexBound?
    let upper: IndexBound?

    init(_ chosen: TypeIndexes.Index, lower: IndexBound?, upper: IndexBound?) {
        self.chosen = chosen
        self.lower = lower
        self.upper = upper
    }

    /// The index's engine name.
    var name: String { chosen.name }

    /// The keys of the objects with an entry in the range, in index order.
    func objects() throws -> [StorageKey] {
        try chosen.objects(from: lower, to: upper)
    }

    /// The set of the objects with an entry in the range, held as bytes, with room for `capacity`.
    func objectKeySet(capacity: Int) throws -> ObjectKeySet {
        try chosen.objectKeySet(from: lower, to: upper, capacity: capacity)
    }

    /// Calls `body` with the object of each entry in the range, in index order, until it
    /// returns `false`. Read here, where the index and bounds lie: read through the access from
    /// outside, each was copied and released on the way.
    func forEachObject(_ body: (StorageKey) -> Bool) throws {
        try chosen.forEachObject(from: lower, to: upper, body)
    }

    /// Calls `body` with each entry in the range, in index order, until it returns `false`.
    func forEach(_ body: (IndexEntry) -> Bool) throws {
        try chosen.forEach(from: lower, to: upper, body)
    }

    /// The number of entries in the range, counted from the index.
    func count() throws -> Int {
        try chosen.count(from: lower, to: upper)
    }

    /// Whether the index is unique.
    var isUnique: Bool { chosen.isUnique }

    /// How the range holds one key's entries; nil for other ranges. Asked here, where the bounds
    /// lie: handed out to be compared, each was copied and released.
    var equality: IndexRange.Equality? {
        guard let lower, let upper, lower.isInclusive else { return nil }
        if lower == upper { return lower.key.isUniquelyConstrained ? .oneConstrainedKey : .entries }
        guard !upper.isInclusive, case .tuple(let prefix) = lower.key else { return nil }
        return upper.key == .tuple(prefix.appending(.greatest)) ? .entries : nil
    }
}

/// Chooses an ``AccessPath`` for a query's conditions.
struct QueryPlanner {
    /// The planned type's schema, snapshot, registry and indexes. One reference: a planner is
    /// made per query, and copying each of these cost more than planning an equality.
    let source: QuerySource

    private var schema: ObjectSchema { source.schema }
    private var snapshot: EngineSnapshot { source.snapshot }
    private var indexes: TypeIndexes { source.indexes }

    /// What one conjunct says about one stored property of the model. A class: as a struct of
    /// this size, each copy and each release of it went through its value witnesses, which
    /// cost more than planning an equality.
    private final class Constraint {
        let property: IndexedProperty
        let lower: IndexBound?
        let upper: IndexBound?
        let isExact: Bool
        let text: RangeText
        /// Whether the bounds are one key, both inclusive: an equality. Kept, as comparing the
        /// bounds' keys again where it is asked costs a string comparison.
        let isOneKey: Bool

        init(property: IndexedProperty, lower: IndexBound?, upper: IndexBound?, isExact: Bool, text: RangeText, isOneKey: Bool) {
            self.property = property
            self.lower = lower
            self.upper = upper
            self.isExact = isExact
            self.text = text
            self.isOneKey = isOneKey
        }

        /// With what another conjunct says about the same property added. Constants, not
        /// variables: each read of a class's variable is checked for exclusive access.
        func narrowed(by other: Constraint) -> Constraint {
            let lower = QueryPlanner.tighter(lower, other.lower, lower: true)
            let upper = QueryPlanner.tighter(upper, other.upper, lower: false)
            var text = text
            text.append(other.text)
            let isOneKey = if let lower, let upper { lower.isInclusive && lower == upper } else { false }
            return Constraint(property: property, lower: lower, upper: upper, isExact: isExact && other.isExact, text: text, isOneKey: isOneKey)
        }
    }

    /// A property the planner can read through an index of its own, look up by primary key, or
    /// read through a compound index it is part of (`index` is `nil` for the last two), found once
    /// per conjunct with everything the plan needs of it.
    private struct IndexedProperty {
        let name: String
        let position: Int
        let kind: PropertyKind
        let index: TypeIndexes.Index?
        let isPrimaryKey: Bool
        /// Read through the index of its folded form (``TextFolding``), by a ``TextMatch``.
        var isFolded = false

        /// Whether both constrain the same values: the same property, folded or not.
        func sameProperty(as other: IndexedProperty) -> Bool {
            name == other.name && isFolded == other.isFolded
        }
    }

    func accessPath(for conditions: [QueryCondition]) -> AccessPath {
        // The common query, one condition that is not a chain of `&&`, is planned without
        // gathering its conjuncts and constraints into lists, which cost more than planning it.
        if conditions.count == 1, !conditions[0].node.isConjunction {
            return accessPath(soleConjunct: conditions[0].node, root: conditions[0].root)
        }
        var conjuncts: [(QueryNode, PredicateExpressions.VariableID)] = []
        for condition in conditions {
            condition.node.forEachConjunct { conjuncts.append(($0, condition.root)) }
        }
        return accessPath(conjuncts: conjuncts)
    }

    /// The access path for a query whose one condition is `node`, not a chain of `&&`. Taking
    /// the node rather than its condition copies none of the condition's predicate parts.
    func accessPath(soleConjunct node: QueryNode, root: PredicateExpressions.VariableID) -> AccessPath {
        // A node that gives a constraint reads properties of the object and constants, in no
        // range the wrong way round: it cannot throw, so `mayThrow` need not walk it.
        if let constraint = constraint(from: node, root: root) {
            // A property with an index of its own: the constraint is handed to its access, not copied.
            if let index = constraint.property.index { return Self.indexAccess(constraint, index, alone: true) }
            if let access = access(using: constraint, alone: true) { return access }
            if let compound = compoundAccess([constraint], everyConjunctConstrains: true) { return compound.access }
        }
        if node.mayThrow { return .scan }
        return linkPresence(node, root, alone: true) ?? linkedAccess([(node, root)]) ?? .scan
    }

    /// The access path for conjuncts that must all hold, each with the variable that stands for
    /// an object of the planned type.
    func accessPath(conjuncts all: [(QueryNode, PredicateExpressions.VariableID)]) -> AccessPath {
        // Swift tests conjuncts in order, so every object reaches those before the first that
        // may throw: only these may narrow the candidates.
        let conjuncts = all.prefix { !$0.0.mayThrow }
        // One per property, in the order first met: a query has a few conjuncts, so a list
        // searched in turn costs less than a dictionary.
        var constraints: [Constraint] = []
        var constrained = 0
        for (conjunct, root) in conjuncts {
            guard let constraint = constraint(from: conjunct, root: root) else { continue }
            constrained += 1
            if let position = constraints.firstIndex(where: { $0.property.sameProperty(as: constraint.property) }) {
                constraints[position] = constraints[position].narrowed(by: constraint)
            } else {
                constraints.append(constraint)
            }
        }
        let alone = constraints.count == 1 && constrained == all.count
        if let constraint = constraints.first(where: { $0.property.isPrimaryKey }),
           let access = access(using: constraint, alone: alone) {
            return access
        }
        // Equality first, then two-sided ranges, then one-sided ones; by position, so that no
        // constraint is copied on the way.
        var best: Int?
        for position in constraints.indices where constraints[position].property.index != nil {
            if let known = best, !Self.ranksBefore(constraints[position], constraints[known]) { continue }
            best = position
        }
        // A compound index constraining two properties or more beats any one property's index.
        if let compound = compoundAccess(constraints, everyConjunctConstrains: constrained == all.count),
           compound.properties >= 2 || best == nil {
            return compound.access
        }
        if let best, let access = access(using: constraints[best], alone: alone) { return access }
        let soleConjunct = constraints.isEmpty && all.count == 1
        for (conjunct, root) in conjuncts {
            if let access = linkPresence(conjunct, root, alone: soleConjunct) { return access }
        }
        return linkedAccess(Array(conjuncts)) ?? .scan
    }

    /// The best range of a compound index the constraints offer, with how many properties it
    /// constrains: equalities on the index's first properties and perhaps a range on the next,
    /// as one range of tuple keys. A tuple that is a prefix of another sorts before it, and
    /// ``IndexKey/greatest`` after every key, so `(prefix)` to `(prefix, greatest)` holds every
    /// tuple that starts with the prefix. `everyConjunctConstrains`: each conjunct gave one of
    /// `constraints`, so using them all answers the query.
    private func compoundAccess(_ constraints: [Constraint], everyConjunctConstrains: Bool) -> (access: AccessPath, properties: Int)? {
        // The index first, then its access: making bounds and texts for every candidate cost
        // more than choosing.
        var best: (compound: Int, equalities: Int, range: Int?)?
        var bestProperties = 0
        for number in indexes.compound.indices {
            var equalities = 0
            var range: Int?
            for position in indexes.compound[number].positions {
                guard let found = compoundConstraint(constraints, position) else { break }
                if constraints[found].isOneKey, IndexKeys.equatesExactly(constraints[found].property.kind) {
                    equalities += 1
                    continue
                }
                if IndexKeys.ordersExactly(constraints[found].property.kind), constraints[found].lower != nil || constraints[found].upper != nil {
                    range = found
                }
                break
            }
            let properties = equalities + (range == nil ? 0 : 1)
            guard properties > bestProperties else { continue }
            best = (number, equalities, range)
            bestProperties = properties
        }
        guard let best else { return nil }
        let compound = indexes.compound[best.compound]
        var prefix = IndexTuple(capacity: 64)
        var text: RangeText?
        var allExact = true
        // The equalities, then the range: the range's property follows theirs in the index.
        for (offset, position) in compound.positions.prefix(bestProperties).enumerated() {
            guard let found = compoundConstraint(constraints, position) else { return nil }
            if offset < best.equalities, let lower = constraints[found].lower { prefix.append(lower.key) }
            let component = RangeText.Term.component(property: constraints[found].property.name, constraints[found].text)
            if text == nil { text = RangeText(component) } else { text?.append(component) }
            allExact = allExact && constraints[found].isExact
        }
        let lower: IndexBound = best.range.flatMap { constraints[$0].lower }.map { bound in
            bound.isInclusive ? IndexBound(.tuple(prefix.appending(bound.key)), inclusive: true)
                : IndexBound(.tuple(prefix.appending(bound.key).appending(.greatest)), inclusive: false)
        } ?? IndexBound(.tuple(prefix), inclusive: true)
        let upper: IndexBound = best.range.flatMap { constraints[$0].upper }.map { bound in
            bound.isInclusive ? IndexBound(.tuple(prefix.appending(bound.key).appending(.greatest)), inclusive: false)
                : IndexBound(.tuple(prefix.appending(bound.key)), inclusive: false)
        } ?? IndexBound(.tuple(prefix.appending(.greatest)), inclusive: false)
        let isExact = everyConjunctConstrains && bestProperties == constraints.count && allExact
        let ordering = compound.positions.dropFirst(best.equalities).map { (schema.properties[$0].name, schema.properties[$0].kind) }
        return (AccessPath(source: .index(IndexAccess(compound.index, lower: lower, upper: upper)),
                           isExact: isExact, rangeText: text, order: ordering), bestProperties)
    }

    /// The position in `constraints` of the one on the unfolded property at schema `position`.
    private func compoundConstraint(_ constraints: [Constraint], _ position: Int) -> Int? {
        constraints.firstIndex { $0.property.position == position && !$0.property.isFolded }
    }

    /// The access `$0.link == nil` or `$0.link != nil` offers on a to-one link's index.
    /// `alone`: it is the whole query, so its objects are the answer.
    private func linkPresence(_ node: QueryNode, _ root: PredicateExpressions.VariableID, alone: Bool) -> AccessPath? {
        let operand: QueryNode, isPresent: Bool
        switch node {
        case .equal(let lhs, .constant(.null)), .equal(.constant(.null), let lhs): (operand, isPresent) = (lhs, false)
        case .notEqual(let lhs, .constant(.null)), .notEqual(.constant(.null), let lhs): (operand, isPresent) = (lhs, true)
        default: return nil
        }
        guard let property = indexedProperty(operand, root), let index = property.index,
              case .optional(.object(let targetType)) = property.kind else { return nil }
        let presence = LinkPresence(indexName: index.name, index: index.snapshot, targetType: targetType, isPresent: isPresent)
        return AccessPath(source: .linkPresence(presence), isExact: alone, rangeText: nil, order: nil)
    }

    /// The access `constraint` offers: a primary-key lookup for an equality on the primary key,
    /// a range of the property's index, or `nil`. `alone`: no other conjunct constrains anything,
    /// so an exact constraint answers the whole query.
    private func access(using constraint: Constraint, alone: Bool) -> AccessPath? {
        guard let index = constraint.property.index else {
            guard constraint.property.isPrimaryKey, constraint.isOneKey, let lower = constraint.lower,
                  let key = Self.storageKey(for: lower.key) else { return nil }
            return AccessPath(source: .primaryKeys([key]), isExact: alone && constraint.isExact, rangeText: nil, order: nil)
        }
        return Self.indexAccess(constraint, index, alone: alone)
    }

    /// The range of `index`, the index of the constraint's property, that `constraint` offers.
    private static func indexAccess(_ constraint: Constraint, _ index: TypeIndexes.Index, alone: Bool) -> AccessPath {
        AccessPath(
            source: .index(IndexAccess(index, lower: constraint.lower, upper: constraint.upper)),
            isExact: alone && constraint.isExact, rangeText: constraint.text,
            order: index.order)
    }

    /// A join through a link, when a conjunct is a condition on linked objects that an index of
    /// theirs answers, or that is cheaper to test on them than on every object of this type.
    private func linkedAccess(_ conjuncts: [(QueryNode, PredicateExpressions.VariableID)]) -> AccessPath? {
        var scanning: AccessPath?
        for (conjunct, root) in conjuncts {
            guard let condition = LinkJoin.targetCondition(of: conjunct, root: root, schema: schema),
                  let targetEntry = source.registry.entry(named: condition.targetType) else { continue }
            let linkIndex = IndexKeys.indexName(typeName: schema.typeName, property: condition.link)
            guard snapshot.index(named: linkIndex) != nil else { continue }
            let targetSource = QuerySource(snapshot: snapshot, registry: source.registry, entry: targetEntry)
            let target = QueryPlanner(source: targetSource).accessPath(conjuncts: condition.conjuncts)
            let join = AccessPath(source: .linked(LinkJoin(linkIndex: linkIndex, targetType: condition.targetType,
                                                           target: target, targetConjuncts: condition.conjuncts)),
                                  isExact: false, rangeText: nil, order: nil)
            if case .scan = target.source {
                if scanning == nil, snapshot.count(type: condition.targetType) < snapshot.count(type: schema.typeName) { scanning = join }
            } else {
                return join
            }
        }
        return scanning
    }

    /// Whether `a` makes a better index access than `b`: a lower rank, or the same rank and a
    /// property name first in order (so the choice does not depend on the conjuncts' order).
    private static func ranksBefore(_ a: Constraint, _ b: Constraint) -> Bool {
        rank(a) != rank(b) ? rank(a) < rank(b) : a.property.name < b.property.name
    }

    private static func rank(_ constraint: Constraint) -> Int {
        if let lower = constraint.lower, let upper = constraint.upper {
            return lower == upper ? 0 : 1
        }
        return 2
    }

    private static func storageKey(for key: IndexKey) -> StorageKey? {
        switch key {
        case .integer(let value): .integer(value)
        case .unsigned(let value): .integer(Int64(bitPattern: value))
        case .string(let value): .string(value)
        case .bytes(let value): .bytes(value)
        default: nil
        }
    }

    private static func tighter(_ a: IndexBound?, _ b: IndexBound?, lower: Bool) -> IndexBound? {
        guard let a else { return b }
        guard let b else { return a }
        if a.key == b.key { return IndexBound(a.key, inclusive: a.isInclusive && b.isInclusive) }
        return (a.key < b.key) == lower ? b : a
    }

    /// The constraint a conjunct puts on an indexed property of the model, if it is one the
    /// planner recognises: comparisons with a constant, ranges, prefixes, `contains`; never one
    /// of a node that may throw.
    private func constraint(from node: QueryNode, root: PredicateExpressions.VariableID) -> Constraint? {
        switch node {
        case .equal(let lhs, let rhs):
            if let property = indexedProperty(lhs, root), case .constant(let value) = rhs { return equality(property, value) }
            if let property = indexedProperty(rhs, root), case .constant(let value) = lhs { return equality(property, value) }
        case .compare(let lhs, let comparison, let rhs):
            if let property = indexedProperty(lhs, root), case .constant(let value) = rhs {
                return bound(property, comparison, value)
            }
            if let property = indexedProperty(rhs, root), case .constant(let value) = lhs {
                return bound(property, comparison.mirrored, value)
            }
        case .inRange(.range(.constant(let lowerValue), .constant(let upperValue), let isClosed), let element):
            // A range the wrong way round throws in Swift (see `QueryNode.mayThrow`): every object must reach it.
            guard !ConditionEvaluator.isBackwardsRange(lowerValue, upperValue, isClosed: isClosed),
                  let property = indexedProperty(element, root), IndexKeys.ordersExactly(property.kind),
                  let lower = IndexKeys.key(for: lowerValue), let upper = IndexKeys.key(for: upperValue) else { return nil }
            let text = RangeText(.within(lower, upper, isClosed: isClosed))
            if case .string(let from) = lowerValue, case .string(let to) = upperValue {
                return Constraint(property: property, lower: IndexBound(.string(TextOrder.comparisonBounds(of: from).lower), inclusive: true),
                                  upper: TextOrder.comparisonBounds(of: to).upper.map { IndexBound(.string($0), inclusive: false) },
                                  isExact: false, text: text, isOneKey: false)
            }
            return Constraint(property: property, lower: IndexBound(lower, inclusive: true), upper: IndexBound(upper, inclusive: isClosed),
                              isExact: true, text: text, isOneKey: isClosed && lower == upper)
        case .startsWith(let base, .constant(.string(let prefix))):
            guard let property = indexedProperty(base, root), Self.isString(property.kind), !prefix.isEmpty else { return nil }
            // A string starts with `prefix`'s characters only if its NFC form starts with the
            // scalars of `prefix`'s: those sort from that form up to the end of its prefix range.
            // `starts(with:)` compares characters, not scalars, so each candidate is tested again.
            let start = TextOrder.normalized(prefix)
            return Constraint(property: property, lower: IndexBound(.string(start), inclusive: true),
                              upper: TextOrder.end(ofPrefix: start).map { IndexBound(.string($0), inclusive: false) },
                              isExact: false, text: RangeText(.startsWith(prefix)), isOneKey: false)
        case .member:
            // A Boolean property on its own (`$0.isActive`) is its equality with true.
            guard let property = indexedProperty(node, root), case .bool = property.kind else { return nil }
            return equality(property, .bool(true))
        case .not(let operand):
            guard case .member = operand, let property = indexedProperty(operand, root), case .bool = property.kind else { return nil }
            return equality(property, .bool(false))
        case .contains(let sequence, .constant(let value)):
            guard let property = indexedProperty(sequence, root), Self.isContainer(property.kind), let key = IndexKeys.key(for: value) else { return nil }
            // A `nil` element of `[Label?]` is also a stored link to a deleted object, which the
            // index keeps under the object's key.
            if key == .null, Self.isLinkContainer(property.kind) { return nil }
            return Constraint(property: property, lower: IndexBound(key, inclusive: true), upper: IndexBound(key, inclusive: true),
                              isExact: false, text: RangeText(.contains(key)), isOneKey: true)
        default:
            break
        }
        return nil
    }

    private func equality(_ property: IndexedProperty, _ value: QueryValue) -> Constraint? {
        let kind = property.kind
        guard IndexKeys.equatesExactly(kind) || property.isPrimaryKey || Self.isLink(kind),
              var key = IndexKeys.key(for: value) else { return nil }
        // NaN equals nothing in Swift, though its index key equals itself.
        if case .double(let number) = key, number.isNaN { return nil }
        // Primary keys are stored as given, not normalized as index keys are.
        if property.isPrimaryKey, case .string(let text) = value { key = .string(text) }
        // A link to a deleted object is `nil` to the model, but its index entry keeps the key.
        if Self.isLink(kind), key == .null { return nil }
        return Constraint(property: property, lower: IndexBound(key, inclusive: true), upper: IndexBound(key, inclusive: true),
                          isExact: !Self.isLink(kind), text: RangeText(.equal(key)), isOneKey: true)
    }

    private func bound(_ property: IndexedProperty, _ comparison: QueryComparison, _ value: QueryValue) -> Constraint? {
        let kind = property.kind
        guard IndexKeys.ordersExactly(kind), let key = IndexKeys.key(for: value), key != .null else { return nil }
        // An optional property's nil sorts first in the index but fails every comparison.
        let afterNil = kind.isOptional ? IndexBound(.null, inclusive: false) : nil
        let text = switch comparison {
        case .lessThan: RangeText(.lessThan(key))
        case .lessThanOrEqual: RangeText(.lessThanOrEqual(key))
        case .greaterThan: RangeText(.greaterThan(key))
        case .greaterThanOrEqual: RangeText(.greaterThanOrEqual(key))
        }
        let isBelow = comparison == .lessThan || comparison == .lessThanOrEqual
        if case .string(let string) = value {
            // Swift orders a few pairs otherwise than their NFC keys do (see `TextOrder`): the
            // range takes them in, and each candidate is tested with Swift's own operators.
            let (lower, upper) = TextOrder.comparisonBounds(of: string)
            return Constraint(property: property, lower: isBelow ? afterNil : IndexBound(.string(lower), inclusive: true),
                              upper: isBelow ? upper.map { IndexBound(.string($0), inclusive: false) } : nil, isExact: false, text: text,
                              isOneKey: false)
        }
        let inclusive = comparison == .lessThanOrEqual || comparison == .greaterThanOrEqual
        return Constraint(property: property, lower: isBelow ? afterNil : IndexBound(key, inclusive: inclusive),
                          upper: isBelow ? IndexBound(key, inclusive: inclusive) : nil, isExact: true, text: text, isOneKey: false)
    }

    /// The property a node reads directly from the model, when the model's type has an index on
    /// it (or it is the primary key).
    private func indexedProperty(_ node: QueryNode, _ root: PredicateExpressions.VariableID) -> IndexedProperty? {
        // A folded string reads the index of folded strings, which holds both foldings.
        if case .folded(let text, let options) = node {
            guard options == .insensitive, case .member(.variable(let variable), let name, let hint, let typeName) = text,
                  variable == root, typeName == schema.typeName, let position = schema.position(ofProperty: name, near: hint),
                  let index = indexes.folded(position) else { return nil }
            return IndexedProperty(name: name, position: position, kind: schema.properties[position].kind, index: index, isPrimaryKey: false, isFolded: true)
        }
        guard case .member(.variable(let variable), let name, let hint, let typeName) = node,
              variable == root, typeName == schema.typeName, let position = schema.position(ofProperty: name, near: hint) else { return nil }
        let property = schema.properties[position]
        if property.isPrimaryKey { return IndexedProperty(name: name, position: position, kind: property.kind, index: nil, isPrimaryKey: true) }
        if let index = indexes[position] {
            return IndexedProperty(name: name, position: position, kind: property.kind, index: index, isPrimaryKey: false)
        }
        guard indexes.isCompoundComponent(position) else { return nil }
        return IndexedProperty(name: name, position: position, kind: property.kind, index: nil, isPrimaryKey: false)
    }

    private static func isString(_ kind: PropertyKind) -> Bool {
        switch kind {
        case .string: true
        case .optional(let wrapped): isString(wrapped)
        default: false
        }
    }

    private static func isContainer(_ kind: PropertyKind) -> Bool {
        switch kind {
        case .list, .set: true
        default: false
        }
    }

    /// Whether `kind` is an array or a set of links.
    private static func isLinkContainer(_ kind: PropertyKind) -> Bool {
        switch kind {
        case .list(let element), .set(let element): isLink(element)
        default: false
        }
    }

    static func isLink(_ kind: PropertyKind) -> Bool {
        switch kind {
        case .object: true
        case .optional(let wrapped): isLink(wrapped)
        default: false
        }
    }
}
