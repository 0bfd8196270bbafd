import Foundation
import MirrorStoreEngine

/// A `SortDescriptor` the store can apply to encoded records: a stored property of the model, or
/// a path through embedded models and to-one links, its direction, and the string comparator the
/// descriptor carries (if any).
struct RecordSortKey: Sendable {
    /// The property's name, or the path's dotted names (`publisher.name`).
    let property: String
    let reading: Reading
    /// The kind of the value sorted by (the path's last property).
    let kind: PropertyKind
    let ascending: Bool
    let stringComparator: String.StandardComparator?
    /// What the sort ignores in strings: they are compared folded (``TextFolding``).
    var folding: TextOptions = []

    /// The name of the order this key sorts by: the property's, or its folded form's, which only
    /// an index of folded strings follows.
    var orderName: String {
        switch folding {
        case []: property
        case .insensitive: Self.foldedOrderName(of: property)
        default: "\(property)~folded(\(folding.rawValue))"
        }
    }

    static func foldedOrderName(of property: String) -> String { "\(property)~folded" }

    /// Whether the key reads the model's own property, which an index of it can order.
    var readsStoredProperty: Bool {
        if case .stored = reading { return true }
        return false
    }

    /// Where the sorted value comes from.
    enum Reading: Sendable {
        /// The model's own property at this schema position.
        case stored(position: Int)
        /// What `node` reads from the record bound to `root`, as the key path reads it on the
        /// model: `nil` past a `nil` or deleted link.
        case path(QueryNode, root: PredicateExpressions.VariableID)
    }

    /// Orders two values as the descriptor would order the models holding them: `nil` first,
    /// strings through the descriptor's comparator when it has one, everything else by `<`.
    func order(_ lhs: QueryValue, _ rhs: QueryValue) -> ComparisonResult {
        let forward: ComparisonResult
        switch (lhs, rhs) {
        case (.null, .null): forward = .orderedSame
        case (.null, _): forward = .orderedAscending
        case (_, .null): forward = .orderedDescending
        case (.string(let a), .string(let b)) where !folding.isEmpty:
            let (left, right) = (TextFolding.folded(a, options: folding), TextFolding.folded(b, options: folding))
            forward = left < right ? .orderedAscending : (right < left ? .orderedDescending : .orderedSame)
        case (.string(let a), .string(let b)) where stringComparator != nil:
            var comparator = stringComparator ?? .lexical
            comparator.order = .forward
            forward = comparator.compare(a, b)
        // Foundation's `UUID.<` compares the 16 bytes in order (which is `uuidString` order too).
        case (.uuid(let a), .uuid(let b)):
            forward = withUnsafeBytes(of: a.uuid) { a in
                withUnsafeBytes(of: b.uuid) { b in
                    a.elementsEqual(b) ? .orderedSame : (a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending)
                }
            }
        default: forward = lhs.compare(to: rhs) ?? .orderedSame
        }
        guard !ascending else { return forward }
        switch forward {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }
}

/// How a query's sort descriptors are applied.
enum SortResolution: Sendable {
    /// By properties read from the records.
    case records([RecordSortKey])
    /// By comparing decoded models: a descriptor the store cannot read from records.
    case models

    /// Resolves descriptors against a model's schema; `schemas` has the schemas of the types a
    /// path goes through.
    ///
    /// - Throws: ``QueryError`` for a sort on an ignored property or on values with no order.
    static func resolve<Model: Persistable>(
        _ descriptors: [SortDescriptor<Model>], schema: ObjectSchema, schemas: any SchemaSource
    ) throws -> SortResolution {
        var keys: [RecordSortKey] = []
        for descriptor in descriptors {
            guard case .key(let key) = try resolve(descriptor, schema: schema, schemas: schemas) else { return .models }
            keys.append(key)
        }
        return .records(keys)
    }

    /// How one descriptor is applied.
    enum Single {
        /// By a property read from the records.
        case key(RecordSortKey)
        /// By comparing decoded models.
        case models
    }

    /// Resolves one descriptor, as ``resolve(_:schema:schemas:)`` resolves each.
    static func resolve<Model: Persistable>(
        _ descriptor: SortDescriptor<Model>, schema: ObjectSchema, schemas: any SchemaSource
    ) throws -> Single {
        guard let keyPath = descriptor.keyPath else { return .models }
        let ascending = descriptor.order == .forward
        if let (name, position, kind) = StoredSortProperties.known(keyPath, schema: schema) {
            return .key(RecordSortKey(property: name, reading: .stored(position: position), kind: kind,
                                      ascending: ascending, stringComparator: holdsText(kind) ? descriptor.stringComparator : nil))
        }
        // Stored by raw value, ordered by the model's own `<`.
        if OwnOrder.applies(to: type(of: keyPath).valueType) { return .models }
        guard let name = KeyPathNames.propertyName(of: keyPath, rootType: Model.self) else {
            guard let key = pathKey(keyPath, of: Model.self, ascending: ascending, comparator: descriptor.stringComparator,
                                    schema: schema, schemas: schemas) else { return .models }
            return .key(key)
        }
        if schema.ignoredProperties.contains(name) {
            throw QueryError(.ignoredProperty(typeName: schema.typeName, property: name))
        }
        guard let position = schema.index(ofProperty: name) else { return .models }
        let kind = schema.properties[position].kind
        // A descriptor on any other kind compiled because the model's type makes it comparable:
        // only the model can compare it.
        guard isSortableOnRecords(kind) else { return .models }
        StoredSortProperties.remember(keyPath, schema: schema, name: name, position: position)
        // Only a `String` property's descriptor can hold a string comparator: asking Foundation
        // for it on any other costs as much as the rest of the resolution.
        return .key(RecordSortKey(property: name, reading: .stored(position: position), kind: kind,
                                  ascending: ascending, stringComparator: holdsText(kind) ? descriptor.stringComparator : nil))
    }

    /// Whether values of `kind` are stored as text (optional or not).
    private static func holdsText(_ kind: PropertyKind) -> Bool {
        var kind = kind
        while case .optional(let wrapped) = kind { kind = wrapped }
        return kind.storedValueType == .string
    }

    /// The sort key of a key path through embedded models and to-one links
    /// (`\.address.city`, `\.publisher?.name`), or `nil` when only the models can sort by it:
    /// a computed or ignored property on the way, a force unwrap (which traps on `nil` where
    /// records would read `nil`), or a last value with no order on records.
    private static func pathKey<Model>(
        _ keyPath: AnyKeyPath, of model: Model.Type, ascending: Bool, comparator: String.StandardComparator?,
        schema: ObjectSchema, schemas: any SchemaSource
    ) -> RecordSortKey? {
        guard let text = KeyPathNames.dottedPath(of: keyPath, rootType: Model.self),
              !keyPath.debugDescription.contains("!") else { return nil }
        let root = PredicateExpressions.Variable<Model>().key
        guard let path = try? PropertyPath(text, in: schema, schemas: schemas, root: root),
              isSortableOnRecords(path.kind) else { return nil }
        return RecordSortKey(property: text, reading: .path(path.node, root: root), kind: path.kind,
                             ascending: ascending, stringComparator: comparator)
    }

    /// The sort key for a stored property named at run time.
    ///
    /// - Throws: ``QueryError`` for a property that is not stored, is ignored, or has no order.
    static func recordKey(named name: String, ascending: Bool, schema: ObjectSchema) throws -> RecordSortKey {
        if schema.ignoredProperties.contains(name) {
            throw QueryError(.ignoredProperty(typeName: schema.typeName, property: name))
        }
        guard let position = schema.index(ofProperty: name), let kind = schema.property(named: name)?.kind else {
            throw QueryError(.unknownProperty(typeName: schema.typeName, property: name))
        }
        guard isSortableOnRecords(kind) else {
            throw QueryError(.unsortableProperty(typeName: schema.typeName, property: name, kind: kind.description))
        }
        return RecordSortKey(property: name, reading: .stored(position: position), kind: kind, ascending: ascending,
                             stringComparator: nil)
    }

    /// Whether values of `kind` order on records exactly as Swift orders them.
    static func isSortableOnRecords(_ kind: PropertyKind) -> Bool {
        if case .optional(let wrapped) = kind { return isSortableOnRecords(wrapped) }
        // Bools sort false first, as the record comparison orders them; UUIDs by their bytes, as
        // Foundation's `<` orders them.
        guard let type = kind.storedValueType else { return false }
        return type.isComparable || type == .bool || type == .uuid
    }
}

/// The stored property a sort descriptor's key path names in a schema, once resolved: a key path
/// literal is one object the runtime makes once, and naming it, checking its value type and
/// finding it in the schema cost more than the rest of sorting by an index. Kept by the
/// identities of the key path and the schema, both held, so that neither identity is reused;
/// starts over should a program build key paths without end.
private enum StoredSortProperties {
    private struct Identity: Hashable {
        let keyPath: ObjectIdentifier
        let schema: ObjectIdentifier
    }

    private struct Known: @unchecked Sendable {
        // @unchecked: key paths are immutable values; this one is only held.
        let keyPath: AnyKeyPath
        let schema: ObjectSchema
        let name: String
        let position: Int
    }

    private static let known = Lock<[Identity: Known]>([:])
    private static let capacity = 1_024

    /// The property `keyPath` was found to name in `schema`, with its kind, if it was.
    static func known(_ keyPath: AnyKeyPath, schema: ObjectSchema) -> (name: String, position: Int, kind: PropertyKind)? {
        let identity = Identity(keyPath: ObjectIdentifier(keyPath), schema: ObjectIdentifier(schema))
        guard let found = known.withLock({ $0[identity] }) else { return nil }
        return (found.name, found.position, schema.properties[found.position].kind)
    }

    /// Remembers that `keyPath` names the sortable stored property `name`, at `position` of `schema`.
    static func remember(_ keyPath: AnyKeyPath, schema: ObjectSchema, name: String, position: Int) {
        let identity = Identity(keyPath: ObjectIdentifier(keyPath), schema: ObjectIdentifier(schema))
        known.withLock { known in
            if known.count >= capacity { known.removeAll() }
            known[identity] = Known(keyPath: keyPath, schema: schema, name: name, position: position)
        }
    }
}

/// How a stored property named at run time orders models when its type has an order of its own
/// (``OwnOrder``): its values are read from decoded models and compared with the type's `<`.
struct PropertyOrder {
    private let property: String

    /// The order of `property` of `Model`, or `nil` when its stored values order as Swift does.
    init?<Model: Persistable>(of model: Model.Type, property: String) {
        guard let value = Self.value(of: Model(), property: property), OwnOrder.applies(to: type(of: value)) else { return nil }
        self.property = property
    }

    /// `nil` first, then by the type's `<`.
    func compare(_ lhs: Any, _ rhs: Any) -> ComparisonResult {
        switch (Self.unwrapped(Self.value(of: lhs, property: property)), Self.unwrapped(Self.value(of: rhs, property: property))) {
        case (nil, nil): return .orderedSame
        case (nil, _): return .orderedAscending
        case (_, nil): return .orderedDescending
        case (let left?, let right?):
            guard let left = left as? any Comparable else { return .orderedSame }
            return Self.order(left, right)
        }
    }

    private static func order<Value: Comparable>(_ lhs: Value, _ rhs: Any) -> ComparisonResult {
        guard let rhs = rhs as? Value else { return .orderedSame }
        return lhs < rhs ? .orderedAscending : (rhs < lhs ? .orderedDescending : .orderedSame)
    }

    /// The stored property `property` of `model`, found as `Mirror` lists it (a class's
    /// superclasses too).
    private static func value(of model: Any, property: String) -> Any? {
        var mirror: Mirror? = Mirror(reflecting: model)
        while let current = mirror {
            if let child = current.children.first(where: { $0.label == property }) { return child.value }
            mirror = current.superclassMirror
        }
        return nil
    }

    /// The value inside an optional, `nil` for an empty one.
    private static func unwrapped(_ value: Any?) -> Any? {
        guard let value else { return nil }
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return unwrapped(mirror.children.first?.value)
    }
}
