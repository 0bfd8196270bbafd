#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads key-run blocks of the packed byte-string layout (5) where they lie: the raw-memory half
/// of `PackedByteBlock`, which writes them.
///
/// After the block's length, layout and count: the base offset (8), the key width *w* (1: every
/// key's length, 1 to 255), the prefix length *p* (1, below *w*), the offset's width (1, 1 to 5)
/// and the length's (1, 1 to 3); then the *p* bytes every key begins with; then `count` entries:
/// the key's other *w* − *p* bytes, the value's offset less the base offset and the value's
/// length, little-endian at those widths. Every key is a byte string; a block holds no deleted
/// key (a run's block with one takes the general layout).
extension RunBlockReader {
    static let packedBytesLayout: UInt8 = 5
    /// Bytes of a packed byte-string block between its count and its prefix.
    static let packedBytesHeaderSize = 12
    /// Where a packed byte-string block's prefix starts; its entries follow the prefix.
    static let packedBytesEntriesStart = prefixSize + packedBytesHeaderSize

    /// A packed byte-string block's header: its base offset and its widths.
    struct PackedBytesHeader {
        let base: UInt64
        let widths: PackedByteBlock.Widths

        /// Where entry 0 starts: past the prefix.
        var entriesStart: Int { RunBlockReader.packedBytesEntriesStart &+ widths.prefix }
    }

    var packedBytesHeader: PackedBytesHeader {
        let at = Self.prefixSize
        return PackedBytesHeader(
            base: uint64(at: at),
            widths: PackedByteBlock.Widths(key: Int(self[at + 8]), prefix: Int(self[at + 9]), offset: Int(self[at + 10]), length: Int(self[at + 11])))
    }

    /// Whether a packed byte-string block's widths and count fit its length: part of `isWellFormed`.
    var packedBytesIsWellFormed: Bool {
        let room = size - Self.prefixSize - Self.checksumSize - Self.packedBytesHeaderSize
        guard room >= 0, count > 0 else { return false }
        let widths = packedBytesHeader.widths
        return widths.isValid && widths.prefix + count * widths.entry == room
    }

    /// The packed location entry `index` holds (below the count of a well-formed block), or nil
    /// when it is none a writer makes (past the 40 bits of an offset, or 0).
    @inline(__always)
    private func packedBytesLocation(_ index: Int, _ header: PackedBytesHeader) -> UInt64? {
        let widths = header.widths
        let offsetAt = header.entriesStart &+ index &* widths.entry &+ widths.suffix
        let (offset, overflow) = header.base.addingReportingOverflow(unsigned(at: offsetAt, width: widths.offset))
        guard !overflow, offset < ValueLocation.offsetLimit else { return nil }
        let packed = offset &<< 24 | unsigned(at: offsetAt &+ widths.offset, width: widths.length)
        return packed == 0 ? nil : packed
    }

    /// Entry `index` of a packed byte-string block, or nil when the block does not hold it.
    func packedBytesEntry(_ index: Int) -> (key: StorageKey, packed: UInt64)? {
        guard index >= 0, index < count else { return nil }
        let header = packedBytesHeader
        let widths = header.widths
        guard let packed = packedBytesLocation(index, header) else { return nil }
        var key = [UInt8]()
        key.reserveCapacity(widths.key)
        for position in Self.packedBytesEntriesStart..<header.entriesStart { key.append(self[position]) }
        let start = header.entriesStart &+ index &* widths.entry
        for position in start..<(start &+ widths.suffix) { key.append(self[position]) }
        return (.bytes(key), packed)
    }

    /// The packed location a packed byte-string block holds for `key`: absent for a key of
    /// another kind or length, or without the block's prefix; else halving over the entries,
    /// each key's bytes compared where they lie.
    func packedBytesLocation(of key: StorageKey) -> KeySearch {
        guard case .bytes(let wanted) = key else { return .absent }
        let header = packedBytesHeader
        let widths = header.widths
        guard wanted.count == widths.key else { return .absent }
        return wanted.withUnsafeBytes { wanted -> KeySearch in
            for index in 0..<widths.prefix where self[Self.packedBytesEntriesStart &+ index] != wanted[index] { return .absent }
            let suffix = UnsafeRawBufferPointer(rebasing: wanted[widths.prefix...])
            var low = 0
            var high = count
            while low < high {
                let middle = (low &+ high) / 2
                let order = suffixOrder(at: header.entriesStart &+ middle &* widths.entry, against: suffix)
                if order == 0 {
                    guard let packed = packedBytesLocation(middle, header) else { return .damaged }
                    return .found(packed)
                }
                if order < 0 { low = middle &+ 1 } else { high = middle }
            }
            return .absent
        }
    }

    /// How the `wanted.count` bytes at `start` order against `wanted` (-1: the stored first):
    /// one `memcmp` where the block lies in one piece, byte by byte across two.
    @inline(__always)
    private func suffixOrder(at start: Int, against wanted: UnsafeRawBufferPointer) -> Int {
        if start &+ wanted.count <= head.count, let base = head.baseAddress, let bytes = wanted.baseAddress {
            let order = memcmp(base + start, bytes, wanted.count)
            return order == 0 ? 0 : order < 0 ? -1 : 1
        }
        for index in 0..<wanted.count {
            let stored = self[start &+ index]
            if stored != wanted[index] { return stored < wanted[index] ? -1 : 1 }
        }
        return 0
    }
}
