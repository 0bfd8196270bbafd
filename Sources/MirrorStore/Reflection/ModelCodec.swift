/// A to-one link to another model, stored as a linked record.
struct ModelCodec<Model: Persistable>: ValueCodec {
    let plan: TypePlan

    var kind: PropertyKind { .object(typeName: plan.typeName) }
    var linkedPlans: [TypePlan] { [plan] }

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
}
