/// A map from byte-string keys to 64-bit values, for the tables that hold one entry per key
/// written since the last checkpoint (the engine's key index, a streamed transaction's keys),
/// as ``IntegerKeyMap`` is for integer keys: the keys one after another in one byte buffer, their
/// values in an array, and an open-addressing table of 4-byte slots (an entry's number) finds
/// them. While every key has the same length (UUIDs), an entry's key lies at its number times that
/// width; the first key of another length makes an array of where each key ends. A 16-byte key
/// takes about 35 bytes; in a dictionary of `[UInt8]` keys it took about 90 (an array object per
/// key, and a slot of 16 bytes at most three quarters used).
///
/// String keys are kept as the UTF-8 of their canonical composition (NFC; ASCII is its own), so
/// that canonically equal strings, which Swift's `==` holds equal, are one key; a key read back
/// is that composition. Byte order of NFC's UTF-8 is ``StorageKey/stringPrecedes(_:_:)``'s order.
///
/// A removed key's bytes stay where they are, marked dead, until dead entries are a quarter of
/// the map; then the buffer and the table are rebuilt without them.
public struct ByteKeyMap: Sendable {
    private var bytes: [UInt8] = []
    /// The length of every key while all have one (nil before the first).
    private var width: Int?
    /// Where each entry's key ends in `bytes` (it starts where the one before ends), once keys
    /// differ in length; empty before.
    private var ends: [Int] = []
    private var values: [UInt64] = []
    /// Entries removed, one bit each; empty while none is.
    private var dead: [UInt64] = []
    private var deadCount = 0
    /// Open addressing with linear probing: 0 is empty, else the entry's number plus one.
    private var slots: [UInt32] = []
    /// The number of keys held.
    public private(set) var count = 0

    static let minimumDead = 1_024

    /// An empty map.
    public init() {}

    /// Whether the map holds no key.
    public var isEmpty: Bool { count == 0 }

    /// The bytes the map takes, beside the array headers.
    var byteCapacity: Int { bytes.capacity + ends.capacity * 8 + values.capacity * 8 + dead.capacity * 8 + slots.capacity * 4 }

    /// The keys the map has room for without growing.
    var capacity: Int { values.capacity }

    /// Entries, dead ones included.
    private var entryCount: Int { values.count }

    // MARK: Byte-string keys

    /// The value of `key`, or nil when the map holds none.
    func value<Key: Collection<UInt8>>(for key: Key) -> UInt64? {
        value(for: key, hash: Self.hash(key))
    }

    /// The value of `key`, whose ``hash(_:)`` is `hash`, or nil when the map holds none: for a
    /// map read where a class keeps it, which hashes the key first (``TypeIndex``).
    func value<Key: Collection<UInt8>>(for key: Key, hash: UInt64) -> UInt64? {
        guard count > 0, let entry = find(key, hash: hash).entry else { return nil }
        return values[entry]
    }

    /// Sets the value of `key` and returns the one it replaced, or nil when it held none.
    @discardableResult
    mutating func updateValue<Key: Collection<UInt8>>(_ value: UInt64, for key: Key) -> UInt64? {
        let hash = Self.hash(key)
        if count > 0 {
            let found = find(key, hash: hash)
            if let entry = found.entry {
                let old = values[entry]
                values[entry] = value
                return old
            }
        }
        append(key, value, hash: hash)
        return nil
    }

    /// The value of `key`, or nil after giving it `value`: one probe where reading and then
    /// setting took two.
    mutating func valueOrInsert<Key: Collection<UInt8>>(_ value: UInt64, for key: Key) -> UInt64? {
        let hash = Self.hash(key)
        if count > 0, let entry = find(key, hash: hash).entry { return values[entry] }
        append(key, value, hash: hash)
        return nil
    }

    /// Removes `key` and returns its value, or nil when the map held none.
    @discardableResult
    mutating func removeValue<Key: Collection<UInt8>>(for key: Key) -> UInt64? {
        guard count > 0 else { return nil }
        let found = find(key, hash: Self.hash(key))
        guard let entry = found.entry else { return nil }
        let old = values[entry]
        removeSlot(at: found.slot)
        if dead.isEmpty { dead = Array(repeating: 0, count: (values.capacity + 63) / 64) }
        while dead.count * 64 <= entry { dead.append(0) }
        dead[entry >> 6] |= 1 << UInt64(entry & 63)
        deadCount += 1
        count -= 1
        if deadCount > Swift.max(Self.minimumDead, entryCount / 4) { rebuild(reserving: 0) }
        return old
    }

    // MARK: String keys

    /// The value of the string key `key` (kept as its NFC's UTF-8), or nil when the map holds none.
    public func value(forString key: String) -> UInt64? { value(for: Self.keyBytes(key)) }

    /// Sets the value of the string key `key` and returns the one it replaced, or nil.
    @discardableResult
    public mutating func updateValue(_ value: UInt64, forString key: String) -> UInt64? { updateValue(value, for: Self.keyBytes(key)) }

    @discardableResult
    mutating func removeValue(forString key: String) -> UInt64? { removeValue(for: Self.keyBytes(key)) }

    /// A string key's bytes: its UTF-8 copied out at once (reading a `String`'s UTF-8 view a byte at
    /// a time, to hash and compare it, cost several times the copy), or its NFC's when not ASCII.
    private static func keyBytes(_ key: String) -> [UInt8] {
        let bytes = Array(key.utf8)
        return bytes.allSatisfy { $0 < 0x80 } ? bytes : key._nfcCodeUnits
    }

    /// The value of the byte-string key `key`, or nil: `value(for:)` for a caller in another module,
    /// which could not specialize it.
    public func value(forBytes key: [UInt8]) -> UInt64? { value(for: key) }

    /// Sets the value of the byte-string key `key` and returns the one it replaced, or nil.
    @discardableResult
    public mutating func updateValue(_ value: UInt64, forBytes key: [UInt8]) -> UInt64? { updateValue(value, for: key) }

    /// The value of the string key `key`, or nil after giving it `value`.
    public mutating func valueOrInsert(_ value: UInt64, forString key: String) -> UInt64? {
        valueOrInsert(value, for: Self.keyBytes(key))
    }

    /// The value of the byte-string key `key`, or nil after giving it `value`.
    public mutating func valueOrInsert(_ value: UInt64, forBytes key: [UInt8]) -> UInt64? { valueOrInsert(value, for: key) }

    // MARK: Reading every entry

    /// The bytes of entry `entry`'s key.
    func key(at entry: Int) -> ArraySlice<UInt8> {
        bytes[keyRange(at: entry)]
    }

    /// Where entry `entry`'s key lies in `bytes`.
    @inline(__always)
    private func keyRange(at entry: Int) -> Range<Int> {
        if let width { return (entry * width)..<(entry * width + width) }
        return (entry == 0 ? 0 : ends[entry - 1])..<ends[entry]
    }

    func value(at entry: Int) -> UInt64 { values[entry] }

    /// Calls `body` with the number of every live entry, in the order they were added.
    func forEachEntry(_ body: (Int) throws -> Void) rethrows {
        for entry in values.indices where !isDead(entry) { try body(entry) }
    }

    /// The numbers of the live entries in the byte order of their keys: 4 bytes an entry, where
    /// sorting the keys themselves copied them.
    func sortedEntries() -> [UInt32] {
        var order: [UInt32] = []
        order.reserveCapacity(count)
        for entry in values.indices where !isDead(entry) { order.append(UInt32(truncatingIfNeeded: entry)) }
        order.sort { key(at: Int($0)).lexicographicallyPrecedes(key(at: Int($1))) }
        return order
    }

    /// Makes room for `count` keys in all, of `keyBytes` bytes each.
    mutating func reserveCapacity(_ count: Int, keyBytes: Int = 16) {
        guard count > values.capacity else { return }
        values.reserveCapacity(count)
        bytes.reserveCapacity(count.multipliedReportingOverflow(by: keyBytes).overflow ? count : count * keyBytes)
        if Self.slotCount(for: count) > slots.count { rebuild(reserving: count) }
    }

    // MARK: Inside

    private func isDead(_ entry: Int) -> Bool {
        !dead.isEmpty && entry >> 6 < dead.count && dead[entry >> 6] & (1 << UInt64(entry & 63)) != 0
    }

    /// A hash of the key's bytes, taken eight at a time, each word folded in by SplitMix64's
    /// finalizer from a seed drawn once per process (`Hasher`, which a probe and every table
    /// growth paid for each key, cost most of an insert of a key).
    static func hash<Key: Collection<UInt8>>(_ key: Key) -> UInt64 {
        if let hash = key.withContiguousStorageIfAvailable({ hash(contiguous: $0, seed: seed) }) { return hash }
        var state = seed
        var word: UInt64 = 0
        var filled: UInt64 = 0
        for byte in key {
            word |= UInt64(byte) << (filled &* 8)
            filled &+= 1
            if filled == 8 {
                state = mix(state &+ word)
                word = 0
                filled = 0
            }
        }
        return mix(state &+ word &+ (UInt64(truncatingIfNeeded: key.count) << 56 | filled))
    }

    private static let seed = UInt64.random(in: 0...UInt64.max)

    static func mix(_ value: UInt64) -> UInt64 {
        var mixed = value &+ 0x9E37_79B9_7F4A_7C15
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// Slots for `count` keys: a power of two at most three quarters full (fuller, the probes'
    /// key comparisons cost more than the slots saved).
    private static func slotCount(for count: Int) -> Int {
        var slots = 16
        while slots / 4 * 3 < count { slots *= 2 }
        return slots
    }

    /// The slot that holds `key` and its entry, or the empty slot where it would go.
    private func find<Key: Collection<UInt8>>(_ key: Key, hash: UInt64) -> (slot: Int, entry: Int?) {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        if let width {
            // Keys of another length are not held: only the empty slot is wanted.
            guard key.count == width else {
                while slots[slot] != 0 { slot = (slot + 1) & mask }
                return (slot, nil)
            }
        }
        // A key whose bytes lie together (every lookup's) is compared with each entry's where
        // they lie, length first (``ByteKeyMap/bytes(_:in:equal:)``); going through an
        // `ArraySlice` and comparing byte by byte cost most of a lookup that misses.
        if let found = key.withContiguousStorageIfAvailable({ wanted -> (slot: Int, entry: Int?) in
            while true {
                let held = slots[slot]
                if held == 0 { return (slot, nil) }
                let entry = Int(held) - 1
                if Self.bytes(bytes, in: keyRange(at: entry), equal: wanted) { return (slot, entry) }
                slot = (slot + 1) & mask
            }
        }) {
            return found
        }
        while true {
            let held = slots[slot]
            if held == 0 { return (slot, nil) }
            let entry = Int(held) - 1
            if self.key(at: entry).elementsEqual(key) { return (slot, entry) }
            slot = (slot + 1) & mask
        }
    }

    private mutating func append<Key: Collection<UInt8>>(_ key: Key, _ value: UInt64, hash: UInt64) {
        if Self.slotCount(for: entryCount + 1) > slots.count { rebuild(reserving: entryCount + 1) }
        let length = key.count
        if entryCount == 0 {
            width = length
        } else if let width, width != length {
            // The first key of another length: from now on each key's end is kept.
            ends = (0..<entryCount).map { ($0 + 1) * width }
            self.width = nil
        }
        grow(by: 1, keyBytes: length)
        bytes.append(contentsOf: key)
        if width == nil { ends.append(bytes.count) }
        values.append(value)
        count += 1
        place(entry: entryCount - 1, hash: hash)
    }

    /// Grows the arrays by a quarter at a time rather than doubling, so that their unused
    /// capacity stays a small part of the map.
    private mutating func grow(by added: Int, keyBytes: Int) {
        if entryCount + added > values.capacity {
            let grown = Swift.max(entryCount + added, values.capacity + values.capacity / 4, 16)
            if width == nil { ends.reserveCapacity(grown) }
            values.reserveCapacity(grown)
        }
        if bytes.count + keyBytes > bytes.capacity {
            bytes.reserveCapacity(Swift.max(bytes.count + keyBytes, bytes.capacity + bytes.capacity / 4, 256))
        }
    }

    private mutating func place(entry: Int, hash: UInt64) {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while slots[slot] != 0 { slot = (slot + 1) & mask }
        slots[slot] = UInt32(truncatingIfNeeded: entry + 1)
    }

    /// Empties `slot`, moving back the slots after it that their probe passed through it.
    private mutating func removeSlot(at removed: Int) {
        let mask = slots.count - 1
        var hole = removed
        var slot = (hole + 1) & mask
        while slots[slot] != 0 {
            let home = Int(truncatingIfNeeded: Self.hash(key(at: Int(slots[slot]) - 1))) & mask
            // The slot's entry may fill the hole when its home is not in (hole, slot].
            let distanceToSlot = (slot - home) & mask
            let distanceToHole = (hole - home) & mask
            if distanceToHole < distanceToSlot {
                slots[hole] = slots[slot]
                hole = slot
            }
            slot = (slot + 1) & mask
        }
        slots[hole] = 0
    }

    /// Drops the dead entries and sizes the table for `reserving` keys (at least those held),
    /// hashing each key again.
    private mutating func rebuild(reserving: Int) {
        if deadCount > 0 {
            var keptBytes: [UInt8] = []
            keptBytes.reserveCapacity(bytes.count)
            var keptEnds: [Int] = []
            var keptValues: [UInt64] = []
            if width == nil { keptEnds.reserveCapacity(count) }
            keptValues.reserveCapacity(count)
            for entry in values.indices where !isDead(entry) {
                keptBytes.append(contentsOf: key(at: entry))
                if width == nil { keptEnds.append(keptBytes.count) }
                keptValues.append(values[entry])
            }
            (bytes, ends, values) = (keptBytes, keptEnds, keptValues)
            dead = []
            deadCount = 0
        }
        slots = Array(repeating: 0, count: Self.slotCount(for: Swift.max(reserving, entryCount)))
        for entry in values.indices { place(entry: entry, hash: Self.hash(key(at: entry))) }
    }
}
