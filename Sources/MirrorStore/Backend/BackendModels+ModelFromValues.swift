extension BackendModels {
    /// A model of `type` made from the values of its stored properties, in the order of its
    /// schema's `properties`: straight into the model, with no ``ManagedObject`` in between, when
    /// every property is a single value; through a record otherwise (links, containers, embedded
    /// models and enums), as ``Persistable/modelInstance(managedObject:)`` makes it.
    ///
    /// A backend that reads rows calls it once per row: the values are checked as the record
    /// path checks them, and the model is the one that path makes.
    ///
    /// ```swift
    /// let hero = try models.model(Hero.self, values: [.int(1), .string("Hulk")])
    /// ```
    ///
    /// - Throws: ``MappingError`` naming the property when a value does not fit it (another
    ///   type, an integer out of range, `null` for a property that is not optional), or when
    ///   `values` has another count than the type has properties.
    public func model<Model: Persistable>(_ type: Model.Type, values: [RecordValue]) throws -> Model {
        try ModelMapping.model(type, values: values)
    }
}

extension ModelMapping {
    /// ``BackendModels/model(_:values:)``: a flat plan's fields filled from `values`, one inlined
    /// assignment per field, as a flat record fills them; any other plan through a record.
    static func model<Model: Persistable>(_ type: Model.Type, values: [RecordValue]) throws(MappingError) -> Model {
        let plan = try PlanCache.shared.plan(for: type)
        let slots = plan.slots
        guard values.count == slots.count else {
            throw MappingError(
                .unsupportedModel("\(values.count) values were given for the model's \(slots.count) properties"), modelType: plan.typeName)
        }
        guard plan.isFlat else { return try model(type, from: ManagedObject(objectSchema: plan.schema, values: values)) }
        var instance = Model._autoMalloc()
        try FieldMemory.withMutableFields(of: &instance, isClass: plan.isClass) { base throws(MappingError) in
            for index in slots.indices {
                let slot = slots[index]
                guard let primitive = slot.primitive,
                      primitive.assignInline(values[index], to: base + slot.offset, optional: slot.isOptional) else {
                    let field = plan.fields[index]
                    throw MappingError.mismatch(expected: field.kind, found: values[index]).nested(under: field.name).reported(from: plan.typeName)
                }
            }
        }
        return instance
    }
}
