import Foundation

/// A Swift type stored as a single ``RecordValue``: numbers, `Bool`, `String`, `Data`, `Date`,
/// `UUID`, `Decimal`, `URL`, and optionals of those.
///
/// Reading converts exactly: an `Int8` property reads `.int(12)` but refuses `.int(300)`.
public protocol RecordPrimitive {
    /// The kind that a property of this type has in an ``ObjectSchema``.
    static var propertyKind: PropertyKind { get }
    /// The value as a record stores it.
    var recordValue: RecordValue { get }
    /// Converts a record value back, or returns `nil` when it has another shape or does not fit.
    init?(recordValue: RecordValue)
}

extension Bool: RecordPrimitive {
    public static var propertyKind: PropertyKind { .bool }
    @inlinable public var recordValue: RecordValue { .bool(self) }
    @inlinable public init?(recordValue: RecordValue) {
        guard case .bool(let value) = recordValue else { return nil }
        self = value
    }
}

/// Signed integers share one record case, `.int(Int64)`, and differ by kind.
public protocol _SignedRecordInteger: RecordPrimitive, FixedWidthInteger, SignedInteger {}

extension _SignedRecordInteger {
    @inlinable public var recordValue: RecordValue { .int(Int64(self)) }
    @inlinable public init?(recordValue: RecordValue) {
        guard case .int(let value) = recordValue, let exact = Self(exactly: value) else { return nil }
        self = exact
    }
}

/// Unsigned integers share one record case, `.uint(UInt64)`, and differ by kind.
public protocol _UnsignedRecordInteger: RecordPrimitive, FixedWidthInteger, UnsignedInteger {}

extension _UnsignedRecordInteger {
    @inlinable public var recordValue: RecordValue { .uint(UInt64(self)) }
    @inlinable public init?(recordValue: RecordValue) {
        guard case .uint(let value) = recordValue, let exact = Self(exactly: value) else { return nil }
        self = exact
    }
}

extension Int: _SignedRecordInteger { public static var propertyKind: PropertyKind { .int } }
extension Int8: _SignedRecordInteger { public static var propertyKind: PropertyKind { .int8 } }
extension Int16: _SignedRecordInteger { public static var propertyKind: PropertyKind { .int16 } }
extension Int32: _SignedRecordInteger { public static var propertyKind: PropertyKind { .int32 } }
extension Int64: _SignedRecordInteger { public static var propertyKind: PropertyKind { .int64 } }
extension UInt: _UnsignedRecordInteger { public static var propertyKind: PropertyKind { .uint } }
extension UInt8: _UnsignedRecordInteger { public static var propertyKind: PropertyKind { .uint8 } }
extension UInt16: _UnsignedRecordInteger { public static var propertyKind: PropertyKind { .uint16 } }
extension UInt32: _UnsignedRecordInteger { public static var propertyKind: PropertyKind { .uint32 } }
extension UInt64: _UnsignedRecordInteger { public static var propertyKind: PropertyKind { .uint64 } }

extension Float: RecordPrimitive {
    public static var propertyKind: PropertyKind { .float }
    @inlinable public var recordValue: RecordValue { .float(self) }
    @inlinable public init?(recordValue: RecordValue) {
        guard case .float(let value) = recordValue else { return nil }
        self = value
    }
}

extension Double: RecordPrimitive {
    public static var propertyKind: PropertyKind { .double }
    @inlinable public var recordValue: RecordValue { .double(self) }
    @inlinable public init?(recordValue: RecordValue) {
        guard case .double(let value) = recordValue else { return nil }
        self = value
    }
}

extension String: RecordPrimitive {
    public static var propertyKind: PropertyKind { .string }
    @inlinable public var recordValue: RecordValue { .string(self) }
    @inlinable public init?(recordValue: RecordValue) {
        guard case .string(let value) = recordValue else { return nil }
        self = value
    }
}

extension Data: RecordPrimitive {
    public static var propertyKind: PropertyKind { .data }
    @inlinable public var recordValue: RecordValue { .data(self) }
    @inlinable public init?(recordValue: RecordValue) {
        guard case .data(let value) = recordValue else { return nil }
        self = value
    }
}

extension Date: RecordPrimitive {
    public static var propertyKind: PropertyKind { .date }
    @inlinable public var recordValue: RecordValue { .date(self) }
    @inlinable public init?(recordValue: RecordValue) {
        guard case .date(let value) = recordValue else { return nil }
        self = value
    }
}

extension UUID: RecordPrimitive {
    public static var propertyKind: PropertyKind { .uuid }
    @inlinable public var recordValue: RecordValue { .uuid(self) }
    @inlinable public init?(recordValue: RecordValue) {
        guard case .uuid(let value) = recordValue else { return nil }
        self = value
    }
}

extension Decimal: RecordPrimitive {
    public static var propertyKind: PropertyKind { .decimal }
    @inlinable public var recordValue: RecordValue { .decimal(self) }
    @inlinable public init?(recordValue: RecordValue) {
        guard case .decimal(let value) = recordValue else { return nil }
        self = value
    }
}

extension URL: RecordPrimitive {
    public static var propertyKind: PropertyKind { .url }
    @inlinable public var recordValue: RecordValue { .url(self) }
    @inlinable public init?(recordValue: RecordValue) {
        guard case .url(let value) = recordValue else { return nil }
        self = value
    }
}

extension Optional: RecordPrimitive where Wrapped: RecordPrimitive {
    public static var propertyKind: PropertyKind { .optional(Wrapped.propertyKind) }
    @inlinable public var recordValue: RecordValue { self?.recordValue ?? .null }
    @inlinable public init?(recordValue: RecordValue) {
        if case .null = recordValue {
            self = .none
        } else if let value = Wrapped(recordValue: recordValue) {
            self = .some(value)
        } else {
            return nil
        }
    }
}
