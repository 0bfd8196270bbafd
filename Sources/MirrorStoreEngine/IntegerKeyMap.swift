/// A map from integer keys to 64-bit values, for the tables that hold one entry per key written
/// since the last checkpoint (the engine's key index, a streamed transaction's keys): the keys in
/// one sorted array and their values in another, 16 bytes an entry, where a dictionary takes 32
/// to 43 (at most three quarters of its slots in use, and twice as many slots after a growth).
///
/// Keys that arrive in ascending order, the common case, are appended. Others wait in a small
/// dictionary, `pending`, merged into the arrays once it holds a sixteenth of the map (or
/// `minimumPending`), from the back, in place: each merge moves every entry at most once, so a
/// key costs a few moves more than appending it. A removed key keeps its place, marked
/// `absent`, until the next merge drops it. A value of `absent` itself is kept in `pending` and
/// never merged (no location or mark has that value; this only keeps the map exact).
///
/// Reading the map in key order (``forEach(_:)``, ``sortedEntries``) needs no sort of the arrays:
/// only `pending` is sorted.
public struct IntegerKeyMap: Sendable, Sequence {
    private var keys: [Int64] = []
    private var values: [UInt64] = []
    private var pending: [Int64: UInt64] = [:]
    /// Entries of `keys` marked `absent`.
    private var absentCount = 0
    /// Entries of `pending` whose value is `absent`: kept there for good.
    private var pinnedCount = 0
    /// The number of keys held.
    public private(set) var count = 0

    static let absent = UInt64.max
    static let minimumPending = 1_024

    public init() {}

    public var isEmpty: Bool { count == 0 }

    /// The value of `key`, or nil when the map holds none; setting nil removes the key.
    public subscript(key: Int64) -> UInt64? {
        get {
            // A key in `pending` is marked absent in the arrays, if it is there at all.
            if !pending.isEmpty, let value = pending[key] { return value }
            guard let position = position(of: key) else { return nil }
            let value = values[position]
            return value == Self.absent ? nil : value
        }
        set {
            if let newValue {
                updateValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// Sets the value of `key` and returns the one it replaced, or nil when it held none.
    @discardableResult
    public mutating func updateValue(_ value: UInt64, forKey key: Int64) -> UInt64? {
        if !pending.isEmpty, let old = pending[key] {
            pending[key] = value
            if old == Self.absent { pinnedCount -= 1 }
            if value == Self.absent { pinnedCount += 1 }
            return old
        }
        let position = position(of: key)
        if value == Self.absent {
            // Kept in `pending` for good, the arrays' entry (if any) marked absent.
            var old: UInt64?
            if let position, values[position] != Self.absent {
                old = values[position]
                values[position] = Self.absent
                absentCount += 1
            } else {
                count += 1
            }
            pending[key] = value
            pinnedCount += 1
            return old
        }
        if let position {
            let old = values[position]
            values[position] = value
            guard old == Self.absent else { return old }
            absentCount -= 1
            count += 1
            return nil
        }
        count += 1
        if pending.isEmpty, keys.last.map({ $0 < key }) ?? true {
            reserve(keys.count + 1)
            keys.append(key)
            values.append(value)
            return nil
        }
        pending[key] = value
        if pending.count - pinnedCount >= Swift.max(Self.minimumPending, count / 16) { merge() }
        return nil
    }

    /// Removes `key` and returns its value, or nil when the map held none.
    @discardableResult
    public mutating func removeValue(forKey key: Int64) -> UInt64? {
        if !pending.isEmpty, let old = pending.removeValue(forKey: key) {
            if old == Self.absent { pinnedCount -= 1 }
            count -= 1
            return old
        }
        guard let position = position(of: key), values[position] != Self.absent else { return nil }
        let old = values[position]
        values[position] = Self.absent
        absentCount += 1
        count -= 1
        if absentCount > Swift.max(Self.minimumPending, keys.count / 4) { merge() }
        return old
    }

    /// The entries the arrays have room for.
    var capacity: Int { keys.capacity }

    /// The bytes the arrays have room for: what the map takes beyond `pending`.
    var byteCapacity: Int { keys.capacity * 8 + values.capacity * 8 }

    /// Makes room for `count` entries in all, without allocating more as they come.
    public mutating func reserveCapacity(_ count: Int) {
        guard count > keys.capacity else { return }
        keys.reserveCapacity(count)
        values.reserveCapacity(count)
    }

    /// The position of `key` in `keys`, marked absent or not. A few steps guess where the key
    /// lies between the ends as if keys were evenly spread (one step for consecutive keys, a few
    /// for random ones, where halving a million keys misses the cache a dozen times), then it
    /// halves, and it ends with a short scan.
    private func position(of key: Int64) -> Int? {
        guard let first = keys.first, let last = keys.last, key >= first, key <= last else { return nil }
        // keys[low] <= key <= keys[high] throughout.
        var low = 0
        var high = keys.count - 1
        var guesses = 0
        while high - low > 16 {
            let middle: Int
            if guesses < 4 {
                let span = Double(keys[high]) - Double(keys[low])
                let fraction = span > 0 ? (Double(key) - Double(keys[low])) / span : 0
                middle = Swift.min(Swift.max(low + Int(fraction * Double(high - low)), low + 1), high - 1)
                guesses += 1
            } else {
                middle = low + (high - low) / 2
            }
            let found = keys[middle]
            if found < key {
                low = middle
            } else if found > key {
                high = middle
            } else {
                return middle
            }
        }
        for position in low...high where keys[position] >= key { return keys[position] == key ? position : nil }
        return nil
    }

    /// Grows the arrays by a quarter at a time rather than doubling, so that their unused
    /// capacity stays a small part of the map.
    private mutating func reserve(_ wanted: Int) {
        guard wanted > keys.capacity else { return }
        let grown = Swift.max(wanted, keys.capacity + keys.capacity / 4, 16)
        keys.reserveCapacity(grown)
        values.reserveCapacity(grown)
    }

    /// Moves `pending`'s entries (but those valued `absent`) into the arrays and drops the
    /// entries marked absent, in place: from the back, the largest key first.
    private mutating func merge() {
        let moving = pending.filter { $0.value != Self.absent }.sorted { $0.key < $1.key }
        pending = pending.filter { $0.value == Self.absent }
        let oldCount = keys.count
        let total = oldCount + moving.count
        reserve(total)
        keys.append(contentsOf: repeatElement(0, count: moving.count))
        values.append(contentsOf: repeatElement(0, count: moving.count))
        var from = oldCount - 1
        var next = moving.count - 1
        var to = total - 1
        while next >= 0 {
            if from >= 0, keys[from] > moving[next].key {
                if values[from] != Self.absent {
                    keys[to] = keys[from]
                    values[to] = values[from]
                    to -= 1
                }
                from -= 1
            } else {
                keys[to] = moving[next].key
                values[to] = moving[next].value
                to -= 1
                next -= 1
            }
        }
        while from >= 0 {
            if values[from] != Self.absent {
                keys[to] = keys[from]
                values[to] = values[from]
                to -= 1
            }
            from -= 1
        }
        // Entries dropped leave room at the front.
        let dropped = to + 1
        if dropped > 0 {
            keys.removeFirst(dropped)
            values.removeFirst(dropped)
        }
        absentCount = 0
    }

    /// Every entry in key order.
    public var sortedEntries: SortedEntries { SortedEntries(map: self) }

    public func makeIterator() -> SortedEntries.Iterator { sortedEntries.makeIterator() }

    /// The entries of a map in key order: its arrays as they are, and its pending keys sorted.
    public struct SortedEntries: Sequence, Sendable {
        let keys: [Int64]
        let values: [UInt64]
        let pending: [(key: Int64, value: UInt64)]

        init(map: IntegerKeyMap) {
            keys = map.keys
            values = map.values
            pending = map.pending.sorted { $0.key < $1.key }
        }

        public func makeIterator() -> Iterator { Iterator(entries: self) }

        public struct Iterator: IteratorProtocol, Sendable {
            let entries: SortedEntries
            var position = 0
            var pendingPosition = 0

            public mutating func next() -> (key: Int64, value: UInt64)? {
                while position < entries.keys.count, entries.values[position] == IntegerKeyMap.absent { position += 1 }
                let fromArrays = position < entries.keys.count ? entries.keys[position] : nil
                let fromPending = pendingPosition < entries.pending.count ? entries.pending[pendingPosition].key : nil
                if let key = fromArrays, fromPending.map({ key < $0 }) ?? true {
                    defer { position += 1 }
                    return (key, entries.values[position])
                }
                guard fromPending != nil else { return nil }
                defer { pendingPosition += 1 }
                return entries.pending[pendingPosition]
            }
        }
    }
}
