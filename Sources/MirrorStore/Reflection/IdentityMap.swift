/// Object identity → object, for the identity tracking of conversions.
///
/// Most graphs hold a handful of class instances, so the first ``inlineCapacity`` entries live in
/// the map itself, searched from the end: a conversion that stays under it allocates nothing for
/// its identities. Further entries go to a `Dictionary`, whose hashing costs more per key but not
/// per entry held.
///
/// Within one conversion every object the map is given stays reachable from the conversion's
/// result (or from the context, see `DecodingContext.discarded`) until the conversion ends, so a
/// map that serves one conversion refers to its objects without holding them: holding costs two
/// atomic reference count operations per object, which measured about 8% of nested record →
/// model. A map that serves several conversions, whose callers may drop one result before a later
/// conversion meets the same key, holds its objects.
struct IdentityMap<Value: AnyObject> {
    /// Sixteen words: keys, and the addresses of their objects, side by side in two of these.
    private typealias InlineWords = (UInt, UInt, UInt, UInt, UInt, UInt, UInt, UInt, UInt, UInt, UInt, UInt, UInt, UInt, UInt, UInt)

    private static var inlineCapacity: Int { 16 }

    private var inlineKeys: InlineWords = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    /// The objects' addresses: referred to, not held (see `held`).
    private var inlineObjects: InlineWords = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    private var inlineCount = 0
    /// Entries past the inline ones: key → the object's address.
    private var overflow: [UInt: UInt] = [:]
    /// One bit per key held, chosen by a few bits of its address: most lookups are of keys not
    /// held (each new object is looked up before it is made), and a clear bit answers them
    /// without a search.
    private var keyBits: UInt64 = 0
    /// The objects, for a map that holds them; `nil` for a map that serves one conversion.
    private var held: [Value]?

    /// `holdsValues`: whether the map keeps its objects alive, which a map serving more than one
    /// conversion must.
    init(holdsValues: Bool) {
        held = holdsValues ? [] : nil
    }

    /// Whether the map keeps its objects alive.
    var holdsValues: Bool { held != nil }

    /// Mutating only to read the inline words in place, where a borrowed read would copy them.
    subscript(key: UnsafeRawPointer) -> Value? {
        mutating get {
            let wanted = UInt(bitPattern: key)
            guard keyBits & Self.bit(of: wanted) != 0 else { return nil }
            let count = inlineCount
            let position: Int? = withUnsafeBytes(of: &inlineKeys) { keys in
                // Backwards: the latest entries are the likeliest.
                var position = count
                while position > 0 {
                    position -= 1
                    if keys.load(fromByteOffset: position * MemoryLayout<UInt>.stride, as: UInt.self) == wanted { return position }
                }
                return nil
            }
            let address: UInt? =
                if let position {
                    withUnsafeBytes(of: &inlineObjects) { $0.load(fromByteOffset: position * MemoryLayout<UInt>.stride, as: UInt.self) }
                } else {
                    overflow[wanted]
                }
            guard let address, let object = UnsafeRawPointer(bitPattern: address) else { return nil }
            return Unmanaged<Value>.fromOpaque(object).takeUnretainedValue()
        }
    }

    /// Adds `value` under `key`, which the map does not hold: callers look a key up first, so
    /// the insertion does not search again.
    mutating func insert(_ value: Value, for key: UnsafeRawPointer) {
        let key = UInt(bitPattern: key)
        let address = UInt(bitPattern: Unmanaged.passUnretained(value).toOpaque())
        keyBits |= Self.bit(of: key)
        let count = inlineCount
        if count < Self.inlineCapacity {
            let offset = count * MemoryLayout<UInt>.stride
            withUnsafeMutableBytes(of: &inlineKeys) { $0.storeBytes(of: key, toByteOffset: offset, as: UInt.self) }
            withUnsafeMutableBytes(of: &inlineObjects) { $0.storeBytes(of: address, toByteOffset: offset, as: UInt.self) }
            inlineCount = count + 1
        } else {
            overflow[key] = address
        }
        held?.append(value)
    }

    /// Objects are at least 16-byte aligned, so the bits above the lowest four vary between them.
    private static func bit(of key: UInt) -> UInt64 {
        1 &<< UInt64((key &>> 4) & 63)
    }
}
