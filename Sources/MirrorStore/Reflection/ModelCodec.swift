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

    func decode(_ record: RecordValue, in context: inout DecodingContext) throws(MappingError) -> Model {
        guard case .object(let object) = record else { throw mismatch(record) }
        return try ModelMapping.model(Model.self, from: object, plan: plan, context: &context)
    }
}
