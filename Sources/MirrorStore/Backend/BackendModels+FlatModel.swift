extension BackendModels {
    /// A model of `type` made straight from the values of its stored properties, in the order of
    /// its schema's `properties`, with no ``ManagedObject`` in between; or `nil` when not every
    /// property of `type` is a single value (links, containers, embedded models and enums go
    /// through ``Persistable/modelInstance(managedObject:)``, which follows them).
    ///
    /// A backend that reads rows calls it once per row: the values are checked as the record
    /// path checks them, and the model is the one that path makes.
    ///
    /// ```swift
    /// let values: [RecordValue] = [.int(1), .string("Hulk")]
    /// let hero = try values.withUnsafeBufferPointer { try models.flatModel(Hero.self, values: $0) }
    /// ```
    ///
    /// - Throws: ``MappingError`` naming the property when a value does not fit it (another
    ///   type, an integer out of range, `null` for a property that is not optional), or when
    ///   `values` has another count than the type has properties.
    public func flatModel<Model: Persistable>(_ type: Model.Type, values: UnsafeBufferPointer<RecordValue>) throws -> Model? {
        try ModelMapping.flatModel(type, values: values)
    }
}

extension ModelMapping {
    /// ``BackendModels/flatModel(_:values:)``: the flat plan's fields filled from `values`, one
    /// inlined assignment per field, as a flat record fills them.
    static func flatModel<Model: Persistable>(
        _ type: Model.Type, values: UnsafeBufferPointer<RecordValue>
    ) throws(MappingError) -> Model? {
        let plan = try PlanCache.shared.plan(for: type)
        guard plan.isFlat else { return nil }
        let slots = plan.slots
        guard values.count == slots.count else {
            throw MappingError(
                .unsupportedModel("\(values.count) values were given for the model's \(slots.count) properties"), modelType: plan.typeName)
        }
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
