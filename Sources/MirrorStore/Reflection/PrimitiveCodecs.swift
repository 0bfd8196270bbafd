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
extension Bool: FieldPrimitive {}
extension Int: FieldPrimitive {}
extension Int8: FieldPrimitive {}
extension Int16: FieldPrimitive {}
extension Int32: FieldPrimitive {}
extension Int64: FieldPrimitive {}
extension UInt: FieldPrimitive {}
extension UInt8: FieldPrimitive {}
extension UInt16: FieldPrimitive {}
extension UInt32: FieldPrimitive {}
extension UInt64: FieldPrimitive {}
extension Float: FieldPrimitive {}
extension Double: FieldPrimitive {}
extension String: FieldPrimitive {}
extension Data: FieldPrimitive {}
extension Date: FieldPrimitive {}
extension UUID: FieldPrimitive {}
extension Decimal: FieldPrimitive {}
extension URL: FieldPrimitive {}
