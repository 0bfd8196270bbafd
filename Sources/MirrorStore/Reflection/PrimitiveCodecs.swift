import Foundation

/// Marks the codecs of single-value types, the only ones an enum's raw value may use.
protocol PrimitiveCodecMarker {}

extension RecordPrimitive {
    /// `Int??` conforms through `Optional`'s conformance, but `nil` and `.some(nil)` would both be
    /// stored as null: nested optionals are refused.
    static var isStorable: Bool {
        if case .optional(.optional) = propertyKind { return false }
        return true
    }
}

struct PrimitiveCodec<Value: RecordPrimitive>: ValueCodec, PrimitiveCodecMarker {
    var kind: PropertyKind { Value.propertyKind }

    @inline(__always)
    func encode(_ value: Value, in context: inout EncodingContext) throws(MappingError) -> RecordValue {
        value.recordValue
    }

    @inline(__always)
    func decode(_ record: RecordValue, in context: inout DecodingContext) throws(MappingError) -> Value {
        guard let value = Value(recordValue: record) else { throw mismatch(record) }
        return value
    }
}

/// An enum stored as its raw value.
struct RawValueCodec<Value: RawRepresentable>: ValueCodec {
    let raw: any ValueCodec<Value.RawValue>

    var kind: PropertyKind { raw.kind }
    var linkedPlans: [TypePlan] { raw.linkedPlans }

    func encode(_ value: Value, in context: inout EncodingContext) throws(MappingError) -> RecordValue {
        try raw.encode(value.rawValue, in: &context)
    }

    func decode(_ record: RecordValue, in context: inout DecodingContext) throws(MappingError) -> Value {
        let rawValue = try raw.decode(record, in: &context)
        guard let value = Value(rawValue: rawValue) else {
            throw MappingError(
                .unknownEnumCase(enumType: "\(Value.self)", rawValue: String(reflecting: rawValue)), modelType: "")
        }
        return value
    }
}

// The single-value types whose properties are read and written in place.
extension Bool: FieldPrimitive {
    static var slot: StoredValueType { .bool }
    static var emptyValue: Bool { false }
}
extension Int: FieldPrimitive {
    static var slot: StoredValueType { .int }
    static var emptyValue: Int { 0 }
}
extension Int8: FieldPrimitive {
    static var slot: StoredValueType { .int8 }
    static var emptyValue: Int8 { 0 }
}
extension Int16: FieldPrimitive {
    static var slot: StoredValueType { .int16 }
    static var emptyValue: Int16 { 0 }
}
extension Int32: FieldPrimitive {
    static var slot: StoredValueType { .int32 }
    static var emptyValue: Int32 { 0 }
}
extension Int64: FieldPrimitive {
    static var slot: StoredValueType { .int64 }
    static var emptyValue: Int64 { 0 }
}
extension UInt: FieldPrimitive {
    static var slot: StoredValueType { .uint }
    static var emptyValue: UInt { 0 }
}
extension UInt8: FieldPrimitive {
    static var slot: StoredValueType { .uint8 }
    static var emptyValue: UInt8 { 0 }
}
extension UInt16: FieldPrimitive {
    static var slot: StoredValueType { .uint16 }
    static var emptyValue: UInt16 { 0 }
}
extension UInt32: FieldPrimitive {
    static var slot: StoredValueType { .uint32 }
    static var emptyValue: UInt32 { 0 }
}
extension UInt64: FieldPrimitive {
    static var slot: StoredValueType { .uint64 }
    static var emptyValue: UInt64 { 0 }
}
extension Float: FieldPrimitive {
    static var slot: StoredValueType { .float }
    static var emptyValue: Float { 0 }
}
extension Double: FieldPrimitive {
    static var slot: StoredValueType { .double }
    static var emptyValue: Double { 0 }
}
extension String: FieldPrimitive {
    static var slot: StoredValueType { .string }
    static var emptyValue: String { "" }
}
extension Data: FieldPrimitive {
    static var slot: StoredValueType { .data }
    static var emptyValue: Data { Data() }
}
extension Date: FieldPrimitive {
    static var slot: StoredValueType { .date }
    static var emptyValue: Date { Date(timeIntervalSinceReferenceDate: 0) }
}
extension UUID: FieldPrimitive {
    static var slot: StoredValueType { .uuid }
    static var emptyValue: UUID { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
}
extension Decimal: FieldPrimitive {
    static var slot: StoredValueType { .decimal }
    static var emptyValue: Decimal { Decimal() }
}
extension URL: FieldPrimitive {
    static var slot: StoredValueType { .url }
    static var emptyValue: URL { URL(fileURLWithPath: "/") }
}
