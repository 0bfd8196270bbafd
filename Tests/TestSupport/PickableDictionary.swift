/// A dictionary that also keeps its keys in an array, so that a seeded test picks a stored key in
/// constant time and the same key in every process (a `Dictionary`'s own order changes with
/// Swift's per-process hash seed). Removal moves the last key into the removed one's place.
public struct PickableDictionary<Key: Hashable, Value> {
    /// The entries, for reads that do not depend on order.
    public private(set) var entries: [Key: (value: Value, slot: Int)] = [:]
    private var keys: [Key] = []

    public init() {}

    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    /// The keys, in an order that depends only on the operations applied.
    public var orderedKeys: [Key] { keys }

    public subscript(key: Key) -> Value? {
        get { entries[key]?.value }
        set {
            if let newValue { updateValue(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    @discardableResult
    public mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        if let old = entries[key] {
            entries[key] = (value, old.slot)
            return old.value
        }
        entries[key] = (value, keys.count)
        keys.append(key)
        return nil
    }

    @discardableResult
    public mutating func removeValue(forKey key: Key) -> Value? {
        guard let old = entries.removeValue(forKey: key) else { return nil }
        let last = keys.removeLast()
        if old.slot < keys.count {
            keys[old.slot] = last
            entries[last]?.slot = old.slot
        }
        return old.value
    }

    /// A stored key chosen by `generator` alone, or nil when empty.
    public func randomKey(using generator: inout SeededRandom) -> Key? {
        keys.isEmpty ? nil : keys[Int.random(in: 0..<keys.count, using: &generator)]
    }

    /// The entries sorted by key.
    public func sorted(by areInIncreasingOrder: (Key, Key) -> Bool) -> [(key: Key, value: Value)] {
        keys.sorted(by: areInIncreasingOrder).compactMap { key in entries[key].map { (key, $0.value) } }
    }
}
