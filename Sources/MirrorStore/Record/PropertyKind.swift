/// The storage type of one property in an ``ObjectSchema``.
///
/// Kinds nest the way Swift types do: `[String?]` is `.list(.optional(.string))`, and a
/// `Publisher?` link is `.optional(.object(typeName: "Publisher"))`.
///
/// ```swift
/// let kind = PropertyKind.dictionary(.list(.int))   // [String: [Int]]
/// print(kind)                                       // [String: [Int]]
/// ```
public indirect enum PropertyKind: Hashable, Sendable, CustomStringConvertible {
    /// A `Bool`.
    case bool
    /// A signed integer of the named width: `Int`, `Int8`, `Int16`, `Int32`, `Int64`.
    case int, int8, int16, int32, int64
    /// An unsigned integer of the named width: `UInt`, `UInt8`, `UInt16`, `UInt32`, `UInt64`.
    case uint, uint8, uint16, uint32, uint64
    /// A floating-point number: `Float` or `Double`.
    case float, double
    /// A `String`, `Data`, `Date`, `UUID`, `Decimal` or `URL`.
    case string, data, date, uuid, decimal, url
    /// A to-one link to another model's record.
    case object(typeName: String)
    /// A to-many container kept in order: a Swift `Array`, a ``List`` in the record.
    case list(PropertyKind)
    /// A to-many container without order or duplicates: a Swift `Set`, a ``List`` in the record.
    case set(PropertyKind)
    /// A `[String: Value]` dictionary.
    case dictionary(PropertyKind)
    /// A value that may be absent.
    case optional(PropertyKind)

    /// Whether a record may hold `null` for this kind.
    public var isOptional: Bool {
        if case .optional = self { return true }
        return false
    }

    /// Whether the kind links to another model at any depth.
    var containsLink: Bool {
        switch self {
        case .object: true
        case .list(let inner), .set(let inner), .dictionary(let inner), .optional(let inner): inner.containsLink
        default: false
        }
    }

    /// The Swift spelling of the kind, used in schemas and error messages.
    public var description: String {
        switch self {
        case .object(let typeName): typeName
        case .list(let element): "[\(element)]"
        case .set(let element): "Set<\(element)>"
        case .dictionary(let value): "[String: \(value)]"
        case .optional(let wrapped): "\(wrapped)?"
        default: storedValueType?.name ?? ""
        }
    }

    /// Whether `value` has the shape this kind stores, checked all the way down.
    ///
    /// Integers must fit the kind's width: `.int(300)` is not an ``int8`` value.
    public func accepts(_ value: RecordValue) -> Bool {
        if let type = storedValueType { return type.accepts(value) }
        return switch (self, value) {
        case (.optional, .null): true
        case (.optional(let wrapped), _): wrapped.accepts(value)
        case (.object(let typeName), .object(let record)): record.objectSchema.typeName == typeName
        case (.list(let element), .list(let list)), (.set(let element), .list(let list)):
            list.allSatisfy(element.accepts)
        case (.dictionary(let element), .dictionary(let dictionary)):
            dictionary.values.allSatisfy(element.accepts)
        default: false
        }
    }
}
