import Foundation

/// The single-value types a record stores: the one table from which their kinds' Swift names,
/// their bytes in a stored schema, the tags their values are written with and the check of a
/// value against its kind derive. A value type new to the store starts here
/// (docs/ARCHITECTURE.md, "Adding a value type").
enum StoredValueType: UInt8, CaseIterable, Sendable {
    // Raw values are the kinds' bytes in stored schemas (`SchemaCoding`): files hold them.
    case bool = 0
    case int = 1, int8 = 2, int16 = 3, int32 = 4, int64 = 5
    case uint = 6, uint8 = 7, uint16 = 8, uint32 = 9, uint64 = 10
    case float = 11, double = 12, string = 13, data = 14, date = 15, uuid = 16, decimal = 17, url = 18

    /// The Swift spelling, which ``PropertyKind/description`` shows.
    var name: String {
        switch self {
        case .bool: "Bool"
        case .int: "Int"
        case .int8: "Int8"
        case .int16: "Int16"
        case .int32: "Int32"
        case .int64: "Int64"
        case .uint: "UInt"
        case .uint8: "UInt8"
        case .uint16: "UInt16"
        case .uint32: "UInt32"
        case .uint64: "UInt64"
        case .float: "Float"
        case .double: "Double"
        case .string: "String"
        case .data: "Data"
        case .date: "Date"
        case .uuid: "UUID"
        case .decimal: "Decimal"
        case .url: "URL"
        }
    }

    /// The tag its values are written with: every width of integer shares one, and a `Bool` is
    /// written as ``ValueTag/false`` or ``ValueTag/true``, whose first is given here.
    var tag: ValueTag {
        switch self {
        case .bool: .false
        case .int, .int8, .int16, .int32, .int64: .int
        case .uint, .uint8, .uint16, .uint32, .uint64: .uint
        case .float: .float
        case .double: .double
        case .string: .string
        case .data: .data
        case .date: .date
        case .uuid: .uuid
        case .decimal: .decimal
        case .url: .url
        }
    }

    /// Whether it is an integer of some width, signed or not.
    var isInteger: Bool { tag == .int || tag == .uint }

    /// Whether it is an unsigned integer.
    var isUnsigned: Bool { tag == .uint }

    /// Whether Swift's `<` orders its values (a `Bool` has no `<`), so that conditions may order
    /// them and results sort by them.
    var isComparable: Bool {
        switch self {
        case .int, .int8, .int16, .int32, .int64, .uint, .uint8, .uint16, .uint32, .uint64,
             .float, .double, .string, .date, .decimal: true
        case .bool, .data, .uuid, .url: false
        }
    }

    /// Whether its values can identify a record: integers, strings and UUIDs.
    var canBePrimaryKey: Bool {
        switch self {
        case .int, .int8, .int16, .int32, .int64, .uint, .uint8, .uint16, .uint32, .uint64, .string, .uuid: true
        case .bool, .float, .double, .data, .date, .decimal, .url: false
        }
    }

    /// Whether a value tagged `tag` (the byte) is one of this type's: the check of a stored value
    /// against its property's kind that the decoder, the projection and the field fast path make
    /// (null aside, which any optional holds).
    @inline(__always)
    func isWritten(with tag: UInt8) -> Bool {
        tag == self.tag.rawValue || (self == .bool && tag == ValueTag.true.rawValue)
    }

    /// The kind of a property of this type.
    var kind: PropertyKind {
        switch self {
        case .bool: .bool
        case .int: .int
        case .int8: .int8
        case .int16: .int16
        case .int32: .int32
        case .int64: .int64
        case .uint: .uint
        case .uint8: .uint8
        case .uint16: .uint16
        case .uint32: .uint32
        case .uint64: .uint64
        case .float: .float
        case .double: .double
        case .string: .string
        case .data: .data
        case .date: .date
        case .uuid: .uuid
        case .decimal: .decimal
        case .url: .url
        }
    }

    /// Whether `value` is one of this type's, within its width: `.int(300)` is not an `Int8`.
    func accepts(_ value: RecordValue) -> Bool {
        switch (self, value) {
        case (.bool, .bool), (.int, .int), (.int64, .int), (.uint, .uint), (.uint64, .uint): true
        case (.int8, .int(let v)): Int8(exactly: v) != nil
        case (.int16, .int(let v)): Int16(exactly: v) != nil
        case (.int32, .int(let v)): Int32(exactly: v) != nil
        case (.uint8, .uint(let v)): UInt8(exactly: v) != nil
        case (.uint16, .uint(let v)): UInt16(exactly: v) != nil
        case (.uint32, .uint(let v)): UInt32(exactly: v) != nil
        case (.float, .float), (.double, .double), (.string, .string), (.data, .data), (.date, .date), (.uuid, .uuid),
             (.decimal, .decimal), (.url, .url): true
        default: false
        }
    }
}

extension PropertyKind {
    /// The stored value type of a single-value kind; nil for links, containers and optionals.
    var storedValueType: StoredValueType? {
        switch self {
        case .bool: .bool
        case .int: .int
        case .int8: .int8
        case .int16: .int16
        case .int32: .int32
        case .int64: .int64
        case .uint: .uint
        case .uint8: .uint8
        case .uint16: .uint16
        case .uint32: .uint32
        case .uint64: .uint64
        case .float: .float
        case .double: .double
        case .string: .string
        case .data: .data
        case .date: .date
        case .uuid: .uuid
        case .decimal: .decimal
        case .url: .url
        case .object, .list, .set, .dictionary, .optional: nil
        }
    }
}
