/// The packed byte-string layout of a key-run block (layout 5, format 6 on, read by
/// `PackedByteBlockUnsafeReading.swift`): byte-string keys of one length, as UUID keys are, and
/// their value locations at fixed widths, so that a lookup still halves over entries where they
/// lie. The bytes every key of the block begins with are written once; each entry holds the rest
/// of its key, its value's offset less the block's smallest and its length, in the bytes the
/// widest needs; no tag, key length or entry offset. A 16-byte key takes about 20 bytes an entry
/// where the general layout takes 28.
struct PackedByteBlock {
    /// The widths, in bytes, of the block's keys and of an entry's fields.
    struct Widths: Equatable {
        /// Every key's length.
        var key: Int
        /// The bytes every key begins with, written once.
        var prefix: Int
        var offset: Int
        var length: Int

        /// The bytes of a key an entry holds: those after the prefix.
        var suffix: Int { key &- prefix }
        var entry: Int { suffix &+ offset &+ length }

        /// Widths a writer makes: keys of 1 to 255 bytes, a prefix shorter than the keys, the
        /// offset's 1 to 5 bytes (40 bits), the length's 1 to 3 (24 bits).
        var isValid: Bool {
            (1...255).contains(key) && (0..<key).contains(prefix) && (1...5).contains(offset) && (1...3).contains(length)
        }
    }

    private(set) var count = 0
    /// Every key's bytes, one after the other, `keyWidth` each.
    private var keys: [UInt8] = []
    private var locations: [UInt64] = []
    private var keyWidth = 0
    /// How many bytes the first key and the last share (keys come in order, so every key in
    /// between shares them too).
    private var shared = 0
    private var lowestOffset = UInt64.max
    private var highestOffset: UInt64 = 0
    private var longest: UInt64 = 0

    /// Whether the block could take `key` at `packed` in this layout: a byte-string key of the
    /// first one's length, at a location that is not a deletion mark.
    func accepts(_ key: StorageKey, packed: UInt64) -> Bool {
        guard packed != 0, case .bytes(let bytes) = key, (1...255).contains(bytes.count) else { return false }
        return count == 0 || bytes.count == keyWidth
    }

    /// Adds the next entry, one that ``accepts(_:packed:)`` takes (any other is left out).
    mutating func add(_ key: StorageKey, packed: UInt64) {
        guard accepts(key, packed: packed), case .bytes(let bytes) = key else { return }
        if count == 0 {
            keyWidth = bytes.count
            shared = bytes.count
        } else {
            shared = sharedWithFirst(bytes, upTo: shared)
        }
        keys.append(contentsOf: bytes)
        locations.append(packed)
        count += 1
        let offset = packed >> 24
        lowestOffset = min(lowestOffset, offset)
        highestOffset = max(highestOffset, offset)
        longest = max(longest, packed & 0xFF_FFFF)
    }

    /// Calls `body` with every entry, in order: for a block that takes another layout after all.
    func forEachEntry(_ body: (StorageKey, UInt64) throws -> Void) rethrows {
        for (index, packed) in locations.enumerated() {
            try body(.bytes(Array(keys[(index * keyWidth)..<((index + 1) * keyWidth)])), packed)
        }
    }

    mutating func removeAll() {
        self = PackedByteBlock()
    }

    /// How many of the first key's first `limit` bytes `bytes` shares.
    private func sharedWithFirst(_ bytes: [UInt8], upTo limit: Int) -> Int {
        var index = 0
        while index < limit, keys[index] == bytes[index] { index += 1 }
        return index
    }

    var widths: Widths {
        Self.widths(key: keyWidth, shared: shared, lowest: lowestOffset, highest: highestOffset, longest: longest)
    }

    private static func widths(key: Int, shared: Int, lowest: UInt64, highest: UInt64, longest: UInt64) -> Widths {
        // At least one byte of each key stays in its entry, so that a block of one entry is
        // laid out as any other.
        Widths(key: key, prefix: min(shared, key - 1), offset: max(1, bytes(highest &- lowest)), length: max(1, bytes(longest)))
    }

    /// The bytes `value` needs.
    private static func bytes(_ value: UInt64) -> Int {
        (64 - value.leadingZeroBitCount + 7) / 8
    }

    /// The block's bytes at `widths`, frame and checksum included, for `count` entries.
    private static func size(_ widths: Widths, count: Int) -> Int {
        RunBlockReader.packedBytesEntriesStart + widths.prefix + count * widths.entry + RunBlockReader.checksumSize
    }

    /// Whether the block closes before one more entry, `key` (after every key so far) at
    /// `packed`: when the entry would take it past `target` bytes, or would widen every entry
    /// while the block already holds half the entries it could at its present widths. Nil when
    /// the block with the entry could not take this layout.
    func closes(adding key: StorageKey, packed: UInt64, target: Int) -> Bool? {
        guard accepts(key, packed: packed), case .bytes(let bytes) = key else { return nil }
        guard count > 0 else { return false }
        let offset = packed >> 24
        let next = Self.widths(
            key: keyWidth, shared: sharedWithFirst(bytes, upTo: shared), lowest: min(lowestOffset, offset),
            highest: max(highestOffset, offset), longest: max(longest, packed & 0xFF_FFFF))
        if Self.size(next, count: count + 1) > target { return true }
        let present = widths
        let room = target - RunBlockReader.packedBytesEntriesStart - present.prefix - RunBlockReader.checksumSize
        return next.entry > present.entry && count >= room / present.entry / 2
    }

    /// The block's entries as its payload after the count: the header, the shared prefix, then
    /// each entry at the block's widths.
    func encode() -> [UInt8] {
        let widths = widths
        var writer = ByteWriter()
        writer.reserve(RunBlockReader.packedBytesHeaderSize + widths.prefix + count * widths.entry)
        writer.uint64(lowestOffset)
        writer.byte(UInt8(widths.key))
        writer.byte(UInt8(widths.prefix))
        writer.byte(UInt8(widths.offset))
        writer.byte(UInt8(widths.length))
        writer.bytes.append(contentsOf: keys[0..<widths.prefix])
        func put(_ value: UInt64, width: Int) {
            for index in 0..<width { writer.byte(UInt8(truncatingIfNeeded: value >> UInt64(8 * index))) }
        }
        for (index, packed) in locations.enumerated() {
            let start = index * widths.key
            writer.bytes.append(contentsOf: keys[(start + widths.prefix)..<(start + widths.key)])
            put((packed >> 24) - lowestOffset, width: widths.offset)
            put(packed & 0xFF_FFFF, width: widths.length)
        }
        return writer.bytes
    }
}
