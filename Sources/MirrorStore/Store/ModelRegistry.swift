import MirrorStoreEngine

/// The model types a store was opened with, plus every model they link to, by stored type name.
struct ModelRegistry: Sendable {
    private let plans: [String: TypePlan]
    private let names: [ObjectIdentifier: String]
    private let linkTargets: Set<String>

    init(models: [any Persistable.Type]) throws {
        var plans: [String: TypePlan] = [:]
        var names: [ObjectIdentifier: String] = [:]
        for model in models {
            for plan in try PlanCache.shared.plan(for: model).reachablePlans {
                if let known = plans[plan.typeName], known !== plan {
                    throw StoreError(.duplicateTypeName(typeName: plan.typeName))
                }
                plans[plan.typeName] = plan
                names[plan.typeIdentifier] = plan.typeName
            }
        }
        self.plans = plans
        self.names = names
        linkTargets = plans.values.map(\.schema).linkTargets
    }

    var typeNames: [String] { plans.keys.sorted() }

    func plan(named typeName: String) -> TypePlan? { plans[typeName] }

    func schema(named typeName: String) -> ObjectSchema? { plans[typeName]?.schema }

    func isLinkTarget(_ typeName: String) -> Bool { linkTargets.contains(typeName) }

    /// The plan of a model type, which must be registered.
    func plan<Model: Persistable>(for type: Model.Type) throws(StoreError) -> TypePlan {
        guard let name = names[ObjectIdentifier(type)], let plan = plans[name] else {
            throw StoreError(.unknownModel(typeName: type.persistedTypeName))
        }
        return plan
    }

    /// The storage key for `value` as the primary key of `plan`'s model, checked against the
    /// key property's kind.
    func key(_ value: some RecordPrimitive, for plan: TypePlan) throws(StoreError) -> StorageKey {
        let schema = plan.schema
        guard let name = schema.primaryKey, let property = schema.property(named: name) else {
            throw StoreError(.noPrimaryKey(typeName: plan.typeName))
        }
        let recordValue = value.recordValue
        guard property.kind.accepts(recordValue), let key = PrimaryKey.storageKey(for: recordValue) else {
            throw StoreError(.primaryKeyMismatch(
                typeName: plan.typeName, expected: property.kind.description, found: recordValue.description))
        }
        return key
    }

    /// How the stored schemas differ from the registered models', one sentence per difference.
    /// Types the file has but the registry lacks are not differences: an app may open a subset.
    func mismatches(stored storedSchemas: some SchemaSource) -> [StoreError] {
        typeNames.compactMap { typeName -> StoreError? in
            guard let stored = storedSchemas.schema(named: typeName), let current = schema(named: typeName) else { return nil }
            let differences = Self.differences(from: stored, to: current)
            return differences.isEmpty ? nil : StoreError(.schemaMismatch(typeName: typeName, differences: differences))
        }
    }

    static func differences(from stored: ObjectSchema, to current: ObjectSchema) -> [String] {
        var differences: [String] = []
        for property in current.properties {
            guard let old = stored.property(named: property.name) else {
                differences.append("property \(property.name) was added")
                continue
            }
            if old.kind != property.kind {
                differences.append("property \(property.name) changed from \(old.kind) to \(property.kind)")
            }
            if old.isPrimaryKey != property.isPrimaryKey {
                differences.append("property \(property.name) \(property.isPrimaryKey ? "became" : "is no longer") the primary key")
            }
            if old.isIndexed != property.isIndexed {
                differences.append("property \(property.name) \(property.isIndexed ? "became" : "is no longer") indexed")
            }
        }
        for property in stored.properties where current.property(named: property.name) == nil {
            differences.append("property \(property.name) was removed")
        }
        if differences.isEmpty && stored.properties.map(\.name) != current.properties.map(\.name) {
            differences.append("the properties were reordered")
        }
        return differences
    }
}
