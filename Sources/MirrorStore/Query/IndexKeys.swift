import Foundation
import MirrorStoreEngine

/// How property values become secondary-index keys. The planner converts a predicate's constant
/// with the same function the index used for the stored values, so the two always agree.
enum IndexKeys {
    /// The key of one scalar value, or `nil` for values no index orders (decimals, embedded
    /// records, containers). Strings are keyed by their NFC form (see ``TextOrder``), URLs by
    /// their text as it is, since two URLs are equal only when their text is.
    static func key(for value: QueryValue) -> IndexKey? {
        switch value {
        case .null: .null
        case .bool(let value): .bool(value)
        case .int(let value): .integer(value)
        case .uint(let value): .unsigned(value)
        case .float(let value): .double(Double(value))
        case .double(let value): .double(value)
        case .string(let value): .string(TextOrder.normalized(value))
        case .data(let value): .bytes(value)
        case .date(let value): .double(value.timeIntervalSinceReferenceDate)
        case .uuid(let value): .bytes(withUnsafeBytes(of: value.uuid) { Array($0) })
        case .url(let value): .string(value)
        case .link(_, let key): Self.key(for: key)
        case .decimal, .embedded, .list, .dictionary: nil
        }
    }

    static func key(for storageKey: StorageKey) -> IndexKey {
        switch storageKey {
        case .integer(let value): .integer(value)
        case .string(let value): .string(value)
        case .bytes(let value): .bytes(value)
        }
    }

    /// The keys a stored property value contributes: one for a scalar or a to-one link, one per
    /// distinct element for an array or a set.
    static func keys(for value: QueryValue) -> [IndexKey] {
        if case .list(let elements) = value {
            var seen = Set<IndexKey>()
            return elements.compactMap(key(for:)).filter { seen.insert($0).inserted }
        }
        return key(for: value).map { [$0] } ?? []
    }

    /// Whether an index on a property of `kind` can answer equality and range conditions, and
    /// order results, exactly as Swift compares the model's values.
    static func ordersExactly(_ kind: PropertyKind) -> Bool {
        if case .optional(let wrapped) = kind { return ordersExactly(wrapped) }
        guard let type = kind.storedValueType else { return false }
        return type.isInteger || type == .string || type == .date || type == .bool
    }

    /// Whether an index on a property of `kind` answers equality with a constant exactly as
    /// Swift's `==` does, though not ranges: doubles and floats (`-0.0` and `0.0` are one key, as
    /// they are equal; a NaN constant equals nothing and is not looked up), UUIDs and data (equal
    /// when their bytes are), URLs (a stored URL has no base, and two without one are equal when
    /// their text is; a constant with a base is left to the models, see
    /// ``QueryValue/init(constant:)``), besides every kind that ``ordersExactly(_:)``.
    static func equatesExactly(_ kind: PropertyKind) -> Bool {
        switch kind {
        case .optional(let wrapped): equatesExactly(wrapped)
        case .double, .float, .uuid, .data, .url: true
        default: ordersExactly(kind)
        }
    }

    /// Whether a property of `kind` gets an index: scalars and links, and arrays or sets of them.
    static func isIndexable(_ kind: PropertyKind) -> Bool {
        switch kind {
        case .optional(let inner), .list(let inner), .set(let inner): isIndexable(inner)
        case .decimal, .dictionary: false
        default: true
        }
    }

    /// The engine name of the index on `property` of `typeName`.
    static func indexName(typeName: String, property: String) -> String { "\(typeName).\(property)" }

    /// The engine name of the index on the folded form of `property` (``TextFolding``).
    static func foldedIndexName(typeName: String, property: String) -> String { "\(typeName).\(property)~folded" }

    /// The indexes a registry's models ask for: every indexed or unique property, and every link
    /// to a model with a primary key (so "who links to this object" is an index lookup).
    static func definitions(for registry: ModelRegistry) -> [IndexDefinition] {
        var definitions: [IndexDefinition] = []
        for typeName in registry.typeNames {
            guard let plan = registry.plan(named: typeName) else { continue }
            let schema = plan.schema
            for wanted in indexes(of: plan, schemaNamed: registry.schema(named:)) {
                let positions = wanted.positions
                let projection = RecordProjection(
                    schema: schema, properties: Set(positions.map { schema.properties[$0].name }), schemas: registry)
                let fingerprint = Self.fingerprint(of: wanted, schema: schema)
                if wanted.isFolded {
                    let position = positions[0]
                    definitions.append(IndexDefinition(name: wanted.name, typeName: typeName, isUnique: false, fingerprint: fingerprint) { bytes in
                        guard case .string(let text) = try projection.value(at: position, of: bytes) else { return [.null] }
                        return [.string(TextFolding.folded(text, options: .insensitive))]
                    })
                } else if positions.count == 1 {
                    let position = positions[0]
                    definitions.append(IndexDefinition(name: wanted.name, typeName: typeName, isUnique: wanted.isUnique, fingerprint: fingerprint) { bytes in
                        keys(for: try projection.value(at: position, of: bytes))
                    })
                } else {
                    definitions.append(IndexDefinition(name: wanted.name, typeName: typeName, isUnique: wanted.isUnique, fingerprint: fingerprint) { bytes in
                        let values = try projection.values(of: bytes)
                        // Only single values are compound components (`CompoundIndex.accepts`).
                        return [.tuple(IndexTuple(positions.map { key(for: values[$0]) ?? .null }))]
                    })
                }
            }
        }
        return definitions
    }

    /// What decides the keys of `wanted`'s definition: how they are made (this function's
    /// version, folded, single or compound) and the positions and kinds of the properties read.
    /// The engine reuses a persisted index only for the same fingerprint and stored schema.
    static func fingerprint(of wanted: WantedIndex, schema: ObjectSchema) -> String {
        let form = wanted.isFolded ? "folded" : wanted.positions.count == 1 ? "single" : "compound"
        let properties = wanted.positions.map { "\($0):\(schema.properties[$0].name):\(schema.properties[$0].kind)" }
        return "keys-1 \(form) " + properties.joined(separator: ",")
    }

    /// The indexes `plan`'s model asks for, in property order; `schemaNamed` finds the schemas
    /// its links point to.
    static func indexes(of plan: TypePlan, schemaNamed: (String) -> ObjectSchema?) -> [WantedIndex] {
        let schema = plan.schema
        let unique = Set(plan.modelType.uniqueProperties)
        var wanted: [WantedIndex] = []
        for (position, property) in schema.properties.enumerated() where !property.isPrimaryKey && isIndexable(property.kind) {
            let isUnique = unique.contains(property.name)
            guard property.isIndexed || isUnique || linksToKeyedModel(property.kind, schemaNamed) else { continue }
            wanted.append(WantedIndex(
                positions: [position], property: property.name,
                name: indexName(typeName: schema.typeName, property: property.name), isUnique: isUnique,
                order: [(property.name, property.kind)]))
        }
        for name in plan.modelType.insensitiveIndexedProperties {
            guard let position = schema.index(ofProperty: name) else { continue }
            wanted.append(WantedIndex(
                positions: [position], property: name,
                name: foldedIndexName(typeName: schema.typeName, property: name), isUnique: false, isFolded: true,
                order: [(RecordSortKey.foldedOrderName(of: name), schema.properties[position].kind)]))
        }
        for compound in plan.modelType.compoundIndexes {
            // The plan checked that each property is stored and takes part.
            let positions = compound.properties.compactMap(schema.index(ofProperty:))
            guard positions.count == compound.properties.count else { continue }
            wanted.append(WantedIndex(
                positions: positions, property: compound.description,
                name: indexName(typeName: schema.typeName, property: compound.description), isUnique: compound.isUnique))
        }
        return wanted
    }

    private static func linksToKeyedModel(_ kind: PropertyKind, _ schemaNamed: (String) -> ObjectSchema?) -> Bool {
        switch kind {
        case .optional(let inner), .list(let inner), .set(let inner): linksToKeyedModel(inner, schemaNamed)
        case .object(let typeName): schemaNamed(typeName)?.primaryKey != nil
        default: false
        }
    }
}

/// An index a model asks for, on the property at one position of its schema, or on several (a
/// compound index, whose keys are tuples of their keys).
struct WantedIndex: Sendable {
    /// The schema positions of the indexed properties, in the index's order.
    let positions: [Int]
    /// The property's name, or the compound index's `team+number`.
    let property: String
    /// The engine's name of the index.
    let name: String
    let isUnique: Bool
    /// Keyed by the property's folded form (``TextFolding``) rather than its value.
    var isFolded = false
    /// For the index of one property (or of its folded form): the order its entries follow
    /// (``TypeIndexes/Index/order``), made once here rather than once per store state.
    var order: [(name: String, kind: PropertyKind)] = []
}
