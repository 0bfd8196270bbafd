extension RunBlockReader {
    /// The packed location a general block in one piece holds for the byte-string key `wanted`
    /// (0 for a deleted key), each probe reading its entry's offset, tag and length straight from
    /// memory: going through the two-piece reads (a branch per byte, a closure per body) cost
    /// more than comparing the keys. A key of 16 bytes (a UUID) is compared with 16-byte entries
    /// as two big-endian words, which order as the bytes do. Nil when the block is not a general
    /// one in one piece, or a probed entry is not a byte-string key or does not decode: then
    /// ``location(of:)``'s general search decides, reading what it reads.
    func location(ofByteKey wanted: UnsafeRawBufferPointer) -> KeySearch? {
        guard layout == Self.generalLayout, tail.isEmpty, let base = head.baseAddress else { return nil }
        let end = size - Self.checksumSize
        let count = count
        let entries = Self.prefixSize + 2 * count
        guard entries <= end else { return nil }
        let tag = OperationCodec.KeyTag.bytes.rawValue
        let words = wanted.count == 16 ? Self.words(wanted.baseAddress) : nil
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            var position = Self.entryStart(in: base, middle, entries: entries)
            guard position < end, base.load(fromByteOffset: position, as: UInt8.self) == tag else { return nil }
            position += 1
            guard let length = Self.varint(in: base, &position, end: end) else { return nil }
            // The body, then the packed location's 8 bytes, before the checksum.
            guard length <= UInt64(end - position), end - position - Int(length) >= 8 else { return nil }
            let body = base + position
            let order: Int
            if let words, length == 16, let stored = Self.words(body) {
                order = stored.high != words.high ? (stored.high < words.high ? -1 : 1)
                    : stored.low != words.low ? (stored.low < words.low ? -1 : 1) : 0
            } else {
                order = Self.order(UnsafeRawBufferPointer(start: body, count: Int(length)), wanted)
            }
            if order == 0 { return .found(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position + Int(length), as: UInt64.self))) }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return .absent
    }

    /// The 16 bytes at `start` as two big-endian words, the first the high one.
    @inline(__always)
    private static func words(_ start: UnsafeRawPointer?) -> (high: UInt64, low: UInt64)? {
        guard let start else { return nil }
        return (UInt64(bigEndian: start.loadUnaligned(as: UInt64.self)), UInt64(bigEndian: start.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
    }
}
