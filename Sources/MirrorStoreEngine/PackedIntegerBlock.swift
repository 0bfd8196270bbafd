/// The packed integer layout of a key-run block (layout 3, read by
/// `PackedIntegerBlockUnsafeReading.swift`): integer keys and their value locations in as few
/// bytes as the block's entries need, at fixed widths so that a lookup still reads one entry
/// where it lies. Keys that count up by one take no bytes at all; offsets are written less the
/// block's smallest, lengths in the bytes the longest needs. The integer layout spends 16 bytes
/// on each entry; a block of an auto-incremented key whose values are under 256 bytes, 4.
struct PackedIntegerBlock {
    /// The widths, in bytes, of an entry's three fields.
    struct Widths: Equatable {
        var key: Int
        var offset: Int
        var length: Int

        var entry: Int { key + offset + length }

        /// Widths a writer makes: the key's 0, 1, 2, 4 or 8, the offset's 1 to 5 (40 bits),
        /// the length's 1 to 3 (24 bits).
        var isValid: Bool {
            (key == 0 || key == 1 || key == 2 || key == 4 || key == 8) && (1...5).contains(offset) && (1...3).contains(length)
        }
    }

    private(set) var count = 0
    private var firstKey: Int64 = 0
    private var lastKey: Int64 = 0
    private var lowestOffset = UInt64.max
    private var highestOffset: UInt64 = 0
    private var longest: UInt64 = 0
    /// A deleted key (location 0) is among the entries: the block cannot take this layout.
    private(set) var holdsDeletion = false

    /// Whether the block closes before one more entry, `key` (above every key so far) at
    /// `packed`: when the entry would take it past `target` bytes, or would widen every entry
    /// while the block already holds half the entries it could at its present widths (a new
    /// block then costs less than the wider entries). Nil when the block with the entry could
    /// not take the packed layout.
    func closes(adding key: Int64, packed: UInt64, target: Int) -> Bool? {
        var next = self
        next.add(key, packed: packed)
        guard let size = next.size else { return nil }
        if size > target { return true }
        let width = widths.entry
        let room = target - RunBlockReader.packedEntriesStart - RunBlockReader.checksumSize
        return next.widths.entry > width && count >= room / width / 2
    }

    /// The block's bytes, frame and checksum included; nil when it holds a deleted key.
    var size: Int? {
        guard !holdsDeletion else { return nil }
        return RunBlockReader.packedEntriesStart + count * widths.entry + RunBlockReader.checksumSize
    }

    mutating func add(_ key: Int64, packed: UInt64) {
        if count == 0 { firstKey = key }
        lastKey = key
        count += 1
        guard packed != 0 else {
            holdsDeletion = true
            return
        }
        let offset = packed >> 24
        lowestOffset = min(lowestOffset, offset)
        highestOffset = max(highestOffset, offset)
        longest = max(longest, packed & 0xFF_FFFF)
    }

    mutating func removeAll() {
        self = PackedIntegerBlock()
    }

    var widths: Widths {
        // Keys strictly increase, so the last less the first is the largest difference, and
        // the keys are dense exactly when it is one less than their count.
        let span = UInt64(bitPattern: lastKey &- firstKey)
        let key = span == UInt64(count - 1) ? 0 : [1, 2, 4, 8].first { Self.bytes(span) <= $0 } ?? 8
        return Widths(key: key, offset: max(1, Self.bytes(highestOffset &- lowestOffset)), length: max(1, Self.bytes(longest)))
    }

    /// The bytes `value` needs.
    private static func bytes(_ value: UInt64) -> Int {
        (64 - value.leadingZeroBitCount + 7) / 8
    }

    /// The block's entries as its payload after the count: the header, then `entries` (the ones
    /// added, in order) at the block's widths.
    func encode(_ entries: [(key: Int64, packed: UInt64)]) -> [UInt8] {
        let widths = widths
        var writer = ByteWriter()
        writer.reserve(RunBlockReader.packedHeaderSize + entries.count * widths.entry)
        writer.uint64(UInt64(bitPattern: firstKey))
        writer.uint64(lowestOffset)
        writer.byte(UInt8(widths.key))
        writer.byte(UInt8(widths.offset))
        writer.byte(UInt8(widths.length))
        func put(_ value: UInt64, width: Int) {
            for index in 0..<width { writer.byte(UInt8(truncatingIfNeeded: value >> UInt64(8 * index))) }
        }
        for entry in entries {
            put(UInt64(bitPattern: entry.key &- firstKey), width: widths.key)
            put((entry.packed >> 24) - lowestOffset, width: widths.offset)
            put(entry.packed & 0xFF_FFFF, width: widths.length)
        }
        return writer.bytes
    }
}
