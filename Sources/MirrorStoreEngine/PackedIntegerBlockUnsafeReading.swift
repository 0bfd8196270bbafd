/// Reads key-run blocks of the packed integer layout (3) where they lie: the raw-memory half of
/// `PackedIntegerBlock`, which writes them.
///
/// After the block's length, layout and count: the first key (8, two's complement), the base
/// offset (8), then three widths in bytes: the key's (0, 1, 2, 4 or 8), the offset's (1 to 5) and
/// the length's (1 to 3); then `count` entries of those widths, little-endian: the key less the
/// first key (absent when the keys count up by one from it, so entry *i* holds key first + *i*),
/// the value's offset less the base offset, and the value's length. A packed block holds no
/// deleted key: a run's block with one takes the integer layout.
extension RunBlockReader {
    static let packedLayout: UInt8 = 3
    /// Bytes of a packed block between its count and its entries.
    static let packedHeaderSize = 19
    /// Where a packed block's entries start.
    static let packedEntriesStart = prefixSize + packedHeaderSize

    /// A packed block's header: its first key, its base offset, its widths, and the masks that
    /// cut a field out of the eight bytes read where it starts.
    struct PackedHeader {
        let first: Int64
        let base: UInt64
        let widths: PackedIntegerBlock.Widths
        let entryWidth: Int
        let keyMask: UInt64
        let offsetMask: UInt64
        let lengthMask: UInt64

        init(first: Int64, base: UInt64, widths: PackedIntegerBlock.Widths) {
            self.first = first
            self.base = base
            self.widths = widths
            entryWidth = widths.key &+ widths.offset &+ widths.length
            keyMask = RunBlockReader.byteMask(widths.key)
            offsetMask = RunBlockReader.byteMask(widths.offset)
            lengthMask = RunBlockReader.byteMask(widths.length)
        }
    }

    /// The low `width` bytes of an eight-byte load: the mask that cuts a field of the packed and
    /// walked layouts out of it.
    @inline(__always)
    static func byteMask(_ width: Int) -> UInt64 {
        width >= 8 ? .max : width <= 0 ? 0 : (1 &<< UInt64(8 &* width)) &- 1
    }

    /// The header, read once per lookup or pass over the block: straight from the mapping when
    /// the block's first piece holds it (always, but for a block an encrypted log lends in two).
    var packedHeader: PackedHeader {
        let at = Self.prefixSize
        if Self.packedEntriesStart <= head.count {
            return PackedHeader(
                first: Int64(littleEndian: head.loadUnaligned(fromByteOffset: at, as: Int64.self)),
                base: UInt64(littleEndian: head.loadUnaligned(fromByteOffset: at + 8, as: UInt64.self)),
                widths: PackedIntegerBlock.Widths(key: Int(head[at + 16]), offset: Int(head[at + 17]), length: Int(head[at + 18])))
        }
        return PackedHeader(
            first: Int64(bitPattern: uint64(at: at)), base: uint64(at: at + 8),
            widths: PackedIntegerBlock.Widths(key: Int(self[at + 16]), offset: Int(self[at + 17]), length: Int(self[at + 18])))
    }

    /// Whether a packed block's widths and count fit its length: part of `isWellFormed`.
    var packedIsWellFormed: Bool {
        let room = size - Self.prefixSize - Self.checksumSize - Self.packedHeaderSize
        guard room >= 0, count > 0 else { return false }
        let header = packedHeader
        guard header.widths.isValid, count * header.entryWidth == room else { return false }
        // Dense keys must not count past the last integer.
        return header.widths.key > 0 || !header.first.addingReportingOverflow(Int64(count - 1)).overflow
    }

    /// `width` bytes at `position`, little-endian, byte by byte: for an entry near the end of
    /// the block's first piece.
    func unsigned(at position: Int, width: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<width { value |= UInt64(self[position + index]) << UInt64(8 * index) }
        return value
    }

    /// The three fields of entry `index` (below the count of a well-formed block): the key less
    /// the first key, the offset less the base, and the length. Each is one eight-byte load and
    /// a mask, but for entries too near the end of the first piece for eight bytes.
    @inline(__always)
    private func packedFields(_ index: Int, _ header: PackedHeader) -> (key: UInt64, offset: UInt64, length: UInt64) {
        let start = Self.packedEntriesStart &+ index &* header.entryWidth
        let widths = header.widths
        let offsetAt = start &+ widths.key
        let lengthAt = offsetAt &+ widths.offset
        if lengthAt &+ 8 <= head.count {
            return (
                UInt64(littleEndian: head.loadUnaligned(fromByteOffset: start, as: UInt64.self)) & header.keyMask,
                UInt64(littleEndian: head.loadUnaligned(fromByteOffset: offsetAt, as: UInt64.self)) & header.offsetMask,
                UInt64(littleEndian: head.loadUnaligned(fromByteOffset: lengthAt, as: UInt64.self)) & header.lengthMask)
        }
        return (unsigned(at: start, width: widths.key), unsigned(at: offsetAt, width: widths.offset), unsigned(at: lengthAt, width: widths.length))
    }

    /// The packed location of an entry's fields, or nil when it is none a writer makes (past
    /// the 40 bits of an offset, or 0, which marks a deletion elsewhere).
    @inline(__always)
    private static func packed(_ fields: (key: UInt64, offset: UInt64, length: UInt64), _ header: PackedHeader) -> UInt64? {
        let (offset, overflow) = header.base.addingReportingOverflow(fields.offset)
        guard !overflow, offset < ValueLocation.offsetLimit else { return nil }
        let packed = offset &<< 24 | fields.length
        return packed == 0 ? nil : packed
    }

    /// Entry `index` of a packed block, or nil when the block does not hold it.
    func packedEntry(_ index: Int) -> (key: StorageKey, packed: UInt64)? {
        guard index >= 0, index < count else { return nil }
        let header = packedHeader
        let fields = packedFields(index, header)
        guard let packed = Self.packed(fields, header) else { return nil }
        return (.integer(header.first &+ Int64(bitPattern: header.widths.key == 0 ? UInt64(index) : fields.key)), packed)
    }

    /// Appends every entry of a key-run block to `entries`, in order; false when one does not
    /// decode. A packed block's header is read once for them all.
    func appendEntries(to entries: inout [(key: StorageKey, packed: UInt64)]) -> Bool {
        if layout == Self.packedLayout { return appendPackedEntries(to: &entries) }
        for index in 0..<count {
            guard let entry = entry(index) else { return false }
            entries.append(entry)
        }
        return true
    }

    /// Appends every entry of a packed block to `entries`, reading the header once; false when
    /// one does not decode.
    private func appendPackedEntries(to entries: inout [(key: StorageKey, packed: UInt64)]) -> Bool {
        let header = packedHeader
        let dense = header.widths.key == 0
        for index in 0..<count {
            let fields = packedFields(index, header)
            guard let packed = Self.packed(fields, header) else { return false }
            entries.append((.integer(header.first &+ Int64(bitPattern: dense ? UInt64(index) : fields.key)), packed))
        }
        return true
    }

    /// The lookup of a block of dense keys whose header and entry lie in its first piece (the
    /// common lookup, which every integer-keyed read makes): the entry found by subtraction and
    /// read with two loads, no header gathered. Nil for any other block or entry.
    @inline(__always)
    func denseLocation(ofInteger wanted: Int64) -> IntegerSearch? {
        let at = Self.prefixSize
        guard Self.packedEntriesStart <= head.count, head[4] == Self.packedLayout, head[at + 16] == 0 else { return nil }
        let (index, overflow) = wanted.subtractingReportingOverflow(Int64(littleEndian: head.loadUnaligned(fromByteOffset: at, as: Int64.self)))
        let count = UInt16(littleEndian: head.loadUnaligned(fromByteOffset: 5, as: UInt16.self))
        guard !overflow, index >= 0, index < Int64(count) else { return .absent }
        // Well-formed: 1 to 5 bytes of offset, 1 to 3 of length.
        let offsetWidth = Int(head[at + 17])
        let lengthWidth = Int(head[at + 18])
        let offsetAt = Self.packedEntriesStart &+ Int(index) &* (offsetWidth &+ lengthWidth)
        let lengthAt = offsetAt &+ offsetWidth
        guard lengthAt &+ 8 <= head.count else { return nil }
        let base = UInt64(littleEndian: head.loadUnaligned(fromByteOffset: at + 8, as: UInt64.self))
        let offset = UInt64(littleEndian: head.loadUnaligned(fromByteOffset: offsetAt, as: UInt64.self)) & ((1 &<< UInt64(8 &* offsetWidth)) &- 1)
        let length = UInt64(littleEndian: head.loadUnaligned(fromByteOffset: lengthAt, as: UInt64.self)) & ((1 &<< UInt64(8 &* lengthWidth)) &- 1)
        let (location, past) = base.addingReportingOverflow(offset)
        guard !past, location < ValueLocation.offsetLimit, location | length != 0 else { return .damaged }
        return .found(location &<< 24 | length)
    }

    /// `location(ofInteger:guess:)` in a packed block: dense keys are found by subtraction,
    /// others by halving from `guess`.
    func packedLocation(ofInteger wanted: Int64, guess: () -> Int) -> IntegerSearch {
        let count = count
        let header = packedHeader
        if header.widths.key == 0 {
            let (index, overflow) = wanted.subtractingReportingOverflow(header.first)
            guard !overflow, index >= 0, index < Int64(count) else { return .absent }
            guard let packed = Self.packed(packedFields(Int(index), header), header) else { return .damaged }
            return .found(packed)
        }
        let entry = Self.search(for: wanted, count: count, guess: guess) { index in
            let fields = packedFields(index, header)
            return (header.first &+ Int64(bitPattern: fields.key), fields)
        }
        guard let entry else { return .absent }
        guard let packed = Self.packed(entry, header) else { return .damaged }
        return .found(packed)
    }
}
