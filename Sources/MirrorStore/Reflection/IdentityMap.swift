/// Object identity → object, for the identity tracking of one conversion.
///
/// Most graphs hold a handful of class instances, so entries live in one array searched from the
/// end; a `Dictionary` index (SipHash on every key, which was a tenth of nested decoding) is built
/// only once a graph grows past `linearLimit` instances.
struct IdentityMap<Value: AnyObject> {
    /// A struct, not a tuple: an array of tuples is destroyed by the runtime's generic tuple code.
    private struct Entry {
        let key: UInt
        let value: Value
    }

    private var entries: [Entry] = []
    private var index: [UInt: Int]?

    private static var linearLimit: Int { 32 }

    subscript(key: UnsafeRawPointer) -> Value? {
        let wanted = UInt(bitPattern: key)
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
        if entries.isEmpty { entries.reserveCapacity(16) }
        entries.append(Entry(key: key, value: value))
        if index != nil {
            index?[key] = entries.count - 1
        } else if entries.count > Self.linearLimit {
            index = Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($1.key, $0) })
        }
    }
}
