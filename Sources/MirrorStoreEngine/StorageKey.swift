/// The key of one stored object within its type.
///
/// ```swift
/// batch.put(type: "Hero", key: .integer(1455), value: bytes)
/// batch.put(type: "Tag", key: .string("swift"), value: bytes)
/// ```
public enum StorageKey: Hashable, Sendable {
    /// A signed 64-bit integer key.
    case integer(Int64)
    /// A string key, compared with Swift `String` equality.
    case string(String)
    /// An opaque byte-string key.
    case bytes([UInt8])
}

extension StorageKey: CustomStringConvertible {
    /// A short readable form, used in error messages: an integer's digits, a string as a Swift
    /// literal (`"l5"`, so `"1455"` reads apart from `1455`), 16 bytes as a UUID's standard
    /// string (`E621E1F8-C36C-495A-93FC-0C247A3E6E5F`, the keys MirrorStore stores UUIDs under),
    /// other bytes in hexadecimal (`0x5aff`). The PostgreSQL backend spells keys the same way.
    public var description: String {
        switch self {
        case .integer(let value): return String(value)
        case .string(let value): return value.debugDescription
        case .bytes(let value) where value.count == 16:
            let hex = Self.hexadecimal(value).uppercased()
            var text = ""
            for (offset, character) in hex.enumerated() {
                if offset == 8 || offset == 12 || offset == 16 || offset == 20 { text.append("-") }
                text.append(character)
            }
            return text
        case .bytes(let value): return "0x" + Self.hexadecimal(value)
        }
    }

    private static func hexadecimal(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let digits = String(byte, radix: 16)
            return byte < 16 ? "0" + digits : digits
        }.joined()
    }
}

extension StorageKey {
    /// The order results come in when nothing else orders them: integers in numeric order, then
    /// strings (by the Unicode scalars of their canonical composition, NFC, so canonically equal
    /// strings, which are one key, sort as one), then byte strings, each in lexicographic order.
    public static func precedes(_ lhs: StorageKey, _ rhs: StorageKey) -> Bool {
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)): a < b
        case (.string(let a), .string(let b)): stringPrecedes(a, b)
        case (.bytes(let a), .bytes(let b)): a.lexicographicallyPrecedes(b)
        case (.integer, _): true
        case (.string, .bytes): true
        default: false
        }
    }

    /// Whether string key `a` sorts before `b`. Swift's `<` is not a strict weak order on strings
    /// that mix normalization forms ("é14" precomposed and "e\u{301}1" compare neither way), which
    /// would let a sorted run or a binary search lose a key; their NFC forms always compare. ASCII
    /// is its own NFC, and by far the common case, so it keeps the fast comparison.
    static func stringPrecedes(_ a: String, _ b: String) -> Bool {
        if a.utf8.allSatisfy({ $0 < 0x80 }), b.utf8.allSatisfy({ $0 < 0x80 }) { return a < b }
        return a._nfcCodeUnits.lexicographicallyPrecedes(b._nfcCodeUnits)
    }
}
