/// Object identity → object, for the identity tracking of one conversion.
///
/// Most graphs hold a handful of class instances, so entries live in one array searched from the
/// end; a `Dictionary` index (SipHash on every key, which was a tenth of nested decoding) is built
/// only once a graph grows past `linearLimit` instances.
struct IdentityMap<Value: AnyObject> {
    private var entries: [(key: UInt, value: Value)] = []
    private var index: [UInt: Int]?

    private static var linearLimit: Int { 32 }

    subscript(key: UnsafeRawPointer) -> Value? {
        get {
            let wanted = UInt(bitPattern: key)
            if let index { return index[wanted].map { entries[$0].value } }
            for entry in entries.reversed() where entry.key == wanted {
                return entry.value
            }
            return nil
        }
        set {
            guard let newValue else { return }
            let key = UInt(bitPattern: key)
            if let position = index?[key] ?? (index == nil ? entries.lastIndex(where: { $0.key == key }) : nil) {
                entries[position].value = newValue
                return
            }
            if entries.isEmpty { entries.reserveCapacity(16) }
            entries.append((key, newValue))
            if index != nil {
                index?[key] = entries.count - 1
            } else if entries.count > Self.linearLimit {
                index = Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($1.key, $0) })
            }
        }
    }
}
