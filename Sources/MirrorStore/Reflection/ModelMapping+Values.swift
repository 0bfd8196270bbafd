extension ModelMapping {
    /// A model of `type` from the values of its stored properties in schema order (for backends
    /// that read rows): a flat plan's fields filled from `values`, one inlined assignment per
    /// field, as a flat record fills them; any other plan through a record.
    static func model<Model: Persistable>(_ type: Model.Type, values: [RecordValue]) throws(MappingError) -> Model {
        let plan = try PlanCache.shared.plan(for: type)
        let slots = plan.slots
        guard values.count == slots.count else {
            throw MappingError(
                .unsupportedModel("\(values.count) values were given for the model's \(slots.count) properties"), modelType: plan.typeName)
        }
        guard plan.isFlat else { return try model(type, from: ManagedObject(objectSchema: plan.schema, values: values)) }
        var instance = plan.newInstance(Model.self)
        try FieldMemory.withMutableFields(of: &instance, isClass: plan.isClass) { base throws(MappingError) in
            try values.withUnsafeBufferPointer { values throws(MappingError) in
                try fillSingleValues(base, values: values, plan: plan)
            }
        }
        return instance
    }
}
