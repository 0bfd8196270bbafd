/// Converts values of one Swift type to record values and back. Built once per property type
/// when a model's plan is made, so conversions never inspect types again.
protocol AnyValueCodec {
    var kind: PropertyKind { get }
    /// The plans of the models this codec links to.
    var linkedPlans: [TypePlan] { get }
    /// Where the value's enum raw values lie; `nil` when it holds none.
    var enumShape: EnumShape? { get }
    /// How a field of the value's type is read straight from stored bytes; `nil` when it is not.
    var directRead: DirectRead? { get }
}

extension AnyValueCodec {
    var linkedPlans: [TypePlan] { [] }
    var directRead: DirectRead? { nil }
}

protocol ValueCodec<Value>: AnyValueCodec {
    associatedtype Value
    /// Errors thrown here carry a path relative to the value; callers prepend their own step.
    func encode(_ value: Value, in context: inout EncodingContext) throws(MappingError) -> RecordValue
    func decode(_ record: RecordValue, in context: inout DecodingContext) throws(MappingError) -> Value
}

extension ValueCodec {
    /// The error for a record value of the wrong shape.
    func mismatch(_ record: RecordValue) -> MappingError {
        MappingError.mismatch(expected: kind, found: record)
    }
}

/// Chooses a codec for each Swift type a model declares.
struct CodecFactory {
    enum Failure: Error {
        /// The type (or something inside it) cannot be stored.
        case unsupported
        /// The type is, or holds, an enum that is not `RawRepresentable`: one with associated
        /// values or without a raw type.
        case enumWithoutRawValue(Any.Type)
        /// A nested model type cannot be mapped.
        case nestedModel(MappingError)
    }

    /// Plans already published plus the ones this factory is building, so recursive model types
    /// refer to their own (unfinished) plan instead of recursing forever.
    var plans: [ObjectIdentifier: TypePlan]
    /// Plans built by this factory, published together once all of them are complete.
    var newPlans: [TypePlan] = []
    /// Whether class plans may make instances without `init()` (`TypePlan.freshObject`); off
    /// only in tests that compare those instances with instances from `init()`.
    var makesFreshObjects = true

    mutating func codec<Value>(for type: Value.Type) throws(Failure) -> any ValueCodec<Value> {
        guard let codec = try anyCodec(for: type) as? any ValueCodec<Value> else { throw .unsupported }
        return codec
    }

    private mutating func anyCodec(for type: Any.Type) throws(Failure) -> any AnyValueCodec {
        if let primitive = type as? any RecordPrimitive.Type {
            guard primitive.isStorable else { throw .unsupported }
            return primitiveCodec(primitive)
        }
        if let model = type as? any Persistable.Type {
            return try modelCodec(model)
        }
        if let container = type as? any ContentCodecProviding.Type {
            return try container.makeContentCodec(&self)
        }
        if let enumeration = type as? any RawRepresentable.Type {
            return try rawValueCodec(enumeration)
        }
        // Said apart from other types because the fix differs: the enum needs a raw type, and
        // associated values are the usual reason it has none.
        if FieldLayout.isEnum(type) { throw .enumWithoutRawValue(type) }
        throw .unsupported
    }

    private func primitiveCodec<Value: RecordPrimitive>(_ type: Value.Type) -> any AnyValueCodec {
        PrimitiveCodec<Value>()
    }

    private mutating func rawValueCodec<Value: RawRepresentable>(_ type: Value.Type) throws(Failure) -> any AnyValueCodec {
        guard let raw = try anyCodec(for: Value.RawValue.self) as? any ValueCodec<Value.RawValue>,
              raw is any PrimitiveCodecMarker else { throw .unsupported }
        return RawValueCodec<Value>(raw: raw)
    }

    private mutating func modelCodec<Model: Persistable>(_ type: Model.Type) throws(Failure) -> any AnyValueCodec {
        try concreteModelCodec(type)
    }

    mutating func concreteModelCodec<Model: Persistable>(_ type: Model.Type) throws(Failure) -> ModelCodec<Model> {
        do throws(MappingError) {
            return ModelCodec<Model>(plan: try plan(for: type))
        } catch {
            throw .nestedModel(error)
        }
    }

    /// The codec of `[Element]` when `Element` is a model.
    mutating func modelArrayCodec(of element: Any.Type) throws(Failure) -> (any AnyValueCodec)? {
        func make<Model: Persistable>(_ type: Model.Type) throws(Failure) -> any AnyValueCodec {
            ModelArrayCodec<Model>(element: try concreteModelCodec(type))
        }
        guard let model = element as? any Persistable.Type else { return nil }
        return try make(model)
    }

    /// The plan of `type`, reusing a published or in-progress one.
    mutating func plan(for type: any Persistable.Type) throws(MappingError) -> TypePlan {
        if let plan = plans[ObjectIdentifier(type)] { return plan }
        return try TypePlan.build(for: type, factory: &self)
    }
}
