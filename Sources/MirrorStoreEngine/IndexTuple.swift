/// The keys of a compound index entry, kept as one byte string whose byte order is the order of
/// ``IndexKey/tuple(_:)`` keys: a search of a compound index compares keys many times, and
/// comparing bytes once costs less than comparing the components one by one as `IndexKey`s.
///
/// Each component is a tag that follows ``IndexKey``'s order of kinds and then its payload:
/// fixed-size numbers made to sort as their bytes, strings, byte strings and nested tuples
/// escaped (`0x00` as `0x00 0xFF`) and ended by `0x00 0x01`, so no component's encoding is a
/// prefix of another's. A tuple that is a prefix of another is then a prefix of its bytes, and
/// sorts first. `-0.0` is kept as `0.0` and every NaN as one NaN, as they are equal keys.
///
/// Integers, unsigned integers and doubles have tags of their own, but `IndexKey` compares them
/// with each other by value. Two tuples whose first difference is such a pair of tags (or bytes
/// that look like one) are compared component by component instead, so the order is exactly
/// that of the components.
///
/// ```swift
/// let key = IndexKey.tuple(IndexTuple([.string("red"), .integer(7)]))
/// key < .tuple(IndexTuple([.string("red"), .integer(8)]))   // true
/// IndexTuple([.string("red"), .integer(7)]).components       // [.string("red"), .integer(7)]
/// ```
public struct IndexTuple: Hashable, Sendable {
    /// The encoded components.
    private(set) var bytes: [UInt8]

    /// A tuple of `components`, in order.
    public init(_ components: [IndexKey]) {
        self.init(capacity: components.count * 12)
        for component in components { append(component) }
    }

    /// An empty tuple with room for about `capacity` bytes of components, for a tuple built one
    /// component at a time.
    public init(capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Adds `component` at the end: a prefix of a compound index's keys made longer without
    /// encoding the prefix again.
    public mutating func append(_ component: IndexKey) {
        Self.append(component, to: &bytes)
    }

    /// This tuple followed by `component`.
    public func appending(_ component: IndexKey) -> IndexTuple {
        var tuple = self
        tuple.append(component)
        return tuple
    }

    /// The components, decoded.
    public var components: [IndexKey] {
        var reader = Reader(bytes: bytes[...])
        var components: [IndexKey] = []
        while let component = reader.next() { components.append(component) }
        return components
    }

    /// Whether a component is `null` (a unique index does not constrain such a tuple), read
    /// from the tags alone.
    var containsNull: Bool {
        var reader = Reader(bytes: bytes[...])
        while let tag = reader.skip() {
            if tag == Tag.null { return true }
        }
        return false
    }

    // MARK: Order

    /// Negative, zero or positive as `lhs` orders before, with, or after `rhs`. Its two steps
    /// are never inlined: inlined into `IndexKey`'s comparisons, they made those too large to
    /// inline into the index searches, which then ran slower for every kind of key.
    static func order(_ lhs: IndexTuple, _ rhs: IndexTuple) -> Int {
        let (order, isNumberTags) = firstDifference(lhs.bytes, rhs.bytes)
        return isNumberTags ? decodedOrder(lhs, rhs) : order
    }

    /// The order of the components, for tuples whose bytes do not decide.
    @inline(never)
    private static func decodedOrder(_ lhs: IndexTuple, _ rhs: IndexTuple) -> Int {
        componentOrder(lhs.components, rhs.components)
    }

    /// Component by component, as `IndexKey` orders them; of two tuples equal as far as the
    /// shorter goes, the shorter first. The order the bytes stand for, and what decides when
    /// the bytes cannot (numbers of different kinds).
    static func componentOrder(_ lhs: [IndexKey], _ rhs: [IndexKey]) -> Int {
        for index in 0..<min(lhs.count, rhs.count) {
            let order = IndexKey.order(lhs[index], rhs[index])
            if order != 0 { return order }
        }
        return lhs.count == rhs.count ? 0 : lhs.count < rhs.count ? -1 : 1
    }

    /// The order of two byte strings (the shorter first when one is a prefix of the other), and
    /// whether their first differing bytes are two different number tags, where the bytes do
    /// not decide. Eight bytes at a time: keys are often longer than a word.
    @inline(never)
    private static func firstDifference(_ lhs: [UInt8], _ rhs: [UInt8]) -> (order: Int, isNumberTags: Bool) {
        lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in firstDifference(left, right) } }
    }

    /// The order of `lhs`, a tuple's bytes where they lie (in a run block), against `rhs`,
    /// without copying them unless the bytes do not decide.
    static func order(encoded lhs: UnsafeRawBufferPointer, _ rhs: IndexTuple) -> Int {
        let (order, isNumberTags) = rhs.bytes.withUnsafeBytes { firstDifference(lhs, $0) }
        return isNumberTags ? decodedOrder(IndexTuple(encoded: Array(lhs)), rhs) : order
    }

    private static func firstDifference(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> (order: Int, isNumberTags: Bool) {
        let common = min(left.count, right.count)
        var position = 0
        while position + 8 <= common {
            let a = left.loadUnaligned(fromByteOffset: position, as: UInt64.self)
            let b = right.loadUnaligned(fromByteOffset: position, as: UInt64.self)
            if a != b {
                // The first differing byte is the lowest in memory: the low end of a
                // little-endian word, the high end of a big-endian one.
                #if _endian(little)
                position += (a ^ b).trailingZeroBitCount / 8
                #else
                position += (a ^ b).leadingZeroBitCount / 8
                #endif
                break
            }
            position += 8
        }
        while position < common, left[position] == right[position] { position += 1 }
        guard position < common else {
            return (left.count == right.count ? 0 : left.count < right.count ? -1 : 1, false)
        }
        let (a, b) = (left[position], right[position])
        return (a < b ? -1 : 1, Tag.isNumber(a) && Tag.isNumber(b))
    }

    // MARK: Encoding

    /// The first byte of each component, in `IndexKey`'s order of kinds.
    private enum Tag {
        static let null: UInt8 = 0x02
        static let bool: UInt8 = 0x08
        // Control characters, rare in strings, so that two strings seldom differ first where
        // two number tags could stand.
        static let integer: UInt8 = 0x1C
        static let unsigned: UInt8 = 0x1D
        static let double: UInt8 = 0x1E
        static let string: UInt8 = 0x30
        static let bytes: UInt8 = 0x40
        static let tuple: UInt8 = 0x50
        static let greatest: UInt8 = 0x60

        static func isNumber(_ byte: UInt8) -> Bool { byte >= integer && byte <= double }
    }

    /// What ends an escaped run of bytes, and what stands for a zero byte inside one.
    private static let end: (UInt8, UInt8) = (0x00, 0x01)
    private static let escapedZero: (UInt8, UInt8) = (0x00, 0xFF)

    private static func append(_ key: IndexKey, to bytes: inout [UInt8]) {
        switch key {
        case .null:
            bytes.append(Tag.null)
        case .bool(let value):
            bytes.append(Tag.bool)
            bytes.append(value ? 1 : 0)
        case .integer(let value):
            bytes.append(Tag.integer)
            appendBigEndian(UInt64(bitPattern: value) ^ (1 << 63), to: &bytes)
        case .unsigned(let value):
            bytes.append(Tag.unsigned)
            appendBigEndian(value, to: &bytes)
        case .double(let value):
            bytes.append(Tag.double)
            appendBigEndian(orderedBits(of: value), to: &bytes)
        case .string(let value):
            bytes.append(Tag.string)
            var value = value
            value.withUTF8 { appendEscaped($0, to: &bytes) }
        case .bytes(let value):
            bytes.append(Tag.bytes)
            value.withUnsafeBufferPointer { appendEscaped($0, to: &bytes) }
        case .tuple(let value):
            bytes.append(Tag.tuple)
            value.bytes.withUnsafeBufferPointer { appendEscaped($0, to: &bytes) }
        case .greatest:
            bytes.append(Tag.greatest)
        }
    }

    /// A double's bits made to sort as unsigned integers in the double's order: negative
    /// numbers inverted, positive ones above them; `-0.0` as `0.0`, every NaN above infinity.
    static func orderedBits(of value: Double) -> UInt64 {
        if value.isNaN { return .max }
        let bits = (value == 0 ? 0.0 : value).bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    private static func appendBigEndian(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    private static func appendEscaped(_ run: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        // Most runs hold no zero byte, and are copied as they are.
        guard run.contains(0) else {
            bytes.append(contentsOf: run)
            bytes.append(end.0)
            bytes.append(end.1)
            return
        }
        bytes.reserveCapacity(bytes.count + run.count + 2)
        for byte in run {
            if byte == 0 {
                bytes.append(escapedZero.0)
                bytes.append(escapedZero.1)
            } else {
                bytes.append(byte)
            }
        }
        bytes.append(end.0)
        bytes.append(end.1)
    }

    // MARK: Decoding

    /// Reads components back from encoded bytes, which this type wrote. It stops (returns
    /// `nil`) at the end, and also at bytes it did not write rather than trap.
    private struct Reader {
        var bytes: ArraySlice<UInt8>

        mutating func next() -> IndexKey? {
            guard let tag = bytes.popFirst() else { return nil }
            switch tag {
            case Tag.null: return .null
            case Tag.bool: return bytes.popFirst().map { .bool($0 != 0) }
            case Tag.integer: return bigEndian().map { .integer(Int64(bitPattern: $0 ^ (1 << 63))) }
            case Tag.unsigned: return bigEndian().map { .unsigned($0) }
            case Tag.double:
                return bigEndian().map { bits in
                    if bits == .max { return .double(.nan) }
                    return .double(Double(bitPattern: bits & (1 << 63) != 0 ? bits & ~(1 << 63) : ~bits))
                }
            case Tag.string: return unescaped().map { .string(String(decoding: $0, as: UTF8.self)) }
            case Tag.bytes: return unescaped().map { .bytes($0) }
            case Tag.tuple: return unescaped().map { .tuple(IndexTuple(encoded: $0)) }
            case Tag.greatest: return .greatest
            default: return nil
            }
        }

        /// Passes over the next component without decoding it; its tag.
        mutating func skip() -> UInt8? {
            guard let tag = bytes.popFirst() else { return nil }
            let size: Int
            switch tag {
            case Tag.null, Tag.greatest: size = 0
            case Tag.bool: size = 1
            case Tag.integer, Tag.unsigned, Tag.double: size = 8
            case Tag.string, Tag.bytes, Tag.tuple:
                // To the end mark: a zero byte followed by the end's second byte.
                while let byte = bytes.popFirst() {
                    guard byte == 0 else { continue }
                    guard let next = bytes.popFirst() else { return nil }
                    if next == IndexTuple.end.1 { return tag }
                }
                return nil
            default: return nil
            }
            guard bytes.count >= size else { return nil }
            bytes.removeFirst(size)
            return tag
        }

        private mutating func bigEndian() -> UInt64? {
            guard bytes.count >= 8 else { return nil }
            let value = bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            bytes.removeFirst(8)
            return value
        }

        private mutating func unescaped() -> [UInt8]? {
            var run: [UInt8] = []
            while let byte = bytes.popFirst() {
                guard byte == 0 else {
                    run.append(byte)
                    continue
                }
                guard let next = bytes.popFirst() else { return nil }
                if next == IndexTuple.end.1 { return run }
                guard next == IndexTuple.escapedZero.1 else { return nil }
                run.append(0)
            }
            return nil
        }
    }

    /// A tuple of bytes this type encoded (or, in tests, bytes damaged on purpose).
    init(encoded: [UInt8]) {
        bytes = encoded
    }
}
