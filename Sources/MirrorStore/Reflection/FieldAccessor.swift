/// Reads one stored property into a record value and writes it back, at a fixed offset.
protocol FieldAccessor {
    var name: String { get }
    var kind: PropertyKind { get }
    var linkedPlans: [TypePlan] { get }
    func read(from base: UnsafeRawPointer, in context: inout EncodingContext) throws(MappingError) -> RecordValue
    func write(_ record: RecordValue, to base: UnsafeMutableRawPointer, in context: inout DecodingContext) throws(MappingError)
}

/// The common case, a property holding a single value: no codec call in between.
struct PrimitiveFieldAccessor<Value: RecordPrimitive>: FieldAccessor {
    let name: String
    let offset: Int

    var kind: PropertyKind { Value.propertyKind }
    var linkedPlans: [TypePlan] { [] }

    func read(from base: UnsafeRawPointer, in context: inout EncodingContext) throws(MappingError) -> RecordValue {
        FieldMemory.load(Value.self, from: base, at: offset).recordValue
    }

    func write(_ record: RecordValue, to base: UnsafeMutableRawPointer, in context: inout DecodingContext) throws(MappingError) {
        guard let value = Value(recordValue: record) else { throw PrimitiveCodec<Value>().mismatch(record) }
        FieldMemory.store(value, to: base, at: offset)
    }
}

/// Any other property: enums, containers and links, through their codec.
struct CodecFieldAccessor<Value>: FieldAccessor {
    let name: String
    let offset: Int
    let codec: any ValueCodec<Value>

    var kind: PropertyKind { codec.kind }
    var linkedPlans: [TypePlan] { codec.linkedPlans }

    func read(from base: UnsafeRawPointer, in context: inout EncodingContext) throws(MappingError) -> RecordValue {
        try codec.encode(FieldMemory.load(Value.self, from: base, at: offset), in: &context)
    }

    func write(_ record: RecordValue, to base: UnsafeMutableRawPointer, in context: inout DecodingContext) throws(MappingError) {
        FieldMemory.store(try codec.decode(record, in: &context), to: base, at: offset)
    }
}

extension CodecFactory {
    /// The accessor for a field of type `Value` at `offset`.
    mutating func accessor<Value>(for type: Value.Type, name: String, offset: Int) throws(Failure) -> any FieldAccessor {
        if let primitive = type as? any RecordPrimitive.Type, primitive.isStorable {
            return primitiveAccessor(primitive, name: name, offset: offset)
        }
        return CodecFieldAccessor(name: name, offset: offset, codec: try codec(for: type))
    }

    fileprivate func primitiveAccessor<Value: RecordPrimitive>(_ type: Value.Type, name: String, offset: Int) -> any FieldAccessor {
        PrimitiveFieldAccessor<Value>(name: name, offset: offset)
    }
}
