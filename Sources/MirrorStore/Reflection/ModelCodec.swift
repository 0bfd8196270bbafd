/// A to-one link to another model, stored as a linked record.
struct ModelCodec<Model: Persistable>: ValueCodec {
    let plan: TypePlan

    var kind: PropertyKind { .object(typeName: plan.typeName) }
    var linkedPlans: [TypePlan] { [plan] }
    /// Only a struct: an embedded class is a new instance per record, never filled in place.
    var directRead: DirectRead? { plan.isClass ? nil : .embedded(plan) }

    func encode(_ value: Model, in context: inout EncodingContext) throws(MappingError) -> RecordValue {
        if plan.isClass, ObjectIdentifier(type(of: value)) != plan.typeIdentifier {
            throw MappingError(
                .subclassInstance(declared: "\(Model.self)", actual: "\(type(of: value))"), modelType: "")
        }
        return .object(try ModelMapping.record(for: value, plan: plan, context: &context))
    }

    @inline(__always)
    func decode(_ record: RecordValue, in context: inout DecodingContext) throws(MappingError) -> Model {
        guard case .object(let object) = record else { throw mismatch(record) }
        return try ModelMapping.model(Model.self, from: object, plan: plan, context: &context)
    }
}

/// `[Model]` for a linked model: `ArrayCodec`'s loops with the element codec's concrete type, so
/// it is called directly, and inlined, once per element of every to-many list. Not `ArrayCodec`
/// made generic over its element codec: unspecialised, that calls the codec through its witness
/// table, which measured 2.6% more instructions on nested record → model.
struct ModelArrayCodec<Model: Persistable>: ValueCodec {
    let element: ModelCodec<Model>

    var kind: PropertyKind { .list(element.kind) }
    var linkedPlans: [TypePlan] { element.linkedPlans }

    func encode(_ value: [Model], in context: inout EncodingContext) throws(MappingError) -> RecordValue {
        var list: [RecordValue] = []
        list.reserveCapacity(value.count)
        for index in value.indices {
            do throws(MappingError) {
                list.append(try element.encode(value[index], in: &context))
            } catch {
                throw error.nested(under: "[\(index)]")
            }
        }
        return .list(List(list))
    }

    func decode(_ record: RecordValue, in context: inout DecodingContext) throws(MappingError) -> [Model] {
        guard case .list(let list) = record else { throw mismatch(record) }
        if let initializeObject = element.plan.initializeObject {
            return try objects(from: list.elements, initializeObject: initializeObject, in: &context)
        }
        var result: [Model] = []
        result.reserveCapacity(list.count)
        for index in list.indices {
            do throws(MappingError) {
                result.append(try element.decode(list[index], in: &context))
            } catch {
                throw error.nested(under: "[\(index)]")
            }
        }
        return result
    }

    /// A list of class models: each made by the non-generic conversion right in the array's
    /// storage, with no unspecialised call, cast or append per element.
    ///
    /// The array is built as `[AnyObject]` and reinterpreted as `[Model]`: an array of a class has
    /// the representation of an array of `AnyObject` (the standard library's own array casts
    /// between class types reuse the storage the same way), and building a `[Model]` here, in
    /// unspecialised code, would look the type of its storage up at run time on every call.
    private func objects(
        from records: [RecordValue], initializeObject: (UnsafeMutableRawPointer) -> Void, in context: inout DecodingContext
    ) throws(MappingError) -> [Model] {
        // Made for no element, the array is the shared empty one, and the initializer would
        // still write its count there: a data race between threads converting empty lists.
        if records.isEmpty { return [] }
        let plan = element.plan
        var failure: MappingError?
        let objects = [AnyObject](unsafeUninitializedCapacity: records.count) { buffer, count in
            guard let start = buffer.baseAddress else { return }
            for index in records.indices {
                // Not retained: `records` holds the linked record throughout.
                let linked: Unmanaged<ManagedObject>
                if case .object(let record) = records[index] {
                    linked = Unmanaged.passUnretained(record)
                } else {
                    failure = element.mismatch(records[index]).nested(under: "[\(index)]")
                    return
                }
                do throws(ModelMapping.ObjectFailure) {
                    try ModelMapping.object(
                        from: linked, plan: plan, initializeObject: initializeObject, into: start + index, context: &context)
                    count += 1
                } catch {
                    // The array releases the elements counted as initialised.
                    if error.initializedSlot { count += 1 }
                    failure = error.error.nested(under: "[\(index)]")
                    return
                }
            }
        }
        if let failure { throw failure }
        return unsafeBitCast(objects, to: [Model].self)
    }
}
