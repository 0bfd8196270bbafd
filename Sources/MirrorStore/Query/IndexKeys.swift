import Foundation
import MirrorStoreEngine

/// How property values become secondary-index keys. The planner converts a predicate's constant
/// with the same function the index used for the stored values, so the two always agree.
enum IndexKeys {
    /// The key of one scalar value, or `nil` for values no index orders (decimals, embedded
    /// records, containers).
    static func key(for value: QueryValue) -> IndexKey? {
        switch value {
        case .null: .null
        case .bool(let value): .bool(value)
        case .int(let value): .integer(value)
        case .uint(let value): .unsigned(value)
        case .float(let value): .double(Double(value))
        case .double(let value): .double(value)
        case .string(let value): .string(value)
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
        switch kind {
        case .optional(let wrapped): ordersExactly(wrapped)
        case .int, .int8, .int16, .int32, .int64, .uint, .uint8, .uint16, .uint32, .uint64, .string, .date, .bool: true
        default: false
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

    /// The indexes a registry's models ask for: every indexed or unique property, and every link
    /// to a model with a primary key (so "who links to this object" is an index lookup).
    static func definitions(for registry: ModelRegistry) -> [IndexDefinition] {
        var definitions: [IndexDefinition] = []
        for typeName in registry.typeNames {
            guard let plan = registry.plan(named: typeName) else { continue }
            let schema = plan.schema
            let unique = Set(plan.modelType.uniqueProperties)
            for property in schema.properties where !property.isPrimaryKey && isIndexable(property.kind) {
                let wanted = property.isIndexed || unique.contains(property.name) || linksToKeyedModel(property.kind, registry)
                guard wanted else { continue }
                let projection = RecordProjection(schema: schema, properties: [property.name], schemas: registry)
                guard let position = schema.index(ofProperty: property.name) else { continue }
                definitions.append(IndexDefinition(
                    name: indexName(typeName: typeName, property: property.name), typeName: typeName,
                    isUnique: unique.contains(property.name)
                ) { bytes in
                    keys(for: try projection.value(at: position, of: bytes))
                })
            }
        }
        return definitions
    }

    private static func linksToKeyedModel(_ kind: PropertyKind, _ registry: ModelRegistry) -> Bool {
        switch kind {
        case .optional(let inner), .list(let inner), .set(let inner): linksToKeyedModel(inner, registry)
        case .object(let typeName): registry.schema(named: typeName)?.primaryKey != nil
        default: false
        }
    }
}
