import Foundation
import MirrorStoreEngine

/// A condition through a link, answered from the other side: the linked objects that satisfy it
/// are found first (on their own indexes where they have them), then the objects linking to them
/// through the link's index. For `$0.publisher?.name == "Marvel"`, the publishers named Marvel,
/// then the heroes whose `publisher` is one of them.
///
/// The keys found are candidates, a superset of the matches: the whole condition is tested on
/// each candidate's record afterwards.
struct LinkJoin: Sendable {
    /// The index of the link property on the queried type, keyed by the linked object's key.
    let linkIndex: String
    /// The linked type.
    let targetType: String
    /// How the linked objects are found.
    let target: AccessPath
    /// The condition on a linked object, and the variable that stands for it.
    let targetConjuncts: [(QueryNode, PredicateExpressions.VariableID)]

    /// The condition `conjunct` puts on the objects a link of `schema` leads to, when it is one
    /// of: a comparison, prefix, range or `contains` on a property read through a to-one link
    /// (`$0.publisher?.name == "Marvel"`), or `contains(where:)` over a to-many link whose
    /// elements are not optional (`$0.dogs.contains { $0.name == "Rex" }`).
    static func targetCondition(
        of conjunct: QueryNode, root: PredicateExpressions.VariableID, schema: ObjectSchema
    ) -> (link: String, targetType: String, conjuncts: [(QueryNode, PredicateExpressions.VariableID)])? {
        switch conjunct {
        case .containsWhere(let sequence, let variable, let test):
            guard let (link, targetType) = linkProperty(sequence, root: root, schema: schema, toMany: true) else { return nil }
            return (link, targetType, test.conjuncts.map { ($0, variable) })
        case .equal(let lhs, let rhs):
            // `nil == nil` holds for objects with no link at all: those are not found through it.
            if case .constant(let value) = rhs, !Self.isNull(value), let found = throughToOne(lhs, root, schema) {
                return (found.link, found.targetType, [(.equal(found.node, rhs), found.variable)])
            }
            if case .constant(let value) = lhs, !Self.isNull(value), let found = throughToOne(rhs, root, schema) {
                return (found.link, found.targetType, [(.equal(lhs, found.node), found.variable)])
            }
        case .compare(let lhs, let comparison, let rhs):
            if case .constant = rhs, let found = throughToOne(lhs, root, schema) {
                return (found.link, found.targetType, [(.compare(found.node, comparison, rhs), found.variable)])
            }
            if case .constant = lhs, let found = throughToOne(rhs, root, schema) {
                return (found.link, found.targetType, [(.compare(lhs, comparison, found.node), found.variable)])
            }
        case .startsWith(let base, let prefix):
            if case .constant = prefix, let found = throughToOne(base, root, schema) {
                return (found.link, found.targetType, [(.startsWith(found.node, prefix), found.variable)])
            }
        case .inRange(let range, let element):
            if case .range(.constant, .constant, _) = range, let found = throughToOne(element, root, schema) {
                return (found.link, found.targetType, [(.inRange(range, found.node), found.variable)])
            }
        case .contains(let sequence, let element):
            if case .constant = element, let found = throughToOne(sequence, root, schema) {
                return (found.link, found.targetType, [(.contains(found.node, element), found.variable)])
            }
        default:
            break
        }
        return nil
    }

    private static func isNull(_ value: QueryValue) -> Bool {
        if case .null = value { return true }
        return false
    }

    /// A value read through a to-one link of the root: `root.link?.x` (an optional chain, also
    /// one going on through further links) or `root.link.x` (a link that is not optional),
    /// rewritten to read `x` from the linked object.
    private static func throughToOne(
        _ node: QueryNode, _ root: PredicateExpressions.VariableID, _ schema: ObjectSchema
    ) -> (link: String, targetType: String, variable: PredicateExpressions.VariableID, node: QueryNode)? {
        switch node {
        case .flatMap(let base, let variable, let transform):
            if let (link, targetType) = linkProperty(base, root: root, schema: schema, toMany: false) {
                return (link, targetType, variable, transform)
            }
            // The macro nests a chain of two optional links as `(root.link?.x)?.y`, which reads
            // what `root.link?.(x?.y)` reads: the linked object takes the inner chain's place.
            guard let inner = throughToOne(base, root, schema) else { return nil }
            return (inner.link, inner.targetType, inner.variable, .flatMap(inner.node, variable, transform))
        case .member(let base, let property, let position, let typeName):
            guard let (link, targetType) = linkProperty(base, root: root, schema: schema, toMany: false) else { return nil }
            // The linked object takes the root's place: the variable is free on the other side.
            return (link, targetType, root, .member(.variable(root), property: property, position: position, typeName: typeName))
        default:
            return nil
        }
    }

    /// The link property `node` reads from the root, and the type it links to.
    private static func linkProperty(
        _ node: QueryNode, root: PredicateExpressions.VariableID, schema: ObjectSchema, toMany: Bool
    ) -> (String, String)? {
        guard case .member(.variable(let variable), let property, _, let typeName) = node,
              variable == root, typeName == schema.typeName,
              let kind = schema.property(named: property)?.kind,
              let targetType = linkedType(kind, toMany: toMany) else { return nil }
        return (property, targetType)
    }

    private static func linkedType(_ kind: PropertyKind, toMany: Bool) -> String? {
        switch kind {
        case .object(let typeName): toMany ? nil : typeName
        case .optional(let wrapped): linkedType(wrapped, toMany: toMany)
        // Not over optional elements: a `nil` one may satisfy the test (`$0 == nil`) and is no
        // linked object to find the model through.
        case .list(.optional), .set(.optional): nil
        case .list(let element), .set(let element): toMany ? linkedType(element, toMany: false) : nil
        default: nil
        }
    }

    /// The keys of the objects of the queried type that link to a matching object, unsorted and
    /// possibly repeated.
    func candidateKeys(source: QuerySource) throws -> [StorageKey] {
        guard let index = source.snapshot.index(named: linkIndex) else { return [] }
        var keys: [StorageKey] = []
        for targetKey in try targetKeys(source: source) {
            let key = IndexKeys.key(for: targetKey)
            keys += try index.objects(from: IndexBound(key, inclusive: true), to: IndexBound(key, inclusive: true))
        }
        return keys
    }

    /// The keys of the linked objects that may satisfy the condition.
    private func targetKeys(source: QuerySource) throws -> [StorageKey] {
        switch target.source {
        case .primaryKeys(let keys):
            return try keys.filter { try source.snapshot.contains(type: targetType, key: $0) }
        case .index(let range):
            return try range.objects()
        case .linked(let inner):
            return try inner.candidateKeys(source: source)
        case .linkPresence(let presence):
            return try presence.objects(in: source.snapshot)
        case .scan:
            return try scannedTargetKeys(source: source)
        }
    }

    /// Every linked object tested on its record; one whose outcome only a model could decide is
    /// kept, since the candidates are tested again.
    private func scannedTargetKeys(source: QuerySource) throws -> [StorageKey] {
        guard let schema = source.registry.schema(named: targetType) else { return [] }
        let onRecords = RecordConditions(schema: schema, conditions: targetConjuncts,
                                         snapshot: source.snapshot, schemas: source.registry)
        var keys: [StorageKey] = []
        scanning: for (key, bytes) in try source.snapshot.entries(type: targetType) {
            let record = try onRecords.record(bytes, key: key)
            for index in targetConjuncts.indices where try onRecords.isTrue(index, for: record, key: key) == false {
                continue scanning
            }
            keys.append(key)
        }
        return keys
    }
}
