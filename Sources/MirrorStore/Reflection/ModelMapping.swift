import MirrorStoreEngine

/// The conversions between models and records, driven by type plans.
enum ModelMapping {
    static func record<Model: Persistable>(for model: Model) throws(MappingError) -> ManagedObject {
        let plan = try PlanCache.shared.plan(for: type(of: model))
        if plan.isFlat,
           let record = FieldMemory.withFields(of: model, isClass: plan.isClass, { base in singleValuesRecord(at: base, plan: plan) }) {
            return record
        }
        var context = EncodingContext()
        return try record(for: model, plan: plan, context: &context, tracksIdentity: plan.hasLinks)
    }

    /// A flat plan's record: one `switch` per field and no conversion context, which a model
    /// without links or containers never needs (and which costs a visible share of its record).
    /// `nil` for a field that is not a single value, which a flat plan does not have.
    private static func singleValuesRecord(at base: UnsafeRawPointer, plan: TypePlan) -> ManagedObject? {
        var values: [RecordValue] = []
        values.reserveCapacity(plan.slots.count)
        for slot in plan.slots {
            guard let primitive = slot.primitive else { return nil }
            values.append(primitive.recordValue(at: base + slot.offset, optional: slot.isOptional))
        }
        return ManagedObject(objectSchema: plan.schema, values: values)
    }

    /// `tracksIdentity` is off only for a root without links, which nothing else can reach.
    static func record<Model>(
        for model: Model, plan: TypePlan, context: inout EncodingContext, tracksIdentity: Bool = true
    ) throws(MappingError) -> ManagedObject {
        try FieldMemory.withFields(of: model, isClass: plan.isClass) { base throws(MappingError) in
            try record(at: base, plan: plan, context: &context, tracksIdentity: tracksIdentity)
        }
    }

    /// The conversion itself, kept out of generic code: unspecialized generic code would look up
    /// type metadata on every call.
    private static func record(
        at base: UnsafeRawPointer, plan: TypePlan, context: inout EncodingContext, tracksIdentity: Bool
    ) throws(MappingError) -> ManagedObject {
        context.depth += 1
        defer { context.depth -= 1 }
        if let failure = nestingFailure(depth: context.depth, plan: plan) { throw failure }
        let record = ManagedObject(objectSchema: plan.schema, values: [])
        if plan.isClass && tracksIdentity {
            if let existing = context.records[base] { return existing }
            context.records.insert(record, for: base)
        }
        if plan.isClass && context.depth > NestedConversion.recursionLimit {
            context.unfilled.append((record, base, plan))
            return record
        }
        try fill(record, at: base, plan: plan, context: &context)
        if context.depth == NestedConversion.recursionLimit { try fillUnfilled(&context) }
        return record
    }

    /// Fills the records made past ``NestedConversion/recursionLimit``, as
    /// `fillUnfilled(_: inout DecodingContext)` fills instances.
    private static func fillUnfilled(_ context: inout EncodingContext) throws(MappingError) {
        let depth = context.depth
        context.depth = NestedConversion.recursionLimit
        defer { context.depth = depth }
        while let (record, base, plan) = context.unfilled.popLast() {
            try fill(record, at: base, plan: plan, context: &context)
        }
    }

    /// Reads the fields of the instance at `base` into `record`.
    private static func fill(
        _ record: ManagedObject, at base: UnsafeRawPointer, plan: TypePlan, context: inout EncodingContext
    ) throws(MappingError) {
        var values: [RecordValue] = []
        values.reserveCapacity(plan.fields.count)
        // Through a buffer, so no accessor is retained and released per field.
        let slots = plan.slots
        try plan.fields.withUnsafeBufferPointer { fields throws(MappingError) in
            for index in fields.indices {
                let slot = slots[index]
                if let primitive = slot.primitive {
                    values.append(primitive.recordValue(at: base + slot.offset, optional: slot.isOptional))
                    continue
                }
                do throws(MappingError) {
                    values.append(try fields[index].read(from: base, in: &context))
                } catch {
                    throw error.nested(under: fields[index].name).reported(from: plan.typeName)
                }
            }
        }
        record.values = values
    }

    static func model<Model: Persistable>(_ type: Model.Type, from record: ManagedObject) throws(MappingError) -> Model {
        let plan = try PlanCache.shared.plan(for: type)
        if isFlatRecord(record, of: plan) {
            var instance = plan.newInstance(Model.self)
            try FieldMemory.withMutableFields(of: &instance, isClass: plan.isClass) { base throws(MappingError) in
                try fillSingleValues(base, from: record, plan: plan)
            }
            return instance
        }
        var context = DecodingContext()
        return try model(type, from: record, plan: plan, context: &context, tracksIdentity: plan.hasLinks)
    }

    /// Whether `record` was made by `plan` and the plan is flat: its values then line up with the
    /// plan's single-value slots.
    private static func isFlatRecord(_ record: ManagedObject, of plan: TypePlan) -> Bool {
        plan.isFlat && record.objectSchema === plan.schema && record.values.count == plan.slots.count
    }

    /// A flat plan's fields from a record made by that plan: one inlined `switch` per field,
    /// nothing to track inside, since such a model links to nothing. Out of line: it also serves
    /// linked models inside a conversion, whose frame sits on the stack once per link.
    @inline(never)
    private static func fillSingleValues(_ base: UnsafeMutableRawPointer, from record: ManagedObject, plan: TypePlan) throws(MappingError) {
        try fillSingleValues(base, values: record.valuesInPlace, plan: plan)
    }

    /// A flat plan's fields from one value per field, in schema order (checked by the caller).
    /// Inlined into each caller, so the record path keeps its single out-of-line frame.
    @inline(__always)
    static func fillSingleValues(_ base: UnsafeMutableRawPointer, values: UnsafeBufferPointer<RecordValue>, plan: TypePlan) throws(MappingError) {
        let slots = plan.slots
        for index in slots.indices {
            let slot = slots[index]
            guard let primitive = slot.primitive,
                  primitive.assignInline(values[index], to: base + slot.offset, optional: slot.isOptional) else {
                let field = plan.fields[index]
                throw MappingError.mismatch(expected: field.kind, found: values[index]).nested(under: field.name).reported(from: plan.typeName)
            }
        }
    }

    static func model<Model: Persistable>(
        _ type: Model.Type, from record: ManagedObject, plan: TypePlan,
        context: inout DecodingContext, tracksIdentity: Bool = true
    ) throws(MappingError) -> Model {
        context.depth += 1
        defer { context.depth -= 1 }
        if let failure = nestingFailure(depth: context.depth, plan: plan) { throw failure }
        if plan.isClass && tracksIdentity, let existing = context.instance(madeFrom: record) {
            return try instance(existing, as: type, plan: plan)
        }
        if let failure = recordTypeFailure(record, plan: plan) { throw failure }
        if let recipe = plan.freshRecipe {
            // Such a plan has no inverses and is a struct, which nothing can reach twice.
            return try EmptyInstance.construct(type, recipe: recipe) { base throws(MappingError) in
                try fill(base, from: record, plan: plan, context: &context)
            }
        }
        var instance = plan.newInstance(Model.self)
        if plan.isClass && tracksIdentity {
            context.remember(FieldMemory.object(instance), madeFrom: record)
        }
        if plan.isClass && context.depth > NestedConversion.recursionLimit {
            context.unfilled.append((FieldMemory.object(instance), record, plan))
            return instance
        }
        try FieldMemory.withMutableFields(of: &instance, isClass: plan.isClass) { base throws(MappingError) in
            try fillInstance(base, from: record, plan: plan, context: &context)
        }
        if context.depth == NestedConversion.recursionLimit { try fillUnfilled(&context) }
        return instance
    }

    /// Fills the instances made past ``NestedConversion/recursionLimit``, in a loop at the
    /// limit: what they link to past it is made and queued in turn, so the stack stays as deep
    /// as the limit whatever the length of the chain.
    static func fillUnfilled(_ context: inout DecodingContext) throws(MappingError) {
        let depth = context.depth
        context.depth = NestedConversion.recursionLimit
        defer { context.depth = depth }
        while let (instance, record, plan) = context.unfilled.popLast() {
            try fillInstance(Unmanaged.passUnretained(instance).toOpaque(), from: record, plan: plan, context: &context)
        }
    }

    /// `model(_:from:plan:context:)` for a class plan, with no generic parameter: containers of
    /// linked class models call it once per element, with the element's uninitialised storage,
    /// where the generic conversion costs an unspecialised call, and its caller an unspecialised
    /// append. When a field of the new instance fails, the slot holds the instance and the error
    /// says so, for the caller to release it.
    static func object(
        from linked: Unmanaged<ManagedObject>, plan: TypePlan, initializeObject: (UnsafeMutableRawPointer) -> Void,
        into slot: UnsafeMutablePointer<AnyObject>, context: inout DecodingContext
    ) throws(ObjectFailure) {
        var failure: ObjectFailure?
        // Borrowed: the caller's container holds the record for the whole conversion.
        linked._withUnsafeGuaranteedRef { record in
            do throws(ObjectFailure) {
                try object(from: record, plan: plan, initializeObject: initializeObject, into: slot, context: &context)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    @inline(__always)
    private static func object(
        from record: ManagedObject, plan: TypePlan, initializeObject: (UnsafeMutableRawPointer) -> Void,
        into slot: UnsafeMutablePointer<AnyObject>, context: inout DecodingContext
    ) throws(ObjectFailure) {
        context.depth += 1
        defer { context.depth -= 1 }
        if let failure = nestingFailure(depth: context.depth, plan: plan) {
            throw ObjectFailure(error: failure, initializedSlot: false)
        }
        if let existing = context.instance(madeFrom: record) {
            guard ObjectIdentifier(type(of: existing)) == plan.typeIdentifier || isInstance(existing, of: plan.modelType) else {
                throw ObjectFailure(error: wrongInstance(existing, plan: plan), initializedSlot: false)
            }
            slot.initialize(to: existing)
            return
        }
        if let failure = recordTypeFailure(record, plan: plan) {
            throw ObjectFailure(error: failure, initializedSlot: false)
        }
        initializeObject(UnsafeMutableRawPointer(slot))
        // Not retained: the slot owns the new instance.
        let instance = UnsafeRawPointer(slot).load(as: Unmanaged<AnyObject>.self)
        instance._withUnsafeGuaranteedRef { context.remember($0, madeFrom: record) }
        if context.depth > NestedConversion.recursionLimit {
            context.unfilled.append((instance.takeUnretainedValue(), record, plan))
            return
        }
        do throws(MappingError) {
            try fillInstance(instance.toOpaque(), from: record, plan: plan, context: &context)
            if context.depth == NestedConversion.recursionLimit { try fillUnfilled(&context) }
        } catch {
            throw ObjectFailure(error: error, initializedSlot: true)
        }
    }

    /// Why `object(from:plan:initializeObject:into:context:)` failed, and whether the slot holds
    /// an instance its caller must release.
    struct ObjectFailure: Error {
        let error: MappingError
        let initializedSlot: Bool
    }

    /// Whether `object` is a `type`, subclasses included: what the generic conversion's cast allows.
    @inline(never)
    private static func isInstance(_ object: AnyObject, of type: any Persistable.Type) -> Bool {
        func check<Model: Persistable>(_: Model.Type) -> Bool { object is Model }
        return check(type)
    }

    /// A new instance whose fields `decode` fills through the sink it is given: for readers that
    /// decode stored bytes straight into the model, with no record in between. Nothing else can
    /// refer to the instance, so it is not identity-tracked.
    static func model<Model: Persistable>(
        _ type: Model.Type, plan: TypePlan, context: inout DecodingContext,
        decode: (inout ModelFieldSink) throws -> Void
    ) throws -> Model {
        if let recipe = plan.freshRecipe {
            return try EmptyInstance.construct(type, recipe: recipe) { base in
                try fill(base, plan: plan, context: &context, decode: decode)
            }
        }
        var instance = plan.newInstance(Model.self)
        try FieldMemory.withMutableFields(of: &instance, isClass: plan.isClass) { base in
            try fill(base, plan: plan, context: &context, decode: decode)
        }
        return instance
    }

    private static func fill(
        _ base: UnsafeMutableRawPointer, plan: TypePlan, context: inout DecodingContext,
        decode: (inout ModelFieldSink) throws -> Void
    ) throws {
        try withUnsafeMutablePointer(to: &context) { context in
            var sink = ModelFieldSink(base: base, plan: plan, context: context)
            try decode(&sink)
            try sink.checkComplete()
        }
    }

    /// Fills a new instance's fields and inverses from `record`.
    private static func fillInstance(
        _ base: UnsafeMutableRawPointer, from record: ManagedObject, plan: TypePlan, context: inout DecodingContext
    ) throws(MappingError) {
        if isFlatRecord(record, of: plan) {
            try fillSingleValues(base, from: record, plan: plan)
            return
        }
        try fill(base, from: record, plan: plan, context: &context)
        if !plan.inverses.isEmpty {
            try InverseFilling.fill(base, from: record, plan: plan, context: &context)
        }
    }

    /// An instance already made from this record, seen again through a shared link or a cycle.
    /// Apart from the hot path: the cast needs `Optional<Model>`'s metadata, which unspecialized
    /// code would otherwise look up on every call.
    @inline(never)
    private static func instance<Model>(_ existing: AnyObject, as type: Model.Type, plan: TypePlan) throws(MappingError) -> Model {
        guard let instance = existing as? Model else { throw wrongInstance(existing, plan: plan) }
        return instance
    }

    /// The error for a conversion nested `depth` links deep when the thread's stack runs low.
    @inline(__always)
    private static func nestingFailure(depth: Int, plan: TypePlan) -> MappingError? {
        guard StackRoom.runsOut(atDepth: depth) else { return nil }
        return MappingError(.nestingTooDeep(levels: depth), modelType: plan.typeName)
    }

    /// The error for a record of another type than `plan`'s.
    @inline(__always)
    private static func recordTypeFailure(_ record: ManagedObject, plan: TypePlan) -> MappingError? {
        let schema = record.objectSchema
        if schema === plan.schema || schema.typeName == plan.typeName { return nil }
        return MappingError(.wrongRecordType(expected: plan.typeName, found: schema.typeName), modelType: plan.typeName)
    }

    /// The error for an instance, already made from a record, that is not of `plan`'s type.
    private static func wrongInstance(_ existing: AnyObject, plan: TypePlan) -> MappingError {
        MappingError(.wrongRecordType(expected: plan.typeName, found: "\(Swift.type(of: existing))"), modelType: plan.typeName)
    }

    /// Writes the record's values into the instance at `base`; non-generic, like `record(at:…)`.
    private static func fill(
        _ base: UnsafeMutableRawPointer, from record: ManagedObject, plan: TypePlan, context: inout DecodingContext
    ) throws(MappingError) {
        let schema = record.objectSchema
        let values = record.valuesInPlace
        let fields = plan.fields
        // Records made from this plan line up with its fields; others are matched by name.
        if schema === plan.schema || schema == plan.schema, values.count == fields.count {
            // Through a buffer, so no accessor is retained and released per field. One closure
            // only: conversion recurses once per link, and each frame counts on deep chains.
            let slots = plan.slots
            try fields.withUnsafeBufferPointer { fields throws(MappingError) in
                for index in fields.indices {
                    // `write(_:field:slot:to:plan:context:)`, written out: this loop is on the
                    // recursive path, and a call here is one more frame per link.
                    let slot = slots[index]
                    if let primitive = slot.primitive {
                        guard primitive.assign(values[index], to: base + slot.offset, optional: slot.isOptional) else {
                            throw MappingError.mismatch(expected: fields[index].kind, found: values[index])
                                .nested(under: fields[index].name).reported(from: plan.typeName)
                        }
                        continue
                    }
                    do throws(MappingError) {
                        try fields[index].write(values[index], to: base, in: &context)
                    } catch {
                        throw error.nested(under: fields[index].name).reported(from: plan.typeName)
                    }
                }
            }
            return
        }
        for (field, slot) in zip(fields, plan.slots) {
            guard let position = schema.index(ofProperty: field.name), values.indices.contains(position) else {
                throw MappingError(.missingProperty, modelType: plan.typeName, path: [field.name])
            }
            try write(values[position], field: field, slot: slot, to: base, plan: plan, context: &context)
        }
    }

    /// Writes one value into its field: single-value types through their slot's `switch`, the
    /// others through their accessor. Errors name the field and the plan's type.
    static func write(
        _ value: RecordValue, field: any FieldAccessor, slot: FieldSlot,
        to base: UnsafeMutableRawPointer, plan: TypePlan, context: inout DecodingContext
    ) throws(MappingError) {
        if let primitive = slot.primitive {
            guard primitive.assign(value, to: base + slot.offset, optional: slot.isOptional) else {
                throw MappingError.mismatch(expected: field.kind, found: value).nested(under: field.name).reported(from: plan.typeName)
            }
            return
        }
        do throws(MappingError) {
            try field.write(value, to: base, in: &context)
        } catch {
            throw error.nested(under: field.name).reported(from: plan.typeName)
        }
    }
}
