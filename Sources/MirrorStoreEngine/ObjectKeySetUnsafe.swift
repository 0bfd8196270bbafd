/// A set of objects' keys held as bytes, searched with the bytes an index entry stores for its
/// object where they lie: a walk of an index that keeps the objects of a set hashes and compares
/// each entry's stored key, where a `Set<StorageKey>` needed a `String` made, hashed and freed
/// per entry.
///
/// Membership is `StorageKey` equality: a string is held as the UTF-8 of its canonical
/// composition (NFC; ASCII, by far the common case, is its own), so canonically equal strings,
/// which Swift's `==` holds equal, are one key. Keys of each kind are held apart.
///
/// ```swift
/// let members = try category.objectKeySet(from: bound, to: bound)
/// let kept = members.contains(.string("ev-1"))
/// ```
public struct ObjectKeySet: Sendable {
    private var integers = Set<Int64>()
    private var strings = ByteStringSet()
    private var bytes = ByteStringSet()

    /// An empty set, with room for `capacity` keys.
    public init(capacity: Int = 0) {
        strings.reserveCapacity(capacity)
    }

    /// The number of keys held.
    public var count: Int { integers.count + strings.count + bytes.count }

    /// Adds `key`.
    public mutating func insert(_ key: StorageKey) {
        StoredObjectKey.with(key) { stored in _ = insert(stored) }
    }

    /// Whether the set holds `key`.
    public func contains(_ key: StorageKey) -> Bool {
        StoredObjectKey.with(key) { contains($0) } ?? false
    }

    /// Adds `key`; nil when its bytes are not a key (a string that is not UTF-8).
    mutating func insert(_ key: StoredObjectKey) -> Void? {
        switch key.tag {
        case .integer:
            integers.insert(key.integer)
        case .bytes:
            bytes.insert(key.body)
        case .string:
            if StringProbe.isASCII(key.body) {
                strings.insert(key.body)
            } else {
                guard let canonical = Self.canonical(key.body) else { return nil }
                canonical.withUnsafeBytes { strings.insert($0) }
            }
        }
        return ()
    }

    /// Whether the set holds `key`; nil when its bytes are not a key.
    func contains(_ key: StoredObjectKey) -> Bool? {
        switch key.tag {
        case .integer:
            return integers.contains(key.integer)
        case .bytes:
            return bytes.count > 0 && bytes.contains(key.body)
        case .string:
            // No closure on the way: one that captured the set copied it, arrays and all, per key.
            if StringProbe.isASCII(key.body) { return strings.contains(key.body) }
            guard let canonical = Self.canonical(key.body) else { return nil }
            return canonical.withUnsafeBytes { strings.contains($0) }
        }
    }

    /// The UTF-8 of the stored string `utf8`'s NFC form; nil when it is not UTF-8.
    private static func canonical(_ utf8: UnsafeRawBufferPointer) -> [UInt8]? {
        UTF8Text.string(utf8.assumingMemoryBound(to: UInt8.self))?._nfcCodeUnits
    }
}
