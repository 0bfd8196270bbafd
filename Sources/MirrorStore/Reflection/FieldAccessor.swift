/// Reads one stored property into a record value and writes it back, at a fixed offset.
/// Class-bound, so walking a plan's fields copies a reference, not an existential box.
protocol FieldAccessor: AnyObject {
    var name: String { get }
    var kind: PropertyKind { get }
    var linkedPlans: [TypePlan] { get }
    /// Where the field's enum raw values lie; `nil` when it holds none.
    var enumShape: EnumShape? { get }
    /// The field's offset and, for single-value types, its type as a tag.
    var slot: FieldSlot { get }
    /// How the field's stored value is read straight into it, if it can be.
    var directRead: DirectRead? { get }
    func read(from base: UnsafeRawPointer, in context: inout EncodingContext) throws(MappingError) -> RecordValue
    func write(_ record: RecordValue, to base: UnsafeMutableRawPointer, in context: inout DecodingContext) throws(MappingError)
    /// The record value of `value`, a value of the field's type given on its own (a partial
    /// update sets one field of a stored record this way).
    func recordValue(of value: Any) throws(MappingError) -> RecordValue
}

extension FieldAccessor {
    var enumShape: EnumShape? { nil }

    /// `value` as the field's type, or the error saying it is not.
    fileprivate func cast<Value>(_ value: Any, to type: Value.Type) throws(MappingError) -> Value {
        guard let value = value as? Value else {
            throw MappingError(.unsupportedModel("a \(Swift.type(of: value)) is not a \(Value.self)"), modelType: "", path: [name])
        }
        return value
    }
}

/// The common case, a property holding a single value: no codec call in between.
final class PrimitiveFieldAccessor<Value: FieldPrimitive>: FieldAccessor {
    let name: String
    let offset: Int

    init(name: String, offset: Int) {
        self.name = name
        self.offset = offset
    }

    var kind: PropertyKind { Value.propertyKind }
    var linkedPlans: [TypePlan] { [] }
    var slot: FieldSlot { FieldSlot(offset: offset, primitive: Value.slot, isOptional: false) }
    var directRead: DirectRead? { .value(Value.slot, optional: false) }

    func read(from base: UnsafeRawPointer, in context: inout EncodingContext) throws(MappingError) -> RecordValue {
        Value.recordValue(at: base + offset)
    }

    func write(_ record: RecordValue, to base: UnsafeMutableRawPointer, in context: inout DecodingContext) throws(MappingError) {
        guard Value.assign(record, to: base + offset) else { throw PrimitiveCodec<Value>().mismatch(record) }
    }

    func recordValue(of value: Any) throws(MappingError) -> RecordValue {
        withUnsafePointer(to: try cast(value, to: Value.self)) { Value.recordValue(at: UnsafeRawPointer($0)) }
    }
}

/// A property of type `Wrapped?` with a single-value `Wrapped`.
final class OptionalPrimitiveFieldAccessor<Wrapped: FieldPrimitive>: FieldAccessor {
    let name: String
    let offset: Int

    init(name: String, offset: Int) {
        self.name = name
        self.offset = offset
    }

    var kind: PropertyKind { .optional(Wrapped.propertyKind) }
    var linkedPlans: [TypePlan] { [] }
    var slot: FieldSlot { FieldSlot(offset: offset, primitive: Wrapped.slot, isOptional: true) }
    var directRead: DirectRead? { .value(Wrapped.slot, optional: true) }

    func read(from base: UnsafeRawPointer, in context: inout EncodingContext) throws(MappingError) -> RecordValue {
        Wrapped.recordValue(atOptional: base + offset)
    }

    func write(_ record: RecordValue, to base: UnsafeMutableRawPointer, in context: inout DecodingContext) throws(MappingError) {
        guard Wrapped.assign(record, toOptional: base + offset) else {
            throw PrimitiveCodec<Wrapped?>().mismatch(record)
        }
    }

    func recordValue(of value: Any) throws(MappingError) -> RecordValue {
        withUnsafePointer(to: try cast(value, to: Wrapped?.self)) { Wrapped.recordValue(atOptional: UnsafeRawPointer($0)) }
    }
}

/// Any other property: enums, containers and links, through their codec.
final class CodecFieldAccessor<Value>: FieldAccessor {
    let name: String
    let offset: Int
    let codec: any ValueCodec<Value>

    init(name: String, offset: Int, codec: any ValueCodec<Value>) {
        self.name = name
        self.offset = offset
        self.codec = codec
    }

    var kind: PropertyKind { codec.kind }
    var linkedPlans: [TypePlan] { codec.linkedPlans }
    var enumShape: EnumShape? { codec.enumShape }
    var slot: FieldSlot { FieldSlot(offset: offset, primitive: nil, isOptional: false) }
    var directRead: DirectRead? { codec.directRead }

    func read(from base: UnsafeRawPointer, in context: inout EncodingContext) throws(MappingError) -> RecordValue {
        try codec.encode(FieldMemory.load(Value.self, from: base, at: offset), in: &context)
    }

    func write(_ record: RecordValue, to base: UnsafeMutableRawPointer, in context: inout DecodingContext) throws(MappingError) {
        FieldMemory.store(try codec.decode(record, in: &context), to: base, at: offset)
    }

    func recordValue(of value: Any) throws(MappingError) -> RecordValue {
        var context = EncodingContext()
        return try codec.encode(try cast(value, to: Value.self), in: &context)
    }
}

extension CodecFactory {
    /// The accessor for a field of type `Value` at `offset`.
    mutating func accessor<Value>(for type: Value.Type, name: String, offset: Int) throws(Failure) -> any FieldAccessor {
        if let primitive = type as? any FieldPrimitive.Type {
            return primitiveAccessor(primitive, name: name, offset: offset)
        }
        if let optional = type as? any OptionalMarker.Type, let wrapped = optional.wrappedFieldPrimitive {
            return optionalPrimitiveAccessor(wrapped, name: name, offset: offset)
        }
        return CodecFieldAccessor(name: name, offset: offset, codec: try codec(for: type))
    }

    fileprivate func primitiveAccessor<Value: FieldPrimitive>(_ type: Value.Type, name: String, offset: Int) -> any FieldAccessor {
        PrimitiveFieldAccessor<Value>(name: name, offset: offset)
    }

    fileprivate func optionalPrimitiveAccessor<Wrapped: FieldPrimitive>(_ type: Wrapped.Type, name: String, offset: Int) -> any FieldAccessor {
        OptionalPrimitiveFieldAccessor<Wrapped>(name: name, offset: offset)
    }
}

/// Tells, once per plan, whether an optional wraps a single-value type.
protocol OptionalMarker {
    static var wrappedFieldPrimitive: (any FieldPrimitive.Type)? { get }
}

extension Optional: OptionalMarker {
    static var wrappedFieldPrimitive: (any FieldPrimitive.Type)? { Wrapped.self as? any FieldPrimitive.Type }
}
