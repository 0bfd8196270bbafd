import Foundation
import MirrorStoreEngine

extension StoredValueType {
    /// Reads a stored value (tag first) straight into a field of this type, or of its optional,
    /// with no `RecordValue` in between, and returns `true`. Returns `false` for anything this fast
    /// path leaves to the general one, which then reads the same bytes again and reports them as
    /// it always does: a tag that does not fit, a number the field cannot hold, `null` in a
    /// required field, a NaN date, decimals and URLs (parsed from text).
    @inline(never)
    func decode(from reader: inout ByteReader, into field: UnsafeMutableRawPointer, optional: Bool) throws(DecodeFailure) -> Bool {
        let tag = try reader.byte()
        if tag == ValueTag.null.rawValue {
            guard optional else { return false }
            return setNil(field)
        }
        guard isWritten(with: tag) else { return false }
        switch self {
        case .bool: return Self.store(tag == ValueTag.true.rawValue, field, optional)
        case .int: return try Self.storeSigned(Int.self, &reader, field, optional)
        case .int8: return try Self.storeSigned(Int8.self, &reader, field, optional)
        case .int16: return try Self.storeSigned(Int16.self, &reader, field, optional)
        case .int32: return try Self.storeSigned(Int32.self, &reader, field, optional)
        case .int64: return try Self.storeSigned(Int64.self, &reader, field, optional)
        case .uint: return try Self.storeUnsigned(UInt.self, &reader, field, optional)
        case .uint8: return try Self.storeUnsigned(UInt8.self, &reader, field, optional)
        case .uint16: return try Self.storeUnsigned(UInt16.self, &reader, field, optional)
        case .uint32: return try Self.storeUnsigned(UInt32.self, &reader, field, optional)
        case .uint64: return try Self.storeUnsigned(UInt64.self, &reader, field, optional)
        case .float: return Self.store(Float(bitPattern: try reader.uint32()), field, optional)
        case .double: return Self.store(Double(bitPattern: try reader.uint64()), field, optional)
        case .string: return Self.store(try reader.lengthPrefixedString(), field, optional)
        case .data: return Self.store(Data(try reader.lengthPrefixedBytes()), field, optional)
        case .date:
            guard let value = StoredValues.date(try reader.uint64()) else { return false }
            return Self.store(value, field, optional)
        case .uuid: return Self.store(UUID(storedBytes: try reader.fixedBytes(16)), field, optional)
        case .decimal, .url:
            return false
        }
    }

    /// Stores `nil` into an optional field of this type.
    private func setNil(_ field: UnsafeMutableRawPointer) -> Bool {
        switch self {
        case .bool: Self.storeNil(Bool.self, field)
        case .int: Self.storeNil(Int.self, field)
        case .int8: Self.storeNil(Int8.self, field)
        case .int16: Self.storeNil(Int16.self, field)
        case .int32: Self.storeNil(Int32.self, field)
        case .int64: Self.storeNil(Int64.self, field)
        case .uint: Self.storeNil(UInt.self, field)
        case .uint8: Self.storeNil(UInt8.self, field)
        case .uint16: Self.storeNil(UInt16.self, field)
        case .uint32: Self.storeNil(UInt32.self, field)
        case .uint64: Self.storeNil(UInt64.self, field)
        case .float: Self.storeNil(Float.self, field)
        case .double: Self.storeNil(Double.self, field)
        case .string: Self.storeNil(String.self, field)
        case .data: Self.storeNil(Data.self, field)
        case .date: Self.storeNil(Date.self, field)
        case .uuid: Self.storeNil(UUID.self, field)
        case .decimal: Self.storeNil(Decimal.self, field)
        case .url: Self.storeNil(URL.self, field)
        }
        return true
    }

    @inline(__always)
    private static func storeSigned<Value: FixedWidthInteger>(
        _ type: Value.Type, _ reader: inout ByteReader, _ field: UnsafeMutableRawPointer, _ optional: Bool
    ) throws(DecodeFailure) -> Bool {
        guard let value = Value(exactly: ByteWriter.unzigzag(try reader.varint())) else { return false }
        return store(value, field, optional)
    }

    @inline(__always)
    private static func storeUnsigned<Value: FixedWidthInteger>(
        _ type: Value.Type, _ reader: inout ByteReader, _ field: UnsafeMutableRawPointer, _ optional: Bool
    ) throws(DecodeFailure) -> Bool {
        guard let value = Value(exactly: try reader.varint()) else { return false }
        return store(value, field, optional)
    }

    @inline(__always)
    private static func store<Value>(_ value: Value, _ field: UnsafeMutableRawPointer, _ optional: Bool) -> Bool {
        if optional {
            field.assumingMemoryBound(to: Value?.self).pointee = value
        } else {
            field.assumingMemoryBound(to: Value.self).pointee = value
        }
        return true
    }

    @inline(__always)
    private static func storeNil<Value>(_ type: Value.Type, _ field: UnsafeMutableRawPointer) {
        field.assumingMemoryBound(to: Value?.self).pointee = nil
    }
}
