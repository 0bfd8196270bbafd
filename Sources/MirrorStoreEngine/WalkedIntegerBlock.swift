/// The walked integer layout of a key-run block (layout 4, read by
/// `WalkedIntegerBlockUnsafeReading.swift`): integer keys whose values lie one after the other in
/// the log, each put's bytes right after the value before it (the puts of one put-integers
/// operation), so that the block need not repeat the lengths the log already holds. It keeps the
/// location (offset and length) of every `interval`-th entry only, a *restart*; an entry between
/// two is found by walking the log from its restart's value on, each step over the value's end,
/// `skip` bytes (a step in a stepped run) and the next value's length varint (LevelDB's block
/// restart points, over the log rather than the block). An auto-incremented key whose values are
/// under 256 bytes then takes about a quarter of a byte an entry where the packed layout takes 3.
struct WalkedIntegerBlock {
    /// Entries from one restart to the next: a lookup walks at most this many less one.
    static let interval = 16
    /// The bytes a walk skips before each length varint: none in a dense run, the one-byte step in
    /// a stepped one.
    static let skips = 0...1

    private(set) var count = 0
    private var firstKey: Int64 = 0
    private var lastKey: Int64 = 0
    /// Where the last entry's value ends: the next one follows it when its value starts `skip`
    /// bytes and its length varint later.
    private var lastEnd: UInt64 = 0
    /// Where the values end at the latest: the walks of the block read nothing past it.
    private var end: UInt64 = 0
    private var lowestOffset = UInt64.max
    private var highestOffset: UInt64 = 0
    private var longest: UInt64 = 0
    /// Set by the first entry that follows another.
    private(set) var skip: Int?

    /// The longest value a walk steps over. A step over a longer one lands in another cache
    /// line, often another page, so a lookup's walk over up to 15 of them waited on memory for
    /// most of the lookup's time; beside such values the packed layout's few bytes an entry
    /// are little.
    static let longestWalked: UInt64 = 256

    /// Whether `packed` is a location a walk can give: not a deletion, not a value longer than
    /// ``longestWalked`` (nor one too long for its length to fit a location, whose true length
    /// the checkpoint's long values keep).
    static func isWalkable(_ packed: UInt64) -> Bool {
        packed != 0 && packed & 0xFF_FFFF <= longestWalked
    }

    /// Whether `packed` can be the next entry: a restart takes any walkable location; any other
    /// entry's value must start right where a walk from the one before lands.
    func accepts(_ packed: UInt64) -> Bool {
        guard Self.isWalkable(packed) else { return false }
        if count % Self.interval == 0 { return true }
        let offset = packed >> 24
        guard offset > lastEnd else { return false }
        let gap = offset - lastEnd
        let varint = UInt64(ByteWriter.varintSize(packed & 0xFF_FFFF))
        if let skip { return gap == UInt64(skip) + varint }
        return gap >= varint && gap - varint <= UInt64(Self.skips.upperBound)
    }

    /// Adds an entry the block ``accepts(_:)``, `key` above every key so far.
    mutating func add(_ key: Int64, packed: UInt64) {
        let offset = packed >> 24
        let length = packed & 0xFF_FFFF
        if count == 0 { firstKey = key }
        if count % Self.interval == 0 {
            lowestOffset = min(lowestOffset, offset)
            highestOffset = max(highestOffset, offset)
            longest = max(longest, length)
        } else if skip == nil {
            skip = Int(offset - lastEnd) - ByteWriter.varintSize(length)
        }
        lastKey = key
        count += 1
        lastEnd = offset + length
        end = max(end, lastEnd)
    }

    /// How many restarts `count` entries have.
    static func restarts(_ count: Int) -> Int {
        (count + interval - 1) / interval
    }

    /// The widths of a key (0 when the keys count up by one), a restart's offset and its length.
    var widths: PackedIntegerBlock.Widths {
        let span = UInt64(bitPattern: lastKey &- firstKey)
        let key = span == UInt64(count - 1) ? 0 : [1, 2, 4, 8].first { Self.bytes(span) <= $0 } ?? 8
        return PackedIntegerBlock.Widths(key: key, offset: max(1, Self.bytes(highestOffset &- lowestOffset)), length: max(1, Self.bytes(longest)))
    }

    /// The block's bytes, frame and checksum included.
    var size: Int {
        let widths = widths
        return RunBlockReader.walkedEntriesStart + count * widths.key + Self.restarts(count) * (widths.offset + widths.length)
            + RunBlockReader.checksumSize
    }

    /// Whether the block closes before one more entry, `key` at `packed` (which it accepts): when
    /// the entry would take it past `target` bytes or past the entries a block counts, or would
    /// widen every entry while the block already holds half the entries it could at its present
    /// widths, as ``PackedIntegerBlock/closes(adding:packed:target:)`` decides.
    func closes(adding key: Int64, packed: UInt64, target: Int) -> Bool {
        var next = self
        next.add(key, packed: packed)
        if next.size > target || next.count > Int(UInt16.max) { return true }
        let room = target - RunBlockReader.walkedEntriesStart - RunBlockReader.checksumSize
        let widths = widths
        let perRestart = Self.interval * widths.key + widths.offset + widths.length
        let nextWidths = next.widths
        return Self.interval * nextWidths.key + nextWidths.offset + nextWidths.length > perRestart
            && count >= room / perRestart * Self.interval / 2
    }

    /// The bytes `value` needs.
    private static func bytes(_ value: UInt64) -> Int {
        (64 - value.leadingZeroBitCount + 7) / 8
    }

    /// The block's payload after the count: the header, the keys (none when they count up by
    /// one), then each restart's offset and length, for `entries` (the ones added, in order).
    func encode(_ entries: ArraySlice<(key: Int64, packed: UInt64)>) -> [UInt8] {
        let widths = widths
        var writer = ByteWriter()
        writer.reserve(RunBlockReader.walkedHeaderSize + entries.count * widths.key + Self.restarts(count) * (widths.offset + widths.length))
        writer.uint64(UInt64(bitPattern: firstKey))
        writer.uint64(lowestOffset)
        writer.uint64(end - lowestOffset)
        writer.byte(UInt8(widths.key))
        writer.byte(UInt8(widths.offset))
        writer.byte(UInt8(widths.length))
        writer.byte(UInt8(skip ?? 0))
        func put(_ value: UInt64, width: Int) {
            for index in 0..<width { writer.byte(UInt8(truncatingIfNeeded: value >> UInt64(8 * index))) }
        }
        if widths.key > 0 {
            for entry in entries { put(UInt64(bitPattern: entry.key &- firstKey), width: widths.key) }
        }
        for (position, entry) in entries.enumerated() where position % Self.interval == 0 {
            put((entry.packed >> 24) - lowestOffset, width: widths.offset)
            put(entry.packed & 0xFF_FFFF, width: widths.length)
        }
        return writer.bytes
    }
}
