/// Reads key-run blocks of the walked integer layout (4) where they lie, and walks the log from a
/// restart to the entry wanted: the raw-memory half of `WalkedIntegerBlock`, which writes them.
///
/// After the block's length, layout and count: the first key (8, two's complement), the base
/// offset (8), the span (8: the values end at base + span at the latest), three widths in bytes:
/// the key's (0, 1, 2, 4 or 8), a restart offset's (1 to 5) and a restart length's (1 to 3), and
/// the skip (1: 0 or 1); then `count` keys less the first key (none when the keys count up by
/// one), then for every `WalkedIntegerBlock.interval`-th entry its value's offset less the base and
/// its length. The other entries' locations are in the log: each value starts where the one before
/// it ends, past `skip` bytes (a one-byte varint) and its length varint.
extension RunBlockReader {
    static let walkedLayout: UInt8 = 4
    /// Bytes of a walked block between its count and its keys.
    static let walkedHeaderSize = 28
    /// Where a walked block's keys start.
    static let walkedEntriesStart = prefixSize + walkedHeaderSize

    /// A walked block's header, read once per lookup or pass.
    struct WalkedHeader {
        let first: Int64
        let base: UInt64
        /// Where the values end at the latest (base + span); nil when that overflows.
        let end: UInt64?
        let widths: PackedIntegerBlock.Widths
        let skip: Int
        let restarts: Int
    }

    /// The header of a walked block.
    var walkedHeader: WalkedHeader {
        let at = Self.prefixSize
        let base = uint64(at: at + 8)
        let (end, overflow) = base.addingReportingOverflow(uint64(at: at + 16))
        let widths = PackedIntegerBlock.Widths(key: Int(self[at + 24]), offset: Int(self[at + 25]), length: Int(self[at + 26]))
        return WalkedHeader(
            first: Int64(bitPattern: uint64(at: at)), base: base, end: overflow ? nil : end, widths: widths, skip: Int(self[at + 27]),
            restarts: WalkedIntegerBlock.restarts(count))
    }

    /// Whether a walked block's widths, skip and count fit its length: part of `isWellFormed`.
    var walkedIsWellFormed: Bool {
        let room = size - Self.prefixSize - Self.checksumSize - Self.walkedHeaderSize
        guard room >= 0, count > 0 else { return false }
        let header = walkedHeader
        guard header.widths.isValid, WalkedIntegerBlock.skips.contains(header.skip), let end = header.end, end < ValueLocation.offsetLimit,
              count * header.widths.key + header.restarts * (header.widths.offset + header.widths.length) == room
        else { return false }
        return header.widths.key > 0 || !header.first.addingReportingOverflow(Int64(count - 1)).overflow
    }

    /// `width` bytes at `position`, little-endian.
    @inline(__always)
    private func walkedUnsigned(at position: Int, width: Int) -> UInt64 {
        if position &+ 8 <= head.count {
            return UInt64(littleEndian: head.loadUnaligned(fromByteOffset: position, as: UInt64.self)) & Self.byteMask(width)
        }
        return unsigned(at: position, width: width)
    }

    /// The key of entry `index` (below the count of a well-formed block).
    @inline(__always)
    private func walkedKey(_ index: Int, _ header: WalkedHeader) -> Int64 {
        guard header.widths.key > 0 else { return header.first &+ Int64(index) }
        return header.first &+ Int64(bitPattern: walkedUnsigned(at: Self.walkedEntriesStart &+ index &* header.widths.key, width: header.widths.key))
    }

    /// The packed location of restart `restart`, or nil when it is none a writer makes (past the
    /// block's values, past the 40 bits of an offset, a long value's marker, or 0).
    @inline(__always)
    private func walkedRestart(_ restart: Int, _ header: WalkedHeader) -> UInt64? {
        let widths = header.widths
        let at = Self.walkedEntriesStart &+ count &* widths.key &+ restart &* (widths.offset &+ widths.length)
        let (offset, overflow) = header.base.addingReportingOverflow(walkedUnsigned(at: at, width: widths.offset))
        let length = walkedUnsigned(at: at &+ widths.offset, width: widths.length)
        guard !overflow, let end = header.end, offset <= end, length <= end - offset, length != ValueLocation.lengthSentinel else { return nil }
        let packed = offset &<< 24 | length
        return packed == 0 ? nil : packed
    }

    /// Where the location of entry `index` lies: its restart's, and the steps of the walk from
    /// there (none for a restart); nil when the restart does not decode.
    @inline(__always)
    private func walk(to index: Int, _ header: WalkedHeader) -> LocationWalk? {
        let restart = index / WalkedIntegerBlock.interval
        guard let packed = walkedRestart(restart, header), let end = header.end else { return nil }
        return LocationWalk(packed: packed, steps: index - restart * WalkedIntegerBlock.interval, skip: header.skip, end: end)
    }

    /// The lookup of a walked block of dense keys whose header and restart lie in its first piece
    /// (the common lookup of an auto-incremented key): the entry found by subtraction, its
    /// restart read with two loads, no header gathered. Nil for any other block or entry.
    @inline(__always)
    func denseWalk(ofInteger wanted: Int64) -> IntegerSearch? {
        let at = Self.prefixSize
        guard Self.walkedEntriesStart <= head.count, head[4] == Self.walkedLayout, head[at + 24] == 0 else { return nil }
        let (index, overflow) = wanted.subtractingReportingOverflow(Int64(littleEndian: head.loadUnaligned(fromByteOffset: at, as: Int64.self)))
        let count = UInt16(littleEndian: head.loadUnaligned(fromByteOffset: 5, as: UInt16.self))
        guard !overflow, index >= 0, index < Int64(count) else { return .absent }
        // Well-formed: 1 to 5 bytes of offset, 1 to 3 of length, the skip 0 or 1.
        let offsetWidth = Int(head[at + 25])
        let lengthWidth = Int(head[at + 26])
        let restart = Int(index) / WalkedIntegerBlock.interval
        let offsetAt = Self.walkedEntriesStart &+ restart &* (offsetWidth &+ lengthWidth)
        let lengthAt = offsetAt &+ offsetWidth
        guard lengthAt &+ 8 <= head.count else { return nil }
        let base = UInt64(littleEndian: head.loadUnaligned(fromByteOffset: at + 8, as: UInt64.self))
        let (end, past) = base.addingReportingOverflow(UInt64(littleEndian: head.loadUnaligned(fromByteOffset: at + 16, as: UInt64.self)))
        let relative = UInt64(littleEndian: head.loadUnaligned(fromByteOffset: offsetAt, as: UInt64.self)) & ((1 &<< UInt64(8 &* offsetWidth)) &- 1)
        let length = UInt64(littleEndian: head.loadUnaligned(fromByteOffset: lengthAt, as: UInt64.self)) & ((1 &<< UInt64(8 &* lengthWidth)) &- 1)
        let (offset, beyond) = base.addingReportingOverflow(relative)
        guard !past, !beyond, offset <= end, length <= end &- offset, length != ValueLocation.lengthSentinel, offset | length != 0 else {
            return .damaged
        }
        let steps = Int(index) &- restart &* WalkedIntegerBlock.interval
        let packed = offset &<< 24 | length
        return steps == 0 ? .found(packed) : .walk(LocationWalk(packed: packed, steps: steps, skip: Int(head[at + 27]), end: end))
    }

    /// `location(ofInteger:guess:)` in a walked block: dense keys are found by subtraction,
    /// others by halving from `guess`; the location is a restart's, or a walk to take.
    func walkedLocation(ofInteger wanted: Int64, guess: () -> Int) -> IntegerSearch {
        let count = count
        let header = walkedHeader
        let found: Int?
        if header.widths.key == 0 {
            let (index, overflow) = wanted.subtractingReportingOverflow(header.first)
            guard !overflow, index >= 0, index < Int64(count) else { return .absent }
            found = Int(index)
        } else {
            found = Self.search(for: wanted, count: count, guess: guess) { index in (walkedKey(index, header), index) }
        }
        guard let found else { return .absent }
        guard let walk = walk(to: found, header) else { return .damaged }
        return walk.steps == 0 ? .found(walk.packed) : .walk(walk)
    }

    /// The key of entry `index` of a walked block, or nil when the block does not hold it: for a
    /// search that compares keys only.
    func walkedKey(_ index: Int) -> Int64? {
        guard layout == Self.walkedLayout, index >= 0, index < count else { return nil }
        return walkedKey(index, walkedHeader)
    }

    /// Where a walked block's values lie: `start..<end` of the log, which a pass reads at once
    /// and hands to ``appendWalkedEntries(to:log:from:)``; nil for any other block.
    var walkedSpan: (start: UInt64, end: UInt64)? {
        guard layout == Self.walkedLayout else { return nil }
        let header = walkedHeader
        guard let end = header.end else { return nil }
        return (header.base, end)
    }

    /// Appends every entry of a walked block to `entries`, in order, walking `log`, the log's
    /// bytes from `start` (at least the block's ``walkedSpan``); false when one does not decode.
    func appendWalkedEntries(to entries: inout [(key: StorageKey, packed: UInt64)], log: UnsafeRawBufferPointer, from start: UInt64) -> Bool {
        guard layout == Self.walkedLayout else { return false }
        let header = walkedHeader
        guard let end = header.end else { return false }
        for restart in 0..<header.restarts {
            guard let packed = walkedRestart(restart, header) else { return false }
            var walk = LocationWalk(packed: packed, steps: 0, skip: header.skip, end: end)
            let first = restart * WalkedIntegerBlock.interval
            for index in first..<min(first + WalkedIntegerBlock.interval, count) {
                if index > first {
                    walk.steps = 1
                    guard walk.advance(in: log, from: start) == true else { return false }
                }
                entries.append((.integer(walkedKey(index, header)), walk.packed))
            }
        }
        return true
    }
}

/// A walk over the log from a restart's value to an entry's: each step reads, where the value
/// before ends, the `skip` bytes (each a whole one-byte varint) and the length varint of the next
/// value, which starts right after. Every read is checked against the bytes given and against the
/// block's end of values.
struct LocationWalk: Equatable {
    /// The packed location reached so far.
    private(set) var packed: UInt64
    /// Steps left to take.
    var steps: Int
    let skip: Int
    /// Where the block's values end: no step reads or lands past it.
    let end: UInt64

    init(packed: UInt64, steps: Int, skip: Int, end: UInt64) {
        self.packed = packed
        self.steps = steps
        self.skip = skip
        self.end = end
    }

    /// Where the walk reads next: the end of the value reached.
    var position: UInt64 { (packed >> 24) &+ (packed & 0xFF_FFFF) }

    /// Takes the steps whose bytes lie in `window`, the log's bytes from `start`: true once none is
    /// left, false when the next one needs bytes from ``position`` on that `window` lacks, nil when
    /// a step does not decode (a skipped byte that is not a whole varint, a length that overflows)
    /// or the walk would read, or end, past the block's values. Only the bytes read and the
    /// location reached are checked: on the way, a walk through intact bytes meets only what
    /// the writer checked, and through damaged ones is stopped by the regions (`RunBlocks.walked`).
    @inline(__always)
    mutating func advance(in window: UnsafeRawBufferPointer, from start: UInt64) -> Bool? {
        guard steps > 0 else { return true }
        let windowEnd = start &+ UInt64(window.count)
        // Bytes past the window but before the values' end: another window may hold them.
        let short: Bool? = windowEnd >= end ? nil : false
        guard let base = window.baseAddress, end > start else { return short }
        // No byte at or past the window's end or the values' end is read.
        let limit = min(UInt64(window.count), end &- start)
        var offset = packed >> 24
        var length = packed & 0xFF_FFFF
        var left = steps
        var cut = false
        walk: while left > 0 {
            let position = offset &+ length
            guard position >= start else { return nil }
            var at = position &- start
            if skip > 0 {
                guard at < limit else {
                    cut = true
                    break walk
                }
                // Each skipped byte is a whole varint: a longer one means the log is not as written.
                guard base.load(fromByteOffset: Int(at), as: UInt8.self) < 0x80 else { return nil }
                at &+= 1
            }
            guard at < limit else {
                cut = true
                break walk
            }
            var byte = base.load(fromByteOffset: Int(at), as: UInt8.self)
            at &+= 1
            var value = UInt64(byte & 0x7F)
            if byte >= 0x80 {
                var shift: UInt64 = 7
                repeat {
                    // Four bytes hold every length a location can.
                    guard shift < 28 else { return nil }
                    guard at < limit else {
                        cut = true
                        break walk
                    }
                    byte = base.load(fromByteOffset: Int(at), as: UInt8.self)
                    at &+= 1
                    value |= UInt64(byte & 0x7F) << shift
                    shift &+= 7
                } while byte >= 0x80
                guard value < ValueLocation.lengthSentinel else { return nil }
            }
            offset = start &+ at
            length = value
            left &-= 1
        }
        // A step cut short starts the next window: the walk keeps where that step starts.
        packed = offset &<< 24 | length
        steps = left
        if cut { return short }
        guard offset <= end, length <= end &- offset else { return nil }
        return true
    }
}
