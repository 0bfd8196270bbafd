/// Object identity → object, for the identity tracking of conversions.
///
/// Most graphs hold a handful of class instances, so entries live in one array searched from the
/// end; a `Dictionary` index (SipHash on every key, which was a tenth of nested decoding) is built
/// only once a graph grows past `linearLimit` instances.
///
/// Within one conversion every object the map is given stays reachable from the conversion's
/// result (or from the context, see `DecodingContext.discarded`) until the conversion ends, so a
/// map that serves one conversion refers to its objects without holding them: holding costs two
/// atomic reference count operations per object, which measured about 8% of nested record →
/// model. A map that serves several conversions, whose callers may drop one result before a later
/// conversion meets the same key, holds its objects.
struct IdentityMap<Value: AnyObject> {
    /// A struct, not a tuple: an array of tuples is destroyed by the runtime's generic tuple code.
    private struct Entry {
        let key: UInt
        unowned(unsafe) let value: Value
    }

    private var entries: [Entry] = []
    private var index: [UInt: Int]?
    /// One bit per key held, chosen by a few bits of its address: most lookups are of keys not
    /// held (each new object is looked up before it is made), and a clear bit answers them
    /// without a scan.
    private var keyBits: UInt64 = 0
    /// The objects, for a map that holds them; `nil` for a map that serves one conversion.
    private var held: [Value]?

    private static var linearLimit: Int { 32 }

    /// `holdsValues`: whether the map keeps its objects alive, which a map serving more than one
    /// conversion must.
    init(holdsValues: Bool) {
        held = holdsValues ? [] : nil
    }

    /// Whether the map keeps its objects alive.
    var holdsValues: Bool { held != nil }

    subscript(key: UnsafeRawPointer) -> Value? {
        let wanted = UInt(bitPattern: key)
        guard keyBits & Self.bit(of: wanted) != 0 else { return nil }
        if let index { return index[wanted].map { entries[$0].value } }
        // Backwards by position: the latest entries are the likeliest, and `reversed()` would
        // copy each entry out as a tuple.
        var position = entries.count
        while position > 0 {
            position -= 1
            if entries[position].key == wanted { return entries[position].value }
        }
        return nil
    }

    /// Adds `value` under `key`, which the map does not hold: callers look a key up first, so
    /// the insertion does not search again.
    mutating func insert(_ value: Value, for key: UnsafeRawPointer) {
        let key = UInt(bitPattern: key)
        keyBits |= Self.bit(of: key)
        if entries.isEmpty { entries.reserveCapacity(16) }
        entries.append(Entry(key: key, value: value))
        held?.append(value)
        if index != nil {
            index?[key] = entries.count - 1
        } else if entries.count > Self.linearLimit {
            index = Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($1.key, $0) })
        }
    }

    /// Objects are at least 16-byte aligned, so the bits above the lowest four vary between them.
    private static func bit(of key: UInt) -> UInt64 {
        1 &<< UInt64((key &>> 4) & 63)
    }
}
