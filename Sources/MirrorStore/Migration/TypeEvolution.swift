import MirrorStoreEngine

/// How the stored records of one type become records of its model, with no code: properties
/// match by name (or by a rename), values keep their kind or convert by the automatic rules, and
/// the model's `init()` gives the value of a property the stored record lacks.
struct TypeEvolution {
    let typeName: String
    let oldSchema: ObjectSchema
    let newSchema: ObjectSchema
    /// Per new property, the stored property's position it takes its value from, or `nil`.
    private let sources: [Int?]
    private let defaults: [RecordValue]

    /// - Parameter converted: whether a migration block converts this type's objects, which then
    ///   answers for properties whose kind changed beyond the automatic rules.
    /// - Parameter renamedTypes: stored type names to their new names, for links to them.
    /// - Parameter isModel: whether a type name is one of the models', to tell a type renamed
    ///   without `renameType` from other changes in the errors.
    init(
        typeName: String, oldSchema: ObjectSchema, newSchema: ObjectSchema, defaults: [RecordValue],
        renames: [String: String], renamedTypes: [String: String], converted: Bool, isModel: (String) -> Bool
    ) throws(MigrationError) {
        self.typeName = typeName
        self.oldSchema = oldSchema
        self.newSchema = newSchema
        self.defaults = defaults
        let movedAway = Set(renames.values)
        var sources: [Int?] = []
        for property in newSchema.properties {
            let sourceName = renames[property.name] ?? (movedAway.contains(property.name) ? nil : property.name)
            guard let sourceName, let position = oldSchema.index(ofProperty: sourceName) else {
                sources.append(nil)
                continue
            }
            let from = oldSchema.properties[position].kind
            if Self.convertible(from.renamingTypes(renamedTypes), to: property.kind) {
                sources.append(position)
            } else if converted {
                sources.append(nil)
            } else if let renamed = BackendModels.renamedModel(from: from.renamingTypes(renamedTypes), to: property.kind, isModel: isModel) {
                throw MigrationError(.typeNotRenamed(
                    typeName: typeName, property: property.name, from: from.description, to: property.kind.description,
                    storedType: renamed.stored, modelType: renamed.model))
            } else {
                throw MigrationError(.needsConversion(
                    typeName: typeName, property: property.name, from: from.description, to: property.kind.description))
            }
        }
        self.sources = sources
    }

    /// Whether every value of kind `from` has a value of kind `to` the automatic rules give:
    /// the same kind, made optional or no longer optional (`nil` takes the model's default),
    /// another integer width or signedness (each value is checked), an array becoming a set or
    /// back, or a model whose own properties evolve.
    static func convertible(_ from: PropertyKind, to: PropertyKind) -> Bool {
        let from = from.unwrapped, to = to.unwrapped
        if from == to { return true }
        if from.isInteger && to.isInteger { return true }
        switch (from, to) {
        case (.list(let a), .list(let b)), (.list(let a), .set(let b)), (.set(let a), .list(let b)), (.set(let a), .set(let b)),
             (.dictionary(let a), .dictionary(let b)):
            return convertible(a, to: b)
        default:
            return false
        }
    }

    /// The new record for `old`, a record of `oldSchema`; `embedded` evolves records nested in it.
    func record(
        from old: ManagedObject, depth: Int = 0, embedded: (ManagedObject, Int) throws -> ManagedObject
    ) throws -> ManagedObject {
        var values = defaults
        for (index, source) in sources.enumerated() {
            guard let source, old.values.indices.contains(source) else { continue }
            let property = newSchema.properties[index]
            let value = old.values[source]
            // `nil` in a property that is no longer optional takes the model's default.
            if case .null = value, !property.kind.isOptional { continue }
            guard let converted = try Self.convert(value, to: property.kind, depth: depth, embedded: embedded) else {
                throw MigrationError(.valueDoesNotFit(
                    typeName: typeName, property: property.name, value: value.description, kind: property.kind.description))
            }
            values[index] = converted
        }
        return ManagedObject(objectSchema: newSchema, values: values)
    }

    /// `depth` counts the records and containers `value` is inside of, which a file decides
    /// (``RecordGrammar``'s depth rule).
    private static func convert(
        _ value: RecordValue, to kind: PropertyKind, depth: Int, embedded: (ManagedObject, Int) throws -> ManagedObject
    ) throws -> RecordValue? {
        let target = kind.unwrapped
        if RecordGrammar.nestsTooDeep(depth) {
            throw StoreError(.nestingTooDeep(typeName: kind.description, levels: depth))
        }
        switch value {
        case .null:
            return kind.isOptional ? RecordValue.null : Optional.none
        case .int(let number) where target.isUnsigned:
            guard number >= 0 else { return Optional.none }
            return checked(.uint(UInt64(number)), kind)
        case .uint(let number) where target.isInteger && !target.isUnsigned:
            return Int64(exactly: number).flatMap { checked(.int($0), kind) }
        case .object(let record):
            // A link is a record holding its key only; an embedded record evolves like any other.
            let result = record.objectSchema.primaryKey == nil ? try embedded(record, depth + 1) : record
            return checked(.object(result), kind)
        case .list(let list):
            let element: PropertyKind
            switch target {
            case .list(let inner), .set(let inner): element = inner
            default: return nil
            }
            var converted: [RecordValue] = []
            for item in list {
                guard let item = try convert(item, to: element, depth: depth + 1, embedded: embedded) else { return nil }
                converted.append(item)
            }
            return checked(.list(List(converted)), kind)
        case .dictionary(let entries):
            guard case .dictionary(let element) = target else { return nil }
            var converted: [String: RecordValue] = [:]
            for (key, item) in entries {
                guard let item = try convert(item, to: element, depth: depth + 1, embedded: embedded) else { return nil }
                converted[key] = item
            }
            return checked(.dictionary(converted), kind)
        default:
            return checked(value, kind)
        }
    }

    /// `value` if `kind` takes it. (`RecordValue` is itself `nil`-literal expressible, hence
    /// the spelled-out `Optional.none`.)
    private static func checked(_ value: RecordValue, _ kind: PropertyKind) -> RecordValue? {
        guard kind.accepts(value) else { return Optional.none }
        return value
    }
}

extension PropertyKind {
    /// The kind with the model types it names renamed by `names`.
    func renamingTypes(_ names: [String: String]) -> PropertyKind {
        guard !names.isEmpty else { return self }
        switch self {
        case .object(let typeName): return .object(typeName: names[typeName] ?? typeName)
        case .optional(let inner): return .optional(inner.renamingTypes(names))
        case .list(let inner): return .list(inner.renamingTypes(names))
        case .set(let inner): return .set(inner.renamingTypes(names))
        case .dictionary(let inner): return .dictionary(inner.renamingTypes(names))
        default: return self
        }
    }

    var isInteger: Bool { storedValueType?.isInteger == true }

    var isUnsigned: Bool { storedValueType?.isUnsigned == true }
}
