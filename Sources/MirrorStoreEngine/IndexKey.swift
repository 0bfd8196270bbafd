#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One value as a secondary index orders it. The layer above the engine turns a property value
/// into an `IndexKey`; the engine only orders and compares them.
///
/// The order: `null` first, then booleans, then numbers (integers, unsigned integers and doubles
/// compared by value, NaN after every other number), then strings (by their UTF-8 bytes, which is
/// the order of their Unicode scalars), then byte strings (lexicographically), then tuples (the
/// keys of a compound index: component by component, a tuple that is a prefix of another first),
/// then ``greatest``, which no value has: an upper bound past every tuple that starts with a
/// prefix is that prefix followed by `greatest`.
///
/// Strings are compared and found equal by their bytes, not as `String` compares them
/// (canonical equivalence): the layer above gives them in one normal form (NFC), where the two
/// agree, so the engine does not normalize every string it compares.
///
/// ```swift
/// let keys: [IndexKey] = [.string("b"), .integer(3), .null, .double(2.5)]
/// keys.sorted()   // [.null, .double(2.5), .integer(3), .string("b")]
/// ```
public enum IndexKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    case null
    case bool(Bool)
    case integer(Int64)
    case unsigned(UInt64)
    case double(Double)
    case string(String)
    case bytes([UInt8])
    /// The keys of several properties, for a compound index (kept as bytes that compare quickly).
    case tuple(IndexTuple)
    /// After every other key: only a bound, never a value's key.
    case greatest

    /// The order of kinds: null, booleans, numbers, strings, byte strings, tuples, `greatest`.
    var rank: Int {
        switch self {
        case .null: 0
        case .bool: 1
        case .integer, .unsigned, .double: 2
        case .string: 3
        case .bytes: 4
        case .tuple: 5
        case .greatest: 6
        }
    }

    /// Whether a unique index refuses two objects with this key: not for `nil`, nor for a tuple
    /// with a `nil` in it, which no other key equals as far as uniqueness goes (as in SQL).
    public var isUniquelyConstrained: Bool {
        switch self {
        case .null: false
        case .tuple(let tuple): !tuple.containsNull
        default: true
        }
    }

    /// Equal keys of one case; NaN equals NaN here, so an entry holding it can be found again.
    public static func == (lhs: IndexKey, rhs: IndexKey) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.unsigned(let a), .unsigned(let b)): a == b
        case (.double(let a), .double(let b)): a == b || (a.isNaN && b.isNaN)
        case (.string(let a), .string(let b)): a.utf8.count == b.utf8.count && compareBytes(a, b) == 0
        case (.bytes(let a), .bytes(let b)): a == b
        case (.tuple(let a), .tuple(let b)): a == b
        case (.greatest, .greatest): true
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(rank)
        switch self {
        case .null: break
        case .bool(let value): hasher.combine(value)
        case .integer(let value): hasher.combine(value)
        case .unsigned(let value): hasher.combine(value)
        case .double(let value): hasher.combine(value.isNaN ? Double.nan : value)
        // Canonically equivalent strings hash alike, so strings equal by their bytes do too.
        case .string(let value): hasher.combine(value)
        case .bytes(let value): hasher.combine(value)
        case .tuple(let tuple): hasher.combine(tuple)
        case .greatest: break
        }
    }

    public static func < (lhs: IndexKey, rhs: IndexKey) -> Bool {
        // Tuples and strings, which index searches compare most, without pairing the two keys
        // in a tuple below, which copies both.
        if case .tuple(let a) = lhs, case .tuple(let b) = rhs { return IndexTuple.order(a, b) < 0 }
        if case .string(let a) = lhs, case .string(let b) = rhs { return compareBytes(a, b) < 0 }
        let (left, right) = (lhs.rank, rhs.rank)
        if left != right { return left < right }
        switch (lhs, rhs) {
        case (.bool(let a), .bool(let b)): return !a && b
        case (.string(let a), .string(let b)): return compareBytes(a, b) < 0
        case (.bytes(let a), .bytes(let b)): return a.lexicographicallyPrecedes(b)
        case (.tuple(let a), .tuple(let b)): return IndexTuple.order(a, b) < 0
        case (.greatest, .greatest): return false
        case (.integer(let a), .integer(let b)): return a < b
        case (.unsigned(let a), .unsigned(let b)): return a < b
        default: return numericPrecedes(lhs, rhs)
        }
    }

    /// Negative, zero or positive as `lhs` orders before, with, or after `rhs`: one comparison of
    /// two strings where asking `<` both ways would make two.
    static func order(_ lhs: IndexKey, _ rhs: IndexKey) -> Int {
        let (left, right) = (lhs.rank, rhs.rank)
        if left != right { return left < right ? -1 : 1 }
        if case .string(let a) = lhs, case .string(let b) = rhs { return compareBytes(a, b) }
        if case .tuple(let a) = lhs, case .tuple(let b) = rhs { return IndexTuple.order(a, b) }
        if case .integer(let a) = lhs, case .integer(let b) = rhs { return a < b ? -1 : (a == b ? 0 : 1) }
        // Dates are doubles: a range of them compares every entry with its upper bound.
        if case .double(let a) = lhs, case .double(let b) = rhs {
            if a.isNaN || b.isNaN { return a.isNaN == b.isNaN ? 0 : a.isNaN ? 1 : -1 }
            return a < b ? -1 : (b < a ? 1 : 0)
        }
        return lhs < rhs ? -1 : rhs < lhs ? 1 : 0
    }

    /// Compares the UTF-8 bytes of two strings with one `memcmp` over their contiguous storage:
    /// index building sorts many keys, and iterating two `UTF8View`s byte by byte cost more than
    /// everything else in a bulk insert.
    /// Native strings lend their storage in place; only a bridged or small string is copied to
    /// contiguous storage first (a copy of each in a search of fences cost as much as the compare).
    private static func compareBytes(_ lhs: String, _ rhs: String) -> Int {
        if let order = lhs.utf8.withContiguousStorageIfAvailable({ left in
            rhs.utf8.withContiguousStorageIfAvailable { right in compareBytes(left, right) }
        }), let order {
            return order
        }
        var (lhs, rhs) = (lhs, rhs)
        return lhs.withUTF8 { left in rhs.withUTF8 { right in compareBytes(left, right) } }
    }

    private static func compareBytes(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Int {
        let common = min(left.count, right.count)
        if common > 0, let a = left.baseAddress, let b = right.baseAddress {
            let order = memcmp(a, b, common)
            if order != 0 { return order < 0 ? -1 : 1 }
        }
        return left.count == right.count ? 0 : left.count < right.count ? -1 : 1
    }

    /// Mixed numbers: exact for integers against integers, by value against doubles.
    private static func numericPrecedes(_ lhs: IndexKey, _ rhs: IndexKey) -> Bool {
        switch (lhs, rhs) {
        case (.integer(let a), .unsigned(let b)): return a < 0 || UInt64(a) < b
        case (.unsigned(let a), .integer(let b)): return b >= 0 && a < UInt64(b)
        default:
            let (a, b) = (lhs.doubleValue, rhs.doubleValue)
            if a.isNaN { return false }
            if b.isNaN { return true }
            return a < b
        }
    }

    private var doubleValue: Double {
        switch self {
        case .integer(let value): Double(value)
        case .unsigned(let value): Double(value)
        case .double(let value): value
        default: .nan
        }
    }

    /// A short readable form, used in error messages and query plans.
    public var description: String {
        switch self {
        case .null: "nil"
        case .bool(let value): "\(value)"
        case .integer(let value): "\(value)"
        case .unsigned(let value): "\(value)"
        case .double(let value): "\(value)"
        case .string(let value): value.debugDescription
        case .bytes(let value): "\(value.count) bytes"
        case .tuple(let tuple): "(\(tuple.components.map(\.description).joined(separator: ", ")))"
        case .greatest: "greatest"
        }
    }
}

/// One end of a range of index keys.
public struct IndexBound: Sendable, Equatable {
    /// The key at the end of the range.
    public var key: IndexKey
    /// Whether entries equal to `key` are inside the range.
    public var isInclusive: Bool

    /// Creates a bound.
    public init(_ key: IndexKey, inclusive: Bool) {
        self.key = key
        isInclusive = inclusive
    }
}
