import MirrorStore

/// The automatic kind changes of a migration that PostgreSQL carries out, as MirrorStore's file
/// store makes them without a block: an integer property of another width or signedness (`Int`
/// to `Int8`, `Int` to `UInt64`, optional or not), and an array or a set of integers of another
/// width in a native array (`[Int]` to `Set<Int16>`). Every stored value must fit the new kind:
/// one that does not refuses the migration, naming it, as the file store refuses it.
struct IntegerConversion {
    /// The least and greatest value of the new kind, as SQL numeric literals (constants of the
    /// kind, never values from a user).
    let low: String
    let high: String
    /// Whether the values are array elements.
    let isArray: Bool

    /// The conversion from a property stored as `old` to `column`, or `nil` when the change is
    /// none of these (the migration then refuses it unless a block converts it).
    init?(from old: PropertyKind, to column: ColumnMapping) {
        let new = Self.unwrapped(column.kind)
        switch (Self.unwrapped(old), new, column.storage) {
        case (let from, let to, .scalar) where from != to:
            guard Self.range(of: from) != nil, let range = Self.range(of: to) else { return nil }
            (low, high, isArray) = (range.low, range.high, false)
        case (.list(let from), .list(let to), .array), (.list(let from), .set(let to), .array),
             (.set(let from), .list(let to), .array), (.set(let from), .set(let to), .array):
            // Elements of native arrays are never optional: `[T?]` is jsonb.
            guard from != to, Self.range(of: from) != nil, let range = Self.range(of: to) else { return nil }
            (low, high, isArray) = (range.low, range.high, true)
        default:
            return nil
        }
    }

    /// The statement finding a stored value that does not fit, as the text of the key and of
    /// the value; `key` and `value` name the columns as they are stored.
    func firstMisfit(table: String, key: String, value: String) -> String {
        if isArray {
            return "SELECT t.\(key)::text, e::text FROM \(table) t, unnest(t.\(value)) e WHERE e < \(low) OR e > \(high) LIMIT 1"
        }
        return "SELECT \(key)::text, \(value)::text FROM \(table) WHERE \(value) < \(low) OR \(value) > \(high) LIMIT 1"
    }

    private static func unwrapped(_ kind: PropertyKind) -> PropertyKind {
        if case .optional(let wrapped) = kind { return unwrapped(wrapped) }
        return kind
    }

    /// The least and greatest value of the integer kind `kind` (optional or not) as SQL numeric
    /// literals, or `nil` for a kind that is no integer.
    static func range(of kind: PropertyKind) -> (low: String, high: String)? {
        switch unwrapped(kind) {
        case .int, .int64: ("\(Int64.min)", "\(Int64.max)")
        case .int8: ("\(Int8.min)", "\(Int8.max)")
        case .int16: ("\(Int16.min)", "\(Int16.max)")
        case .int32: ("\(Int32.min)", "\(Int32.max)")
        case .uint, .uint64: ("0", "\(UInt64.max)")
        case .uint8: ("0", "\(UInt8.max)")
        case .uint16: ("0", "\(UInt16.max)")
        case .uint32: ("0", "\(UInt32.max)")
        default: nil
        }
    }
}
