import MirrorStoreEngine

/// The model types a store was opened with, plus every model they link to, by stored type name.
struct ModelRegistry: Sendable {
    /// What the store needs about one registered model type, found with one lookup.
    /// A class, so that finding one for a read by key, and passing it on, is one retain rather
    /// than one of each of its parts.
    final class Entry: Sendable {
        let plan: TypePlan
        /// Neither links to other models (through the models it embeds either) nor is linked to:
        /// its records are read on their own.
        let isStandalone: Bool
        /// For a standalone type, the schemas of the models it embeds, at any depth, by type name.
        let embeddedSchemas: [String: ObjectSchema]
        /// Some model links to it (or reads it as an inverse's source): a record of it may be met
        /// again through a link.
        let isLinkTarget: Bool
        /// The kind of the primary-key property, if the model has one.
        let primaryKeyKind: PropertyKind?
        /// The stored value type of that kind, found once here rather than by a walk of the kind
        /// per read by key; nil for a key property of another kind, checked by the kind itself.
        let primaryKeyValueType: StoredValueType?
        /// Where the model's secondary indexes serve, by property position, for each snapshot's
        /// ``TypeIndexes``.
        let indexLayout: TypeIndexes.Layout
        /// The secondary indexes the model asks for, in property order (the layout holds them).
        var indexes: [WantedIndex] { indexLayout.wanted }

        init(
            plan: TypePlan, isStandalone: Bool, embeddedSchemas: [String: ObjectSchema], isLinkTarget: Bool,
            primaryKeyKind: PropertyKind?, indexes: [WantedIndex]
        ) {
            self.plan = plan
            self.isStandalone = isStandalone
            self.embeddedSchemas = embeddedSchemas
            self.isLinkTarget = isLinkTarget
            self.primaryKeyKind = primaryKeyKind
            primaryKeyValueType = primaryKeyKind?.storedValueType
            indexLayout = TypeIndexes.Layout(indexes, propertyCount: plan.schema.properties.count)
        }
    }

    private let plans: [String: TypePlan]
    /// The entries with the identity of their model type, in that order, searched by halves: a
    /// read by key finds its type here, and hashing the identity cost more than the few
    /// comparisons of a store's handful of types.
    private let entries: [(model: ObjectIdentifier, entry: Entry)]
    private let linkTargets: Set<String>
    /// What deletes go on to do under the models' rules.
    let deleteRules: DeleteRules

    init(models: [any Persistable.Type]) throws {
        var plans: [String: TypePlan] = [:]
        for model in models {
            for plan in try PlanCache.shared.plan(for: model).reachablePlans {
                if let known = plans[plan.typeName], known !== plan {
                    throw StoreError(.duplicateTypeName(typeName: plan.typeName))
                }
                plans[plan.typeName] = plan
            }
        }
        // Sources of inverses count as link targets: reading inverses meets them again, and each
        // is then found as the record already decoded rather than decoded once more.
        let linkTargets = plans.values.map(\.schema).linkTargets
            .union(plans.values.flatMap { $0.inverses.map(\.sourcePlan.typeName) })
        self.plans = plans
        self.linkTargets = linkTargets
        deleteRules = try DeleteRules(plans: plans.keys.sorted().compactMap { plans[$0] }, schemaNamed: { plans[$0]?.schema })
        entries = plans.values.map { plan in
            let schema = plan.schema
            let embedded = linkTargets.contains(plan.typeName) ? nil : Self.embeddedSchemas(plan, plans)
            return (model: plan.typeIdentifier, entry: Entry(
                plan: plan,
                isStandalone: embedded != nil,
                embeddedSchemas: embedded ?? [:],
                isLinkTarget: linkTargets.contains(plan.typeName),
                primaryKeyKind: schema.primaryKey.flatMap { schema.property(named: $0)?.kind },
                indexes: IndexKeys.indexes(of: plan) { plans[$0]?.schema }))
        }.sorted { $0.model < $1.model }
    }

    /// The entry of the model type `identifier`, if it is registered.
    private func entry(of identifier: ObjectIdentifier) -> Entry? {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].model < identifier { low = middle + 1 } else { high = middle }
        }
        return low < entries.count && entries[low].model == identifier ? entries[low].entry : nil
    }

    /// The schemas of the models records of `plan` embed, inside containers and at any depth, by
    /// type name; nil when they can hold a link: a model with a primary key, or one not in `plans`.
    private static func embeddedSchemas(_ plan: TypePlan, _ plans: [String: TypePlan]) -> [String: ObjectSchema]? {
        guard plan.hasLinks else { return [:] }
        func models(_ kind: PropertyKind) -> [String] {
            switch kind {
            case .object(let typeName): [typeName]
            case .list(let inner), .set(let inner), .dictionary(let inner), .optional(let inner): models(inner)
            default: []
            }
        }
        var embedded: [String: ObjectSchema] = [:]
        var pending = [plan.schema]
        while let schema = pending.popLast() {
            for property in schema.properties {
                for typeName in models(property.kind) {
                    guard let target = plans[typeName], target.schema.primaryKey == nil else { return nil }
                    if embedded.updateValue(target.schema, forKey: typeName) == nil { pending.append(target.schema) }
                }
            }
        }
        return embedded
    }

    var typeNames: [String] { plans.keys.sorted() }

    func plan(named typeName: String) -> TypePlan? { plans[typeName] }

    /// The plan of a registered model type, found by the type itself: `nil` for any other type.
    func plan(ofType type: Any.Type) -> TypePlan? { entry(of: ObjectIdentifier(type))?.plan }

    func schema(named typeName: String) -> ObjectSchema? { plans[typeName]?.schema }

    /// The entry of the registered model stored as `typeName`.
    func entry(named typeName: String) -> Entry? { plans[typeName].flatMap { entry(of: $0.typeIdentifier) } }

    /// Every registered model's schema, by type name.
    var schemas: [String: ObjectSchema] { plans.mapValues(\.schema) }

    func isLinkTarget(_ typeName: String) -> Bool { linkTargets.contains(typeName) }

    /// The plan of a model type, which must be registered.
    func plan<Model: Persistable>(for type: Model.Type) throws(StoreError) -> TypePlan {
        try entry(for: type).plan
    }

    /// What the store knows about a model type, which must be registered.
    func entry<Model: Persistable>(for type: Model.Type) throws(StoreError) -> Entry {
        guard let entry = entry(of: ObjectIdentifier(type)) else {
            throw StoreError(.unknownModel(typeName: type.persistedTypeName))
        }
        return entry
    }

    /// The storage key for `value` as the primary key of `entry`'s model, checked against the
    /// key property's kind.
    func key(_ value: some RecordPrimitive, for entry: Entry) throws(StoreError) -> StorageKey {
        guard let kind = entry.primaryKeyKind else {
            throw StoreError(.noPrimaryKey(typeName: entry.plan.typeName))
        }
        // An `Int` or `Int64` key of a property stored as either: accepted as the check below would
        // accept its `.int` value, whatever the number.
        if let type = entry.primaryKeyValueType, type == .int || type == .int64, let key = PrimaryKey.integerKey(value) { return key }
        let recordValue = value.recordValue
        let accepted = entry.primaryKeyValueType.map { $0.accepts(recordValue) } ?? kind.accepts(recordValue)
        guard accepted, let key = PrimaryKey.storageKey(for: recordValue) else {
            throw StoreError(.primaryKeyMismatch(
                typeName: entry.plan.typeName, expected: kind.description, found: recordValue.description))
        }
        return key
    }

    /// How the stored schemas differ from the registered models', one sentence per difference,
    /// each naming its type. Types the file has but the registry lacks are not differences: an
    /// app may open a subset.
    func differences(stored storedSchemas: some SchemaSource) -> [String] {
        typeNames.flatMap { typeName -> [String] in
            guard let stored = storedSchemas.schema(named: typeName), let current = schema(named: typeName) else { return [] }
            return Self.differences(from: stored, to: current).map { "\(typeName): \($0)" }
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
