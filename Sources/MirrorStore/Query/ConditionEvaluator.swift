import Foundation
import MirrorStoreEngine

/// Decides a ``QueryNode`` for one record from its encoded values, looking through links by
/// reading the linked records from the same snapshot. Three outcomes: a value, or `nil` when the
/// answer depends on a part only the model can decide, or ``ArithmeticTrap`` thrown where
/// Swift's arithmetic would trap.
struct ConditionEvaluator {
    /// The linked record as `.embedded(schema, values)`, or `.null` when it no longer exists.
    let resolve: (String, StorageKey) throws -> QueryValue

    /// Variables bound while evaluating: the model, then closure arguments, innermost last.
    typealias Bindings = [(PredicateExpressions.VariableID, QueryValue)]

    func isTrue(_ node: QueryNode, bindings: inout Bindings) throws -> Bool? {
        guard let value = try evaluate(node, bindings: &bindings) else { return nil }
        if case .bool(let truth) = value { return truth }
        return nil
    }

    func evaluate(_ node: QueryNode, bindings: inout Bindings) throws -> QueryValue? {
        switch node {
        case .constant(let value):
            return value
        case .variable(let id):
            return bindings.last(where: { $0.0 == id })?.1
        case .member(let base, let property, let position, let typeName):
            guard let value = try evaluate(base, bindings: &bindings) else { return nil }
            return try member(of: value, property: property, position: position, typeName: typeName)
        case .count(let base):
            guard let value = try evaluate(base, bindings: &bindings) else { return nil }
            return try count(of: value).map { .int(Int64($0)) }
        case .isEmpty(let base):
            guard let value = try evaluate(base, bindings: &bindings) else { return nil }
            return try count(of: value).map { .bool($0 == 0) }
        case .equal(let lhs, let rhs), .notEqual(let lhs, let rhs):
            guard let left = try evaluate(lhs, bindings: &bindings), let right = try evaluate(rhs, bindings: &bindings),
                  let equal = try present(left, comparedWith: right).isEqual(to: present(right, comparedWith: left)) else { return nil }
            if case .notEqual = node { return .bool(!equal) }
            return .bool(equal)
        case .sameElements(let lhs, let rhs):
            guard let left = try evaluate(lhs, bindings: &bindings), let right = try evaluate(rhs, bindings: &bindings) else { return nil }
            return Self.sameElements(left, right).map(QueryValue.bool)
        case .compare(let lhs, let comparison, let rhs):
            guard let left = try evaluate(lhs, bindings: &bindings), let right = try evaluate(rhs, bindings: &bindings) else { return nil }
            return Self.compare(left, comparison, right)
        // Left side first, as Swift evaluates `&&` and `||`: a left side only the model decides
        // may throw there, so what the right side says cannot settle the outcome.
        case .and(let lhs, let rhs):
            guard let left = try isTrue(lhs, bindings: &bindings) else { return nil }
            return left ? try isTrue(rhs, bindings: &bindings).map(QueryValue.bool) : .bool(false)
        case .or(let lhs, let rhs):
            guard let left = try isTrue(lhs, bindings: &bindings) else { return nil }
            return left ? .bool(true) : try isTrue(rhs, bindings: &bindings).map(QueryValue.bool)
        case .not(let wrapped):
            return try isTrue(wrapped, bindings: &bindings).map { .bool(!$0) }
        case .flatMap(let wrapped, let variable, let transform):
            guard let value = try evaluate(wrapped, bindings: &bindings) else { return nil }
            if value.isNull { return .null }
            // A link whose object was deleted reads as `nil` in the model, so `?.` stops there too.
            if case .link(let typeName, let key) = value, try resolve(typeName, key).isNull { return .null }
            bindings.append((variable, value))
            defer { bindings.removeLast() }
            return try evaluate(transform, bindings: &bindings)
        case .enumProperty(let base, let mapping):
            guard let value = try evaluate(base, bindings: &bindings) else { return nil }
            return mapping.read(value)
        case .nilCoalesce(let lhs, let rhs):
            guard let value = try evaluate(lhs, bindings: &bindings) else { return nil }
            return value.isNull ? try evaluate(rhs, bindings: &bindings) : value
        case .forceUnwrap(let inner):
            // Unwrapping nil makes the predicate throw: the model path reports it.
            guard let value = try evaluate(inner, bindings: &bindings), !value.isNull else { return nil }
            return value
        case .contains(let sequence, let element):
            guard let elements = try elements(of: sequence, bindings: &bindings),
                  let wanted = try evaluate(element, bindings: &bindings) else { return nil }
            var undecided = false
            for candidate in elements {
                switch candidate.isEqual(to: wanted) {
                case true?: return .bool(true)
                case nil: undecided = true
                case false?: break
                }
            }
            return undecided ? nil : .bool(false)
        case .containsWhere(let sequence, let variable, let test), .allSatisfy(let sequence, let variable, let test):
            let wantsAll = if case .allSatisfy = node { true } else { false }
            guard let elements = try elements(of: sequence, bindings: &bindings) else { return nil }
            // Element by element, stopping at the first that decides, as Swift does: an element
            // only the model decides may throw before a later one would decide.
            for candidate in elements {
                bindings.append((variable, candidate))
                let outcome = try isTrue(test, bindings: &bindings)
                bindings.removeLast()
                guard let truth = outcome else { return nil }
                if truth != wantsAll { return .bool(truth) }
            }
            return .bool(wantsAll)
        case .startsWith(let base, let prefix):
            guard case .string(let text)? = try evaluate(base, bindings: &bindings),
                  case .string(let start)? = try evaluate(prefix, bindings: &bindings) else { return nil }
            return .bool(text.starts(with: start))
        case .folded(let text, let options):
            switch try evaluate(text, bindings: &bindings) {
            case .string(let value)?: return .string(TextFolding.folded(value, options: options))
            case .null?: return .null
            default: return nil
            }
        case .containsText(let base, let other):
            guard case .string(let text)? = try evaluate(base, bindings: &bindings),
                  case .string(let part)? = try evaluate(other, bindings: &bindings) else { return nil }
            return .bool(Self.collection(text, contains: part))
        case .inRange(.range(let lowerNode, let upperNode, let isClosed), let element):
            guard let value = try evaluate(element, bindings: &bindings),
                  let lower = try evaluate(lowerNode, bindings: &bindings),
                  let upper = try evaluate(upperNode, bindings: &bindings),
                  !Self.isBackwardsRange(lower, upper, isClosed: isClosed),
                  let aboveLower = Self.compare(value, .greaterThanOrEqual, lower),
                  let belowUpper = Self.compare(value, isClosed ? .lessThanOrEqual : .lessThan, upper) else { return nil }
            if case .bool(true) = aboveLower, case .bool(true) = belowUpper { return .bool(true) }
            return .bool(false)
        case .conditional(let test, let then, let otherwise):
            guard let truth = try isTrue(test, bindings: &bindings) else { return nil }
            return try evaluate(truth ? then : otherwise, bindings: &bindings)
        case .compute(let lhs, let operation, let rhs, let number):
            guard let left = try evaluate(lhs, bindings: &bindings), let right = try evaluate(rhs, bindings: &bindings) else { return nil }
            return try number.apply(operation, left, right)
        case .negate(let wrapped, let number):
            guard let value = try evaluate(wrapped, bindings: &bindings) else { return nil }
            return try number.negate(value)
        case .decimalCompute(let lhs, let operation, let rhs):
            guard case .decimal(let left)? = try evaluate(lhs, bindings: &bindings),
                  case .decimal(let right)? = try evaluate(rhs, bindings: &bindings) else { return nil }
            return DecimalArithmetic.apply(operation, left, right).map(QueryValue.decimal)
        case .decimalNegate(let wrapped):
            guard case .decimal(let value)? = try evaluate(wrapped, bindings: &bindings) else { return nil }
            return DecimalArithmetic.negate(value).map(QueryValue.decimal)
        case .filter(let sequence, let variable, let test):
            guard let elements = try elements(of: sequence, bindings: &bindings) else { return nil }
            // Every element, in order, as `filter` tests them.
            var kept: [QueryValue] = []
            for candidate in elements {
                bindings.append((variable, candidate))
                let outcome = try isTrue(test, bindings: &bindings)
                bindings.removeLast()
                guard let truth = outcome else { return nil }
                if truth { kept.append(candidate) }
            }
            return .list(kept)
        case .element(let array, let index):
            // Out of bounds, Foundation's evaluation throws: the model path reports it.
            guard let elements = try elements(of: array, bindings: &bindings), case .int(let position)? = try evaluate(index, bindings: &bindings),
                  position >= 0, position < Int64(elements.count) else { return nil }
            return elements[Int(position)]
        case .lookup(let dictionary, let key, let fallback):
            guard case .dictionary(let entries)? = try evaluate(dictionary, bindings: &bindings),
                  case .string(let name)? = try evaluate(key, bindings: &bindings) else { return nil }
            guard let found = entries[name] else {
                guard let fallback else { return .null }
                return try evaluate(fallback, bindings: &bindings)
            }
            // A link to a deleted object: what the model's dictionary holds is for the model to say.
            if case .link = found { return nil }
            return found
        case .optionalLookup(let dictionary, let key):
            guard case .dictionary(let entries)? = try evaluate(dictionary, bindings: &bindings),
                  case .string(let name)? = try evaluate(key, bindings: &bindings) else { return nil }
            guard let found = entries[name] else { return .null }
            if found.isNull { return nil }
            if case .link = found { return nil }
            return found
        case .extreme(let array, let isMaximum):
            guard let elements = try elements(of: array, bindings: &bindings) else { return nil }
            guard var result = elements.first else { return .null }
            // As `max()` and `min()` run: the first element, replaced by each later one that
            // `<` puts after it (before it for `min()`).
            for candidate in elements.dropFirst() {
                let (lower, upper) = isMaximum ? (result, candidate) : (candidate, result)
                guard case .bool(let replaces)? = Self.compare(lower, .lessThan, upper) else { return nil }
                if replaces { result = candidate }
            }
            return result
        case .inRange, .range, .unknown:
            return nil
        }
    }

    /// Whether `lower..<upper` has its bounds the wrong way round, which Foundation's evaluation
    /// of the range throws for (the model reports it). (`lower...upper` traps there instead.)
    static func isBackwardsRange(_ lower: QueryValue, _ upper: QueryValue, isClosed: Bool) -> Bool {
        guard !isClosed, case .bool(true)? = compare(lower, .greaterThan, upper) else { return false }
        return true
    }

    /// A link compared with `nil` as the model reads it: `nil` when its object was deleted.
    private func present(_ value: QueryValue, comparedWith other: QueryValue) throws -> QueryValue {
        guard other.isNull, case .link(let typeName, let key) = value else { return value }
        return try resolve(typeName, key).isNull ? .null : value
    }

    static func compare(_ lhs: QueryValue, _ comparison: QueryComparison, _ rhs: QueryValue) -> QueryValue? {
        // NaN compares false with everything, as Swift's operators answer.
        switch (lhs, rhs) {
        case (.double(let a), .double(let b)) where a.isNaN || b.isNaN: return .bool(false)
        case (.float(let a), .float(let b)) where a.isNaN || b.isNaN: return .bool(false)
        default: break
        }
        return lhs.compare(to: rhs).map { .bool(comparison.holds($0)) }
    }

    /// `==` of two sets: each element of one is in the other, and they count as many (a set's
    /// elements are distinct). Sets of models are left to the models: a link to a deleted
    /// object is no element of the model's set.
    private static func sameElements(_ lhs: QueryValue, _ rhs: QueryValue) -> Bool? {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.list(let left), .list(let right)):
            func isModel(_ value: QueryValue) -> Bool {
                switch value {
                case .link, .embedded: true
                default: false
                }
            }
            if left.contains(where: isModel) || right.contains(where: isModel) { return nil }
            guard left.count == right.count else { return false }
            for element in left {
                var found: Bool? = false
                for candidate in right {
                    guard let equal = element.isEqual(to: candidate) else {
                        found = nil
                        continue
                    }
                    if equal {
                        found = true
                        break
                    }
                }
                guard let found else { return nil }
                if !found { return false }
            }
            return true
        default:
            return nil
        }
    }

    /// The generic `Collection.contains(_:)` the predicate's own evaluation calls.
    private static func collection<C: Collection>(_ base: C, contains other: C) -> Bool where C.Element: Equatable {
        base.contains(other)
    }

    private func member(of value: QueryValue, property: String, position: Int, typeName: String) throws -> QueryValue? {
        switch value {
        case .embedded(let schema, let values):
            let index = schema.typeName == typeName ? position : schema.index(ofProperty: property)
            guard let index, values.indices.contains(index) else { return nil }
            return try Self.readsOptionalLinks(schema.properties[index].kind) ? optionalLinks(values[index]) : values[index]
        case .link(let linkedType, let key):
            let record = try resolve(linkedType, key)
            if record.isNull { return nil }
            return try member(of: record, property: property, position: position, typeName: typeName)
        default:
            return nil
        }
    }

    /// Whether `kind` is an array or set of optional links (`[Label?]`), whose model reads a link
    /// to a deleted object as a `nil` element rather than leaving it out.
    private static func readsOptionalLinks(_ kind: PropertyKind) -> Bool {
        switch kind {
        case .list(.optional(.object)), .set(.optional(.object)): true
        default: false
        }
    }

    /// A stored array of optional links as the model reads it: each dangling link `nil`, so that
    /// ``elements(of:bindings:)`` keeps it in place instead of leaving it out.
    private func optionalLinks(_ value: QueryValue) throws -> QueryValue {
        guard case .list(let elements) = value else { return value }
        return .list(try elements.map { element in
            if case .link(let typeName, let key) = element, try resolve(typeName, key).isNull { return .null }
            return element
        })
    }

    /// The elements of a container value, links resolved and dangling ones left out, as the
    /// model of an array of links that are not optional reads them.
    private func elements(of node: QueryNode, bindings: inout Bindings) throws -> [QueryValue]? {
        guard case .list(let elements)? = try evaluate(node, bindings: &bindings) else { return nil }
        guard elements.contains(where: { if case .link = $0 { true } else { false } }) else { return elements }
        var present: [QueryValue] = []
        for element in elements {
            if case .link(let typeName, let key) = element, try resolve(typeName, key).isNull { continue }
            present.append(element)
        }
        return present
    }

    private func count(of value: QueryValue) throws -> Int? {
        switch value {
        case .string(let text): return text.count
        case .data(let bytes): return bytes.count
        case .dictionary(let entries): return entries.count
        case .list:
            var bindings: Bindings = []
            return try elements(of: .constant(value), bindings: &bindings)?.count
        default: return nil
        }
    }
}
