/// Reads run blocks where they lie in the log's memory mapping: the only raw-memory code of the
/// persisted key runs. Every read is bounds-checked against the block; a block is trusted only
/// after its checksum matched (`KeyRun.withBlock`).
///
/// A block is `length (4) · count (2) · count entry offsets (2 each) · entries · masked CRC32C (4)`,
/// the checksum covering the length and everything before it; an entry is a key encoded as in a
/// payload, then its packed value location (8, little-endian; 0 marks a deleted key).
struct RunBlockReader {
    let bytes: UnsafeRawBufferPointer

    /// Bytes of a block before its entries' offsets: the length and the count.
    static let prefixSize = 6
    static let checksumSize = 4

    var count: Int { Int(uint16(at: 4)) }

    private func uint16(at position: Int) -> UInt16 {
        UInt16(bytes[position]) | UInt16(bytes[position + 1]) << 8
    }

    private func uint64(at position: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[position + index]) << UInt64(8 * index) }
        return value
    }

    /// Where entry `index` starts, or nil when the block does not hold it.
    private func entryStart(_ index: Int) -> Int? {
        let count = count
        let table = Self.prefixSize + 2 * index
        guard index < count, table + 2 <= bytes.count else { return nil }
        let start = Self.prefixSize + 2 * count + Int(uint16(at: table))
        return start < bytes.count - Self.checksumSize ? start : nil
    }

    /// A varint at `position`, advancing it; nil when it runs past the entries or overflows.
    private func varint(_ position: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        let end = bytes.count - Self.checksumSize
        while position < end {
            let byte = bytes[position]
            position += 1
            guard shift < 63 || (shift == 63 && byte <= 1) else { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }

    /// Entry `index` as its key and packed location, or nil when its bytes do not decode.
    func entry(_ index: Int) -> (key: StorageKey, packed: UInt64)? {
        guard var position = entryStart(index) else { return nil }
        let end = bytes.count - Self.checksumSize
        let tag = bytes[position]
        position += 1
        let key: StorageKey
        switch OperationCodec.KeyTag(rawValue: tag) {
        case .integer:
            guard let raw = varint(&position) else { return nil }
            key = .integer(ByteWriter.unzigzag(raw))
        case .string, .bytes:
            guard let length = varint(&position), length <= UInt64(end - position) else { return nil }
            let body = UnsafeRawBufferPointer(rebasing: bytes[position..<(position + Int(length))])
            position += Int(length)
            if tag == OperationCodec.KeyTag.string.rawValue {
                guard let text = String(validating: body, as: UTF8.self) else { return nil }
                key = .string(text)
            } else {
                key = .bytes(Array(body))
            }
        case nil:
            return nil
        }
        guard end - position >= 8 else { return nil }
        return (key, uint64(at: position))
    }

    /// The integer key of entry `index`, without building a `StorageKey`; nil when the entry
    /// holds another kind of key or does not decode.
    func integerKey(_ index: Int) -> Int64? {
        guard var position = entryStart(index), bytes[position] == OperationCodec.KeyTag.integer.rawValue else { return nil }
        position += 1
        return varint(&position).map(ByteWriter.unzigzag)
    }

    /// The packed location of the integer-keyed entry `index`.
    func integerEntryLocation(_ index: Int) -> UInt64? {
        guard var position = entryStart(index) else { return nil }
        position += 1
        guard varint(&position) != nil, bytes.count - Self.checksumSize - position >= 8 else { return nil }
        return uint64(at: position)
    }
}
