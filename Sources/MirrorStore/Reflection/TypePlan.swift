import MirrorStoreEngine

/// Everything reflection learned about one model type: its schema and one accessor per stored
/// property. Built once per type, then shared by every conversion.
///
/// `fields` and `schema` are filled in while the plan is being built, before any other thread can
/// see it: `PlanCache` publishes plans only once they are complete, under its lock. After that the
/// plan is never mutated, which is why the unchecked `Sendable` is sound.
final class TypePlan: @unchecked Sendable {
    let typeName: String
    let modelType: any Persistable.Type
    let typeIdentifier: ObjectIdentifier
    let isClass: Bool
    /// Taken once here for the plan's reads from bytes (`RawCursor`), not once per string read.
    let smallStrings = UTF8Text.smallStrings
    /// For a class model: initialises the reference at an address with a new instance, from
    /// ``freshObject`` when there is one, from the model's `init()` otherwise. Lets linked class
    /// models be made without a generic parameter (see
    /// `ModelMapping.object(from:plan:initializeObject:into:context:)`); storing in place moves the new reference
    /// where a returned `AnyObject` would be a copy of it.
    private(set) var initializeObject: ((UnsafeMutableRawPointer) -> Void)?
    // Unchecked exclusivity: set only while building, read-only afterwards, so no two accesses can
    // overlap, and the dynamic check cost as much as a field conversion.
    @exclusivity(unchecked) private(set) var fields: [any FieldAccessor] = []
    /// One per field, in the same order: lets the mapping convert single-value fields without a
    /// dynamic call. In memory the plan owns, not an array: reading an array from a class retains
    /// its buffer, and on the flat path that retain and its release cost more than a field.
    @exclusivity(unchecked) private(set) var slots = UnsafeBufferPointer<FieldSlot>(start: nil, count: 0)
    @exclusivity(unchecked) private(set) var schema: ObjectSchema
    /// The model's `LinkingObjects` properties: not in the schema, filled by store reads.
    @exclusivity(unchecked) private(set) var inverses: [any InverseField] = []
    /// Whether the type links to other models, so one graph may reach an instance twice.
    private(set) var hasLinks = false
    /// Whether every field holds a single value and nothing else is filled: such a model is made
    /// from a record by one loop over its slots, with no conversion context.
    private(set) var isFlat = false
    /// For a struct that stores a `let` property: how to initialise a fresh value, which is then
    /// filled from the record instead of an instance from `init()` (see `EmptyInstance`).
    private(set) var freshRecipe: EmptyRecipe?
    /// When every field can be read from stored bytes straight into its place (single values,
    /// arrays and sets of them, embedded structs whose fields can): the steps that fill an
    /// instance from `init()` so (`FlatModelReading.swift`). In memory the plan owns, as `slots`.
    @exclusivity(unchecked) private(set) var directSteps: UnsafeBufferPointer<DirectStep>?
    /// The index in ``directSteps`` of the primary key's step, or -1.
    private(set) var directKeyStep = -1
    /// How many embedded records deep ``directSteps`` reach.
    private(set) var directNesting = 0
    /// Whether the plan has a field for every stored property of the type: nothing ignored, lazy
    /// or an inverse, which a fill in place would leave as the instance had it.
    private var coversEveryStoredField = false

    /// ``directSteps`` when they can fill this model embedded in another, in the place the other
    /// model's `init()` gave it: a struct (a class would be shared with whatever else holds that
    /// instance) without a primary key (so it is embedded, not linked), made by `init()`, whose
    /// every stored property the record sets (filling it in place then leaves the same value as
    /// filling a new one).
    var embeddableSteps: UnsafeBufferPointer<DirectStep>? {
        guard !isClass, schema.primaryKey == nil, coversEveryStoredField else { return nil }
        return directSteps
    }
    /// For a class whose every stored property, its superclasses' included, is in the record:
    /// how to make an instance without running `init()`, for the record to fill (see
    /// `FreshObjectRecipe`). `nil` for other classes, whose instances come from `init()`, which
    /// gives the properties the record does not hold their values.
    @exclusivity(unchecked) private(set) var freshObject: FreshObjectRecipe?
    /// ``freshObject`` without a retain of its own (the plan keeps it alive), so that reading it
    /// per instance made retains nothing.
    @exclusivity(unchecked) private(set) var unretainedFreshObject: FreshObjectRecipe.Unretained?

    private init(type: any Persistable.Type) {
        typeName = type.persistedTypeName
        modelType = type
        typeIdentifier = ObjectIdentifier(type)
        isClass = type is AnyClass
        initializeObject = isClass ? Self.objectInitializer(type) : nil
        schema = ObjectSchema(typeName: typeName, properties: [])
    }

    private static func objectInitializer<Model: Persistable>(_ type: Model.Type) -> (UnsafeMutableRawPointer) -> Void {
        Model._autoMalloc(into:)
    }

    /// This plan and the plans of every model it links to, at any depth, each once.
    var reachablePlans: [TypePlan] {
        var found: [TypePlan] = []
        var seen = Set<ObjectIdentifier>()
        var pending = [self]
        while let plan = pending.popLast() {
            guard seen.insert(plan.typeIdentifier).inserted else { continue }
            found.append(plan)
            pending.append(contentsOf: plan.fields.flatMap(\.linkedPlans))
            // An inverse's source must be registered for the store to read it.
            pending.append(contentsOf: plan.inverses.map(\.sourcePlan))
        }
        return found
    }

    deinit {
        slots.deallocate()
        directSteps?.deallocate()
    }

    /// Drops the accessors of a plan that failed to build and will never be published.
    func discard() {
        fields = []
        inverses = []
    }

    static func build(for type: any Persistable.Type, factory: inout CodecFactory) throws(MappingError) -> TypePlan {
        let plan = TypePlan(type: type)
        factory.plans[plan.typeIdentifier] = plan
        factory.newPlans.append(plan)
        do throws(MappingError) {
            try plan.fill(type: type, factory: &factory)
        } catch {
            throw error.reported(from: plan.typeName)
        }
        return plan
    }

    private func fill(type: any Persistable.Type, factory: inout CodecFactory) throws(MappingError) {
        guard let storedFields = FieldLayout.storedFields(of: type) else {
            throw MappingError(.unsupportedModel("only structs and classes can be models"), modelType: typeName)
        }
        let ignored = type.ignoredProperties
        var declaredNames = Set<String>()
        var accessors: [any FieldAccessor] = []
        var inverseCandidates: [InverseCandidate] = []
        var storesConstant = false
        // Whether the record holds every stored property, so an instance can be made without `init()`.
        var persistsEveryField = true
        for field in storedFields {
            // A lazy property is a cache its model recomputes on demand, so it is not stored.
            if field.isLazyStorage {
                declaredNames.insert(field.declaredName)
                persistsEveryField = false
                continue
            }
            declaredNames.insert(field.name)
            if ignored.contains(field.name) {
                persistsEveryField = false
                continue
            }
            let path = [field.name]
            guard field.isStrong else { throw MappingError(.nonStrongReference, modelType: typeName, path: path) }
            if !field.isVar {
                guard !isClass else { throw MappingError(.immutableProperty, modelType: typeName, path: path) }
                storesConstant = true
            }
            if let relationship = field.type as? any InverseRelationship.Type {
                inverseCandidates.append(InverseCandidate(field: field, relationship: relationship))
                persistsEveryField = false
                continue
            }
            do throws(CodecFactory.Failure) {
                accessors.append(try factory.accessor(for: field.type, name: field.name, offset: field.offset))
            } catch {
                switch error {
                case .unsupported:
                    throw MappingError(.unsupportedType("\(field.type)"), modelType: typeName, path: path)
                case .enumWithoutRawValue(let enumType):
                    throw MappingError(.unsupportedEnum(declared: "\(field.type)", enumType: "\(enumType)"), modelType: typeName, path: path)
                case .nestedModel(let nested):
                    throw nested.nested(under: field.name)
                }
            }
        }
        for name in ignored where !declaredNames.contains(name) {
            throw MappingError(.unknownPropertyName(role: "ignoredProperties"), modelType: typeName, path: [name])
        }
        let indexed = type.indexedProperties
        for name in indexed where !accessors.contains(where: { $0.name == name }) {
            throw MappingError(.unknownPropertyName(role: "indexedProperties"), modelType: typeName, path: [name])
        }
        for name in type.uniqueProperties where !accessors.contains(where: { $0.name == name }) {
            throw MappingError(.unknownPropertyName(role: "uniqueProperties"), modelType: typeName, path: [name])
        }
        for name in type.insensitiveIndexedProperties {
            guard let field = accessors.first(where: { $0.name == name }) else {
                throw MappingError(.unknownPropertyName(role: "insensitiveIndexedProperties"), modelType: typeName, path: [name])
            }
            guard field.kind == .string || field.kind == .optional(.string) else {
                throw MappingError(
                    .unsupportedModel("insensitiveIndexedProperties lists a \(field.kind) property; it indexes String and String? properties"),
                    modelType: typeName, path: [name])
            }
        }
        for compound in type.compoundIndexes {
            guard compound.properties.count >= 2, Set(compound.properties).count == compound.properties.count else {
                throw MappingError(.unsupportedModel("the compound index \(compound) must name two or more different properties"), modelType: typeName)
            }
            for name in compound.properties {
                guard let field = accessors.first(where: { $0.name == name }) else {
                    throw MappingError(.unknownPropertyName(role: "compoundIndexes"), modelType: typeName, path: [name])
                }
                guard CompoundIndex.accepts(field.kind) else {
                    throw MappingError(
                        .unsupportedModel("the compound index \(compound) cannot include a \(field.kind) property; it takes numbers, strings, dates, booleans, UUIDs, data and optionals of them"),
                        modelType: typeName, path: [name])
                }
            }
        }
        let primaryKey = type.primaryKey
        if let primaryKey {
            guard let field = accessors.first(where: { $0.name == primaryKey }) else {
                throw MappingError(.unknownPropertyName(role: "primaryKey"), modelType: typeName, path: [primaryKey])
            }
            guard field.kind.canBePrimaryKey else {
                throw MappingError(.unsupportedPrimaryKey(field.kind.description), modelType: typeName, path: [primaryKey])
            }
        }
        if storesConstant {
            if let inverse = inverseCandidates.first {
                throw MappingError(
                    .unsupportedModel("a struct with 'let' properties is built without init(), which LinkingObjects needs to know its source; declare the struct's properties 'var'"),
                    modelType: typeName, path: [inverse.field.name])
            }
            switch EmptyInstance.recipe(for: type) {
            case .success(let recipe):
                freshRecipe = recipe
            case .failure(let missing):
                throw MappingError(.noEmptyValue(type: missing.typeName), modelType: typeName, path: [missing.property])
            }
        }
        if persistsEveryField, factory.makesFreshObjects, let classType = type as? AnyClass,
           let recipe = EmptyInstance.objectRecipe(for: classType, fields: storedFields) {
            freshObject = recipe
            unretainedFreshObject = recipe.unretained
            initializeObject = recipe.initialize
        }
        inverses = try InverseCandidate.fields(inverseCandidates, of: type, isClass: isClass, factory: &factory)
        fields = accessors
        let slots = UnsafeMutableBufferPointer<FieldSlot>.allocate(capacity: accessors.count)
        _ = slots.initialize(from: accessors.map(\.slot))
        self.slots = UnsafeBufferPointer(slots)
        hasLinks = accessors.contains { $0.kind.containsLink }
        isFlat = slots.allSatisfy { $0.primitive != nil } && inverses.isEmpty && freshRecipe == nil
        coversEveryStoredField = accessors.count == storedFields.count
        if inverses.isEmpty, freshRecipe == nil,
           let program = DirectStep.program(for: accessors, keyPosition: accessors.firstIndex { $0.name == primaryKey }) {
            let steps = UnsafeMutableBufferPointer<DirectStep>.allocate(capacity: program.steps.count)
            _ = steps.initialize(from: program.steps)
            directSteps = UnsafeBufferPointer(steps)
            directKeyStep = program.keyStep
            directNesting = program.nesting
        }
        schema = ObjectSchema(
            typeName: typeName,
            properties: accessors.map { field in
                ObjectSchema.Property(
                    name: field.name, kind: field.kind,
                    isPrimaryKey: field.name == primaryKey, isIndexed: indexed.contains(field.name))
            },
            ignoredProperties: ignored)
    }
}

extension PropertyKind {
    /// Whether values of this kind can identify a record: integers, strings and UUIDs.
    var canBePrimaryKey: Bool { storedValueType?.canBePrimaryKey == true }
}
