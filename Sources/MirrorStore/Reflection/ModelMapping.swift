/// The conversions between models and records, driven by type plans.
enum ModelMapping {
    static func record<Model: Persistable>(for model: Model) throws(MappingError) -> ManagedObject {
        let plan = try PlanCache.shared.plan(for: type(of: model))
        var context = EncodingContext()
        return try record(for: model, plan: plan, context: &context, tracksIdentity: plan.hasLinks)
    }

    /// `tracksIdentity` is off only for a root without links, which nothing else can reach.
    static func record<Model>(
        for model: Model, plan: TypePlan, context: inout EncodingContext, tracksIdentity: Bool = true
    ) throws(MappingError) -> ManagedObject {
        try FieldMemory.withFields(of: model, isClass: plan.isClass) { base throws(MappingError) in
            let record = ManagedObject(objectSchema: plan.schema, values: [])
            if plan.isClass && tracksIdentity {
                if let existing = context.records[base] { return existing }
                context.records[base] = record
            }
            var values: [RecordValue] = []
            values.reserveCapacity(plan.fields.count)
            for field in plan.fields {
                do throws(MappingError) {
                    values.append(try field.read(from: base, in: &context))
                } catch {
                    throw error.nested(under: field.name).reported(from: plan.typeName)
                }
            }
            record.values = values
            return record
        }
    }

    static func model<Model: Persistable>(_ type: Model.Type, from record: ManagedObject) throws(MappingError) -> Model {
        let plan = try PlanCache.shared.plan(for: type)
        var context = DecodingContext()
        return try model(type, from: record, plan: plan, context: &context, tracksIdentity: plan.hasLinks)
    }

    static func model<Model: Persistable>(
        _ type: Model.Type, from record: ManagedObject, plan: TypePlan,
        context: inout DecodingContext, tracksIdentity: Bool = true
    ) throws(MappingError) -> Model {
        let recordIdentifier = ObjectIdentifier(record)
        if plan.isClass && tracksIdentity, let existing = context.instances[recordIdentifier] {
            if let instance = existing as? Model { return instance }
            throw MappingError(
                .wrongRecordType(expected: plan.typeName, found: "\(Swift.type(of: existing))"), modelType: plan.typeName)
        }
        let schema = record.objectSchema
        guard schema.typeName == plan.typeName else {
            throw MappingError(.wrongRecordType(expected: plan.typeName, found: schema.typeName), modelType: plan.typeName)
        }
        var instance = Model._autoMalloc()
        if plan.isClass && tracksIdentity {
            context.instances[recordIdentifier] = instance as AnyObject
        }
        // Records made from this plan line up with its fields; others are matched by name.
        let alignedWithPlan = schema === plan.schema || schema == plan.schema
        let values = record.values
        try FieldMemory.withMutableFields(of: &instance, isClass: plan.isClass) { base throws(MappingError) in
            for (index, field) in plan.fields.enumerated() {
                let position = alignedWithPlan ? index : schema.index(ofProperty: field.name)
                guard let position, values.indices.contains(position) else {
                    throw MappingError(.missingProperty, modelType: plan.typeName, path: [field.name])
                }
                do throws(MappingError) {
                    try field.write(values[position], to: base, in: &context)
                } catch {
                    throw error.nested(under: field.name).reported(from: plan.typeName)
                }
            }
        }
        return instance
    }
}
