#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads run blocks where they lie in the log's memory mapping: the only raw-memory code of the
/// persisted runs. Every read is bounds-checked against the block; a block is trusted only
/// after its checksum matched (`RunBlocks.withBlock`).
///
/// A block is `length (4) · layout (1) · count (2) · entries · masked CRC32C (4)`, the checksum
/// covering everything before it. In the general layout (0) the entries are `count` offsets (2
/// each, from the end of the offsets) and then each entry: its key encoded as in a payload and
/// its packed value location (8, little-endian; 0 marks a deleted key). In the integer layout (1),
/// for blocks whose keys are all integers, each entry is the key and the location, 8 bytes each,
/// so a lookup compares plain numbers at fixed places. In the index layout (2), a block of a
/// secondary index's run (`IndexRun`), the offsets are as in the general layout and each entry is
/// a flag (1 for an entry, 0 for the mark of one deleted), the index key (`IndexKeyTag`) and the
/// object's key encoded as in a payload.
struct RunBlockReader {
    let bytes: UnsafeRawBufferPointer

    /// Bytes of a block before its entries: the length, the layout and the count.
    static let prefixSize = 7
    static let checksumSize = 4
    static let generalLayout: UInt8 = 0
    static let integerLayout: UInt8 = 1
    static let indexLayout: UInt8 = 2
    /// Bytes of one entry in the integer layout.
    static let integerEntrySize = 16

    var count: Int { Int(uint16(at: 5)) }
    var layout: UInt8 { bytes[4] }

    /// Whether the block's declared layout and count fit its length: checked once, with its checksum.
    var isWellFormed: Bool {
        guard bytes.count >= Self.prefixSize + Self.checksumSize else { return false }
        let room = bytes.count - Self.prefixSize - Self.checksumSize
        switch layout {
        case Self.integerLayout: return count * Self.integerEntrySize == room
        case Self.generalLayout, Self.indexLayout: return 2 * count <= room
        default: return false
        }
    }

    private func uint16(at position: Int) -> UInt16 {
        UInt16(bytes[position]) | UInt16(bytes[position + 1]) << 8
    }

    private func uint64(at position: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[position + index]) << UInt64(8 * index) }
        return value
    }

    /// Where entry `index` of a general block starts, or nil when the block does not hold it.
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
        if layout == Self.integerLayout {
            guard index < count else { return nil }
            let start = Self.prefixSize + Self.integerEntrySize * index
            return (.integer(Int64(bitPattern: uint64(at: start))), uint64(at: start + 8))
        }
        guard layout == Self.generalLayout, var position = entryStart(index), let key = storageKey(&position) else { return nil }
        guard bytes.count - Self.checksumSize - position >= 8 else { return nil }
        return (key, uint64(at: position))
    }

    /// Entry `index` of an index-layout block: the entry, and whether it is one (true) or the
    /// mark of one deleted (false); nil when its bytes do not decode.
    func indexEntry(_ index: Int) -> (entry: IndexEntry, isLive: Bool)? {
        guard layout == Self.indexLayout, var position = entryStart(index) else { return nil }
        let flag = bytes[position]
        position += 1
        guard flag <= 1, let key = indexKey(&position), let object = storageKey(&position) else { return nil }
        return (IndexEntry(key: key, object: object), flag == 1)
    }

    /// Whether entry `index` of an index-layout block adds (true) or marks a deletion (false),
    /// from its first byte alone; nil when the block does not hold it.
    func indexFlag(_ index: Int) -> Bool? {
        guard layout == Self.indexLayout, let position = entryStart(index), bytes[position] <= 1 else { return nil }
        return bytes[position] == 1
    }

    /// How the index key of entry `index` of an index-layout block orders against `key`
    /// (negative, zero or positive, as `IndexKey.order`), read where it lies: a search of a
    /// block compares keys without decoding them (a string key would be a new `String` each
    /// time). Nil when the entry does not decode.
    func indexKeyOrder(_ index: Int, against key: IndexKey) -> Int? {
        guard layout == Self.indexLayout, var position = entryStart(index) else { return nil }
        position += 1
        return keyOrder(&position, against: key)
    }

    /// Entry `index` of an index-layout block for a walk that wants objects only: whether it
    /// adds, how its index key orders against `bound` (compared where it lies, not decoded),
    /// and the object's key; nil when its bytes do not decode.
    func indexObject(_ index: Int, against bound: IndexKey) -> (order: Int, object: StorageKey, isLive: Bool)? {
        guard layout == Self.indexLayout, var position = entryStart(index) else { return nil }
        let flag = bytes[position]
        position += 1
        guard flag <= 1, let order = keyOrder(&position, against: bound), let object = storageKey(&position) else { return nil }
        return (order, object, flag == 1)
    }

    /// How the index key at `position` orders against `key`, advancing past it.
    private func keyOrder(_ position: inout Int, against key: IndexKey) -> Int? {
        let end = bytes.count - Self.checksumSize
        guard position < end, let kind = IndexKeyTag(rawValue: bytes[position]) else { return nil }
        position += 1
        let rank = kind.rank
        let wanted = key.rank
        switch kind {
        case .null:
            return rank != wanted ? (rank < wanted ? -1 : 1) : 0
        case .falseValue, .trueValue:
            return rank != wanted ? (rank < wanted ? -1 : 1) : IndexKey.order(.bool(kind == .trueValue), key)
        case .integer, .unsigned, .double:
            guard end - position >= 8 else { return nil }
            let raw = uint64(at: position)
            position += 8
            if rank != wanted { return rank < wanted ? -1 : 1 }
            let number: IndexKey = kind == .integer ? .integer(Int64(bitPattern: raw)) : kind == .unsigned ? .unsigned(raw) : .double(Double(bitPattern: raw))
            return IndexKey.order(number, key)
        case .string, .bytes, .tuple:
            guard let length = varint(&position), let stored = body(&position, count: length) else { return nil }
            if rank != wanted { return rank < wanted ? -1 : 1 }
            switch key {
            case .string(let text):
                if let order = text.utf8.withContiguousStorageIfAvailable({ Self.order(stored, UnsafeRawBufferPointer($0)) }) { return order }
                var text = text
                return text.withUTF8 { Self.order(stored, UnsafeRawBufferPointer($0)) }
            case .bytes(let wanted):
                return wanted.withUnsafeBytes { Self.order(stored, $0) }
            case .tuple(let tuple):
                return IndexTuple.order(encoded: stored, tuple)
            default:
                return nil
            }
        }
    }

    /// The lexicographic order of two byte strings, the shorter first when one begins the other.
    private static func order(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Int {
        let common = min(lhs.count, rhs.count)
        if common > 0, let left = lhs.baseAddress, let right = rhs.baseAddress {
            let order = memcmp(left, right, common)
            if order != 0 { return order < 0 ? -1 : 1 }
        }
        return lhs.count == rhs.count ? 0 : lhs.count < rhs.count ? -1 : 1
    }

    /// `count` bytes at `position`, advancing it; nil when they run past the entries.
    private func body(_ position: inout Int, count: UInt64) -> UnsafeRawBufferPointer? {
        let end = bytes.count - Self.checksumSize
        guard count <= UInt64(end - position) else { return nil }
        let body = UnsafeRawBufferPointer(rebasing: bytes[position..<(position + Int(count))])
        position += Int(count)
        return body
    }

    /// An object's key at `position` (encoded as in a payload), advancing it.
    private func storageKey(_ position: inout Int) -> StorageKey? {
        guard position < bytes.count - Self.checksumSize else { return nil }
        let tag = bytes[position]
        position += 1
        switch OperationCodec.KeyTag(rawValue: tag) {
        case .integer:
            return varint(&position).map { .integer(ByteWriter.unzigzag($0)) }
        case .string:
            guard let length = varint(&position), let body = body(&position, count: length),
                  let text = UTF8Text.string(body.assumingMemoryBound(to: UInt8.self)) else { return nil }
            return .string(text)
        case .bytes:
            guard let length = varint(&position), let body = body(&position, count: length) else { return nil }
            return .bytes(Array(body))
        case nil:
            return nil
        }
    }

    /// An index key at `position` (`IndexKeyTag`), advancing it.
    private func indexKey(_ position: inout Int) -> IndexKey? {
        guard position < bytes.count - Self.checksumSize else { return nil }
        let tag = bytes[position]
        position += 1
        func fixed() -> UInt64? {
            guard bytes.count - Self.checksumSize - position >= 8 else { return nil }
            defer { position += 8 }
            return uint64(at: position)
        }
        func counted() -> UnsafeRawBufferPointer? {
            guard let length = varint(&position) else { return nil }
            return body(&position, count: length)
        }
        switch IndexKeyTag(rawValue: tag) {
        case .null: return .null
        case .falseValue: return .bool(false)
        case .trueValue: return .bool(true)
        case .integer: return fixed().map { .integer(Int64(bitPattern: $0)) }
        case .unsigned: return fixed().map { .unsigned($0) }
        case .double: return fixed().map { .double(Double(bitPattern: $0)) }
        case .string:
            guard let body = counted(), let text = UTF8Text.string(body.assumingMemoryBound(to: UInt8.self)) else { return nil }
            return .string(text)
        case .bytes: return counted().map { .bytes(Array($0)) }
        case .tuple: return counted().map { .tuple(IndexTuple(encoded: Array($0))) }
        case nil: return nil
        }
    }
}

/// A pointer into a log's memory mapping that stays valid while the log lives (see
/// `LogStorage.stableBytes(upTo:)`): whoever keeps one keeps the log too.
struct StableBytes: @unchecked Sendable {
    // @unchecked: the bytes are a read-only shared mapping that is unmapped only when the log
    // that made it is released, and every holder also holds that log.
    let bytes: UnsafeRawBufferPointer
}

extension RunBlockReader {
    /// The packed location of integer key `wanted`: a search over the entries in place, whose
    /// first probe is entry `guess` (where the caller expects it), then halving.
    /// `.absent` when the block does not hold it, `.damaged` when an entry does not decode.
    func location(ofInteger wanted: Int64, guess: Int = -1) -> IntegerSearch {
        let count = count
        if layout == Self.integerLayout {
            func key(_ index: Int) -> Int64 {
                Int64(bitPattern: bytes.loadUnaligned(fromByteOffset: Self.prefixSize + Self.integerEntrySize * index, as: UInt64.self).littleEndian)
            }
            var low = 0
            var high = count
            // Keys are often dense (an auto-incremented key): the guess from the fences then
            // lands on the entry, and the lookup reads one line of the block, not a halving's
            // worth; a wrong guess costs one probe.
            var guessed = !(0..<count).contains(guess)
            while low < high {
                let middle: Int
                if !guessed {
                    guessed = true
                    middle = guess
                } else {
                    middle = (low + high) / 2
                }
                let found = key(middle)
                if found == wanted {
                    return .found(bytes.loadUnaligned(fromByteOffset: Self.prefixSize + Self.integerEntrySize * middle + 8, as: UInt64.self).littleEndian)
                }
                if found < wanted { low = middle + 1 } else { high = middle }
            }
            return .absent
        }
        let tableEnd = Self.prefixSize + 2 * count
        let end = bytes.count - Self.checksumSize
        guard tableEnd <= end else { return .damaged }
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            let table = Self.prefixSize + 2 * middle
            var position = tableEnd + (Int(bytes[table]) | Int(bytes[table + 1]) << 8)
            guard position < end else { return .damaged }
            guard bytes[position] == OperationCodec.KeyTag.integer.rawValue else {
                // Integers precede every other kind of key.
                high = middle
                continue
            }
            position += 1
            guard let raw = varint(&position) else { return .damaged }
            let found = ByteWriter.unzigzag(raw)
            if found == wanted {
                guard end - position >= 8 else { return .damaged }
                return .found(uint64(at: position))
            }
            if found < wanted { low = middle + 1 } else { high = middle }
        }
        return .absent
    }

    enum IntegerSearch {
        case found(UInt64)
        case absent
        case damaged
    }
}
