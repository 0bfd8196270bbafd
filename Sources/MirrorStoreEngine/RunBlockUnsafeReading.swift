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
/// so a lookup compares plain numbers at fixed places; the packed layout (3) is the same entries
/// in fewer bytes (`PackedIntegerBlockUnsafeReading.swift`), and the packed byte-string layout (5)
/// holds byte-string keys of one length so (`PackedByteBlockUnsafeReading.swift`). In the index layout (2), a block of a
/// secondary index's run (`IndexRun`), the offsets are as in the general layout and each entry is
/// a flag (1 for an entry, 0 for the mark of one deleted), the index key (`IndexKeyTag`) and the
/// object's key encoded as in a payload.
///
/// A block lies in one piece (`head`) or, where the log lends it from two pages of plaintext
/// (an encrypted log's), in two (`head`, then `tail`): reads address the two as one, so that no
/// 4 KiB block is joined for a search; only a key that straddles the two is copied to be read.
struct RunBlockReader {
    let head: UnsafeRawBufferPointer
    let tail: UnsafeRawBufferPointer
    /// The block's length: both pieces.
    let size: Int

    /// A block in one piece.
    init(bytes: UnsafeRawBufferPointer) {
        self.init(head: bytes, tail: UnsafeRawBufferPointer(start: nil, count: 0))
    }

    /// A block whose first `head.count` bytes are `head` and the rest `tail`.
    init(head: UnsafeRawBufferPointer, tail: UnsafeRawBufferPointer) {
        self.head = head
        self.tail = tail
        size = head.count + tail.count
    }

    /// The whole block, sealed as it lies (its checksum covers only its own bytes, so it may be
    /// written again anywhere: `RunUnitWriter.appendSealed`).
    var sealedBytes: [UInt8] {
        Array(head) + Array(tail)
    }

    /// The byte at `position` of the block.
    @inline(__always)
    subscript(position: Int) -> UInt8 {
        position < head.count ? head[position] : tail[position - head.count]
    }

    /// Bytes of a block before its entries: the length, the layout and the count.
    static let prefixSize = 7
    static let checksumSize = 4
    static let generalLayout: UInt8 = 0
    static let integerLayout: UInt8 = 1
    static let indexLayout: UInt8 = 2
    /// Bytes of one entry in the integer layout.
    static let integerEntrySize = 16

    var count: Int {
        @inline(__always) get { Int(uint16(at: 5)) }
    }
    var layout: UInt8 {
        @inline(__always) get { self[4] }
    }

    /// Whether the block's declared layout and count fit its length: checked once, with its checksum.
    var isWellFormed: Bool {
        guard size >= Self.prefixSize + Self.checksumSize else { return false }
        let room = size - Self.prefixSize - Self.checksumSize
        switch layout {
        case Self.integerLayout: return count * Self.integerEntrySize == room
        case Self.packedLayout: return packedIsWellFormed
        case Self.walkedLayout: return walkedIsWellFormed
        case Self.packedBytesLayout: return packedBytesIsWellFormed
        case Self.generalLayout, Self.indexLayout: return 2 * count <= room
        default: return false
        }
    }

    @inline(__always)
    private func uint16(at position: Int) -> UInt16 {
        UInt16(self[position]) | UInt16(self[position + 1]) << 8
    }

    @inline(__always)
    func uint64(at position: Int) -> UInt64 {
        if position + 8 <= head.count { return UInt64(littleEndian: head.loadUnaligned(fromByteOffset: position, as: UInt64.self)) }
        if position >= head.count { return UInt64(littleEndian: tail.loadUnaligned(fromByteOffset: position - head.count, as: UInt64.self)) }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(self[position + index]) << UInt64(8 * index) }
        return value
    }

    /// Whether the block's checksum, its last four bytes, matches everything before it.
    var checksumMatches: Bool {
        guard size >= Self.checksumSize else { return false }
        let covered = size - Self.checksumSize
        let stored = UInt32(self[covered]) | UInt32(self[covered + 1]) << 8 | UInt32(self[covered + 2]) << 16 | UInt32(self[covered + 3]) << 24
        let computed = covered <= head.count
            ? CRC32C.checksum(UnsafeRawBufferPointer(rebasing: head[..<covered]))
            : CRC32C.update(CRC32C.checksum(head), UnsafeRawBufferPointer(rebasing: tail[..<(covered - head.count)]))
        return CRC32C.unmask(stored) == computed
    }

    /// Where entry `index` of a general block starts, or nil when the block does not hold it.
    func entryStart(_ index: Int) -> Int? {
        let count = count
        let table = Self.prefixSize + 2 * index
        guard index < count, table + 2 <= size else { return nil }
        let start = Self.prefixSize + 2 * count + Int(uint16(at: table))
        return start < size - Self.checksumSize ? start : nil
    }

    /// ``entryStart(_:)`` for a general or index block in one piece at `base`, whose offset table
    /// ends at `entries`, unchecked: the searches that read entries straight from memory check
    /// the start against the entries' end themselves.
    @inline(__always)
    static func entryStart(in base: UnsafeRawPointer, _ index: Int, entries: Int) -> Int {
        entries + Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: prefixSize + 2 * index, as: UInt16.self)))
    }

    /// A varint at `position`, advancing it; nil when it runs past the entries or overflows.
    func varint(_ position: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        let end = size - Self.checksumSize
        while position < end {
            let byte = self[position]
            position += 1
            guard shift < 63 || (shift == 63 && byte <= 1) else { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }

    /// ``varint(_:)`` for a block in one piece at `base`, read before `end`: the searches that
    /// read entries straight from memory share it.
    @inline(__always)
    static func varint(in base: UnsafeRawPointer, _ position: inout Int, end: Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while position < end {
            let byte = base.load(fromByteOffset: position, as: UInt8.self)
            position += 1
            guard shift < 63 || (shift == 63 && byte <= 1) else { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }

    /// Entry `index` as its key and packed location, or nil when its bytes do not decode or lie
    /// in the log (a walked block's, which `KeyRun` reads).
    func entry(_ index: Int) -> (key: StorageKey, packed: UInt64)? {
        if layout == Self.packedLayout { return packedEntry(index) }
        if layout == Self.packedBytesLayout { return packedBytesEntry(index) }
        if layout == Self.integerLayout {
            guard index < count else { return nil }
            let start = Self.prefixSize + Self.integerEntrySize * index
            return (.integer(Int64(bitPattern: uint64(at: start))), uint64(at: start + 8))
        }
        guard layout == Self.generalLayout, var position = entryStart(index), let key = storageKey(&position) else { return nil }
        guard size - Self.checksumSize - position >= 8 else { return nil }
        return (key, uint64(at: position))
    }

    /// The packed location a general block holds for `key` (0 for a deleted key), searched in
    /// place: a byte-string key is compared with each probed entry's bytes where they lie, as
    /// ``StorageKey/precedes(_:_:)`` orders them (the order of their bytes, the shorter first); a
    /// string key by its canonical bytes (``location(of:)-(StringProbe)``); any other entry or key
    /// is decoded by ``entry(_:)`` and compared as keys.
    func location(of key: StorageKey) -> KeySearch {
        if layout == Self.packedBytesLayout { return packedBytesLocation(of: key) }
        switch key {
        case .bytes(let bytes):
            return bytes.withUnsafeBytes { location(ofByteKey: $0) ?? searchGeneral(key, tag: OperationCodec.KeyTag.bytes.rawValue, bytes: $0) }
        case .string(let text):
            return StringProbe.with(text) { location(of: $0) }
        case .integer:
            return searchGeneral(key, tag: nil, bytes: UnsafeRawBufferPointer(start: nil, count: 0))
        }
    }

    /// The halving search of ``location(of:)``: `tag` and `bytes` are the key as compared in
    /// place (nil tag: never).
    func searchGeneral(_ key: StorageKey, tag: UInt8?, bytes: UnsafeRawBufferPointer) -> KeySearch {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            let order: Int
            let packed: UInt64
            if let tag, let found = entryOrder(middle, tag: tag, against: bytes) {
                (order, packed) = found
            } else {
                guard let found = entry(middle) else { return .damaged }
                order = found.key == key ? 0 : StorageKey.precedes(found.key, key) ? -1 : 1
                packed = found.packed
            }
            if order == 0 { return .found(packed) }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return .absent
    }

    /// How entry `index` of a general block orders against the key whose tag is `tag` and whose
    /// body is `wanted` (-1: the entry first), with the entry's packed location; nil when that
    /// cannot be told from the bytes alone (the entry's key is of another kind, or a string that
    /// is not ASCII, whose order is its NFC form's) or the entry does not decode, for
    /// ``entry(_:)`` to decide. It checks what ``entry(_:)`` checks of a key of these kinds.
    func entryOrder(_ index: Int, tag: UInt8, against wanted: UnsafeRawBufferPointer) -> (order: Int, packed: UInt64)? {
        guard layout == Self.generalLayout, var position = entryStart(index), self[position] == tag else { return nil }
        position += 1
        guard let length = varint(&position) else { return nil }
        let isText = tag == OperationCodec.KeyTag.string.rawValue
        let order = withBody(&position, count: length) { stored -> Int? in
            if isText, !stored.allSatisfy({ $0 < 0x80 }) { return nil }
            return Self.order(stored, wanted)
        }
        guard let order, size - Self.checksumSize - position >= 8 else { return nil }
        return (order, uint64(at: position))
    }

    enum KeySearch: Equatable {
        case found(UInt64)
        case absent
        case damaged
    }

    /// Entry `index` of an index-layout block: the entry, and whether it is one (true) or the
    /// mark of one deleted (false); nil when its bytes do not decode.
    func indexEntry(_ index: Int) -> (entry: IndexEntry, isLive: Bool)? {
        guard layout == Self.indexLayout, var position = entryStart(index) else { return nil }
        let flag = self[position]
        position += 1
        guard flag <= 1, let key = indexKey(&position), let object = storageKey(&position) else { return nil }
        return (IndexEntry(key: key, object: object), flag == 1)
    }

    /// Whether entry `index` of an index-layout block adds (true) or marks a deletion (false),
    /// from its first byte alone; nil when the block does not hold it.
    func indexFlag(_ index: Int) -> Bool? {
        guard layout == Self.indexLayout, let position = entryStart(index), self[position] <= 1 else { return nil }
        return self[position] == 1
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

    /// How many entries of an index-layout block have a key in `below` (a prefix of the block),
    /// found by halving. A string or byte-string key lends its bytes once for the whole search,
    /// and each probed key of that kind is compared with them where it lies: going through the
    /// key per probe (its case, its storage) cost as much as the comparison. Nil when an entry
    /// does not decode.
    func indexEntriesBelow(_ below: KeysBelow) -> Int? {
        guard layout == Self.indexLayout else { return nil }
        switch below.key {
        case .string(let text):
            if let found = text.utf8.withContiguousStorageIfAvailable({ entriesBelow(below, tag: .string, UnsafeRawBufferPointer($0)) }) {
                return found
            }
            var text = text
            return text.withUTF8 { entriesBelow(below, tag: .string, UnsafeRawBufferPointer($0)) }
        case .bytes(let bytes):
            return bytes.withUnsafeBytes { entriesBelow(below, tag: .bytes, $0) }
        default:
            var low = 0
            var high = count
            while low < high {
                let middle = (low + high) / 2
                guard let order = indexKeyOrder(middle, against: below.key) else { return nil }
                if below.contains(order: order) { low = middle + 1 } else { high = middle }
            }
            return low
        }
    }

    /// ``indexEntriesBelow(_:)`` for a key of kind `tag` whose body is `wanted`.
    private func entriesBelow(_ below: KeysBelow, tag: IndexKeyTag, _ wanted: UnsafeRawBufferPointer) -> Int? {
        if tail.isEmpty, let base = head.baseAddress { return entriesBelow(in: base, below, tag: tag, wanted) }
        let end = size - Self.checksumSize
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            // Past the entry's flag.
            guard var position = entryStart(middle).map({ $0 + 1 }), position < end,
                  let kind = IndexKeyTag(rawValue: self[position]) else { return nil }
            position += 1
            let order: Int
            if kind.rank != tag.rank {
                order = kind.rank < tag.rank ? -1 : 1
            } else {
                // The same rank is the same kind for strings and byte strings.
                guard let length = varint(&position), let found = withBody(&position, count: length, { Self.order($0, wanted) }) else { return nil }
                order = found
            }
            if below.contains(order: order) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// ``entriesBelow(_:tag:_:)`` for a block in one piece at `base`: each probe reads its
    /// offset, tag and length straight from memory, where going through the two-piece reads
    /// (a branch per byte, a closure per body) cost more than comparing the key. Every read is
    /// checked against the entries' end as there.
    private func entriesBelow(in base: UnsafeRawPointer, _ below: KeysBelow, tag: IndexKeyTag, _ wanted: UnsafeRawBufferPointer) -> Int? {
        let end = size - Self.checksumSize
        let count = count
        let entries = Self.prefixSize + 2 * count
        guard entries <= end else { return nil }
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            // Past the entry's flag.
            var position = Self.entryStart(in: base, middle, entries: entries) + 1
            guard position < end, let kind = IndexKeyTag(rawValue: base.load(fromByteOffset: position, as: UInt8.self)) else { return nil }
            position += 1
            let order: Int
            if kind.rank != tag.rank {
                order = kind.rank < tag.rank ? -1 : 1
            } else {
                // The same rank is the same kind for strings and byte strings.
                guard let length = Self.varint(in: base, &position, end: end) else { return nil }
                guard length <= UInt64(end - position) else { return nil }
                order = Self.order(UnsafeRawBufferPointer(start: base + position, count: Int(length)), wanted)
            }
            if below.contains(order: order) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Entry `index` of an index-layout block for a walk that wants objects only: whether it
    /// adds, how its index key orders against `bound` (compared where it lies, not decoded),
    /// and the object's key; nil when its bytes do not decode.
    func indexObject(_ index: Int, against bound: IndexKey) -> (order: Int, object: StorageKey, isLive: Bool)? {
        guard layout == Self.indexLayout, var position = entryStart(index) else { return nil }
        let flag = self[position]
        position += 1
        guard flag <= 1, let order = keyOrder(&position, against: bound), let object = storageKey(&position) else { return nil }
        return (order, object, flag == 1)
    }

    /// How the index key at `position` orders against `key`, advancing past it.
    private func keyOrder(_ position: inout Int, against key: IndexKey) -> Int? {
        let end = size - Self.checksumSize
        guard position < end, let kind = IndexKeyTag(rawValue: self[position]) else { return nil }
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
            guard let length = varint(&position) else { return nil }
            // A block in one piece lends the body where it lies, without a closure per key.
            if tail.isEmpty, let base = head.baseAddress {
                guard length <= UInt64(end - position) else { return nil }
                let stored = UnsafeRawBufferPointer(start: base + position, count: Int(length))
                position += Int(length)
                return rank != wanted ? (rank < wanted ? -1 : 1) : Self.order(stored, key)
            }
            return withBody(&position, count: length) { stored -> Int? in
                rank != wanted ? (rank < wanted ? -1 : 1) : Self.order(stored, key)
            }
        }
    }

    /// How a stored string, byte string or tuple body orders against `key` of the same rank;
    /// nil for a key of another kind.
    private static func order(_ stored: UnsafeRawBufferPointer, _ key: IndexKey) -> Int? {
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

    /// The lexicographic order of two byte strings, the shorter first when one begins the other.
    static func order(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Int {
        let common = min(lhs.count, rhs.count)
        if common > 0, let left = lhs.baseAddress, let right = rhs.baseAddress {
            let order = memcmp(left, right, common)
            if order != 0 { return order < 0 ? -1 : 1 }
        }
        return lhs.count == rhs.count ? 0 : lhs.count < rhs.count ? -1 : 1
    }

    /// What `use` makes of the `count` bytes at `position`, advancing it; nil when they run
    /// past the entries.
    func withBody<Result>(_ position: inout Int, count: UInt64, _ use: (UnsafeRawBufferPointer) -> Result?) -> Result? {
        let end = size - Self.checksumSize
        guard count <= UInt64(end - position) else { return nil }
        let start = position
        let stop = start + Int(count)
        position = stop
        if stop <= head.count { return use(UnsafeRawBufferPointer(rebasing: head[start..<stop])) }
        if start >= head.count { return use(UnsafeRawBufferPointer(rebasing: tail[(start - head.count)..<(stop - head.count)])) }
        // The one key that straddles the two pieces, joined: at most one per search step.
        let joined = Array(head[start...]) + Array(tail[..<(stop - head.count)])
        return joined.withUnsafeBytes(use)
    }

    /// An object's key at `position` (encoded as in a payload), advancing it.
    private func storageKey(_ position: inout Int) -> StorageKey? {
        guard position < size - Self.checksumSize else { return nil }
        let tag = self[position]
        position += 1
        switch OperationCodec.KeyTag(rawValue: tag) {
        case .integer:
            return varint(&position).map { .integer(ByteWriter.unzigzag($0)) }
        case .string:
            guard let length = varint(&position) else { return nil }
            return withBody(&position, count: length) { body in UTF8Text.string(body.assumingMemoryBound(to: UInt8.self)).map { .string($0) } }
        case .bytes:
            guard let length = varint(&position) else { return nil }
            return withBody(&position, count: length) { .bytes(Array($0)) }
        case nil:
            return nil
        }
    }

    /// An index key at `position` (`IndexKeyTag`), advancing it.
    private func indexKey(_ position: inout Int) -> IndexKey? {
        guard position < size - Self.checksumSize else { return nil }
        let tag = self[position]
        position += 1
        func fixed() -> UInt64? {
            guard size - Self.checksumSize - position >= 8 else { return nil }
            defer { position += 8 }
            return uint64(at: position)
        }
        func counted(_ use: (UnsafeRawBufferPointer) -> IndexKey?) -> IndexKey? {
            guard let length = varint(&position) else { return nil }
            return withBody(&position, count: length, use)
        }
        switch IndexKeyTag(rawValue: tag) {
        case .null: return .null
        case .falseValue: return .bool(false)
        case .trueValue: return .bool(true)
        case .integer: return fixed().map { .integer(Int64(bitPattern: $0)) }
        case .unsigned: return fixed().map { .unsigned($0) }
        case .double: return fixed().map { .double(Double(bitPattern: $0)) }
        case .string: return counted { body in UTF8Text.string(body.assumingMemoryBound(to: UInt8.self)).map { .string($0) } }
        case .bytes: return counted { .bytes(Array($0)) }
        case .tuple: return counted { .tuple(IndexTuple(encoded: Array($0))) }
        case nil: return nil
        }
    }
}

extension KeyRun.Fences {
    /// ``block(for:)`` among `fences` for a byte-string or ASCII string key: its bytes are lent
    /// once for the search and compared in place with each fence of the same kind (an ASCII
    /// fence, for a string: byte strings and ASCII text order by their bytes, the shorter first,
    /// as ``StorageKey/precedes(_:_:)`` orders them); other fences are ordered as keys. Nil for
    /// a key of another kind, or whose bytes are not contiguous.
    static func block(in fences: [StorageKey], inPlaceFor key: StorageKey) -> Int?? {
        let search = { (wanted: UnsafeRawBufferPointer, isText: Bool) -> Int? in
            var low = 0
            var high = fences.count
            while low < high {
                let middle = (low + high) / 2
                let order: Int? = switch fences[middle] {
                case .bytes(let fence) where !isText:
                    fence.withUnsafeBytes { RunBlockReader.order($0, wanted) }
                case .string(let fence) where isText:
                    fence.utf8.withContiguousStorageIfAvailable { stored in
                        stored.allSatisfy { $0 < 0x80 } ? RunBlockReader.order(UnsafeRawBufferPointer(stored), wanted) : nil
                    } ?? nil
                default:
                    nil
                }
                // Not after the key: the key does not precede the fence.
                let notAfter = order.map { $0 <= 0 } ?? !StorageKey.precedes(key, fences[middle])
                if notAfter { low = middle + 1 } else { high = middle }
            }
            return low > 0 ? low - 1 : nil
        }
        switch key {
        case .bytes(let bytes):
            return .some(bytes.withUnsafeBytes { search($0, false) })
        case .string(let text) where text.utf8.allSatisfy({ $0 < 0x80 }):
            return text.utf8.withContiguousStorageIfAvailable { search(UnsafeRawBufferPointer($0), true) }
        case .integer, .string:
            return nil
        }
    }
}

extension IndexRun {
    /// How many fences lie in `below` (see ``blocksBelow(_:)``), for a string key: its bytes
    /// are lent once for the search and each fence's compared with them in place, where
    /// ordering the two keys as keys went through both cases and both storages per probe. Nil
    /// when the key's bytes are not contiguous.
    func stringFencesBelow(_ below: KeysBelow, _ wanted: String) -> Int? {
        wanted.utf8.withContiguousStorageIfAvailable { wanted -> Int in
            let wantedBytes = UnsafeRawBufferPointer(wanted)
            let wantedPrefix = IndexRun.stringPrefix(wantedBytes)
            let prefixes = stringFencePrefixes ?? []
            let comparesPrefixes = prefixes.count == fences.count
            var low = 0
            var high = fences.count
            while low < high {
                let middle = (low + high) / 2
                let order: Int
                // Most fences differ from the wanted string in its first eight bytes.
                if comparesPrefixes, prefixes[middle] != wantedPrefix {
                    order = prefixes[middle] < wantedPrefix ? -1 : 1
                } else if case .string(let fence) = fences[middle].key,
                   let found = fence.utf8.withContiguousStorageIfAvailable({ RunBlockReader.order(UnsafeRawBufferPointer($0), wantedBytes) }) {
                    order = found
                } else {
                    order = IndexKey.order(fences[middle].key, below.key)
                }
                if below.contains(order: order) { low = middle + 1 } else { high = middle }
            }
            return low
        }
    }
}

extension RunBlockReader {
    /// The length the block's first four bytes declare (of what follows them, before the
    /// checksum), or nil when it holds fewer.
    var declaredLength: Int? {
        guard size >= 4 else { return nil }
        return Int(self[0]) | Int(self[1]) << 8 | Int(self[2]) << 16 | Int(self[3]) << 24
    }

    /// The block's first `count` bytes, in the same pieces.
    func prefix(_ count: Int) -> RunBlockReader {
        let inHead = min(count, head.count)
        return RunBlockReader(
            head: UnsafeRawBufferPointer(rebasing: head[..<inHead]), tail: UnsafeRawBufferPointer(rebasing: tail[..<(count - inHead)]))
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
    /// The search of a block's integer keys, in ascending order, for `wanted`: `probe` reads
    /// entry `index`'s key and what the caller keeps of it, which is returned for the entry that
    /// holds `wanted` (nil when none does). The first probe is entry `guess` when the block has
    /// one there (worked out only when a search needs it), then halving: keys are often dense (an
    /// auto-incremented key), the guess from the fences then lands on the entry, and the lookup
    /// reads one line of the block, not a halving's worth; a wrong guess costs one probe.
    @inline(__always)
    static func search<Probe>(
        for wanted: Int64, count: Int, guess: () -> Int, probe: (_ index: Int) -> (key: Int64, kept: Probe)
    ) -> Probe? {
        var low = 0
        var high = count
        let guessed = guess()
        var probed = !(0..<count).contains(guessed)
        while low < high {
            let middle: Int
            if !probed {
                probed = true
                middle = guessed
            } else {
                middle = (low + high) / 2
            }
            let (key, kept) = probe(middle)
            if key == wanted { return kept }
            if key < wanted { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    /// The packed location of integer key `wanted`: a search over the entries in place, whose
    /// first probe is entry `guess` (where the caller expects it, worked out only when a search
    /// needs it), then halving.
    /// `.absent` when the block does not hold it, `.damaged` when an entry does not decode.
    func location(ofInteger wanted: Int64, guess: @autoclosure () -> Int = -1) -> IntegerSearch {
        if let found = denseLocation(ofInteger: wanted) { return found }
        if let found = denseWalk(ofInteger: wanted) { return found }
        if layout == Self.packedLayout { return packedLocation(ofInteger: wanted, guess: guess) }
        if layout == Self.walkedLayout { return walkedLocation(ofInteger: wanted, guess: guess) }
        // Its keys are byte strings, which every integer precedes.
        if layout == Self.packedBytesLayout { return .absent }
        let count = count
        if layout == Self.integerLayout {
            let entry = Self.search(for: wanted, count: count, guess: guess) { index in
                (Int64(bitPattern: uint64(at: Self.prefixSize + Self.integerEntrySize * index)), index)
            }
            guard let entry else { return .absent }
            return .found(uint64(at: Self.prefixSize + Self.integerEntrySize * entry + 8))
        }
        let tableEnd = Self.prefixSize + 2 * count
        let end = size - Self.checksumSize
        guard tableEnd <= end else { return .damaged }
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            let table = Self.prefixSize + 2 * middle
            var position = tableEnd + (Int(self[table]) | Int(self[table + 1]) << 8)
            guard position < end else { return .damaged }
            guard self[position] == OperationCodec.KeyTag.integer.rawValue else {
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

    enum IntegerSearch: Equatable {
        case found(UInt64)
        /// Found in a walked block, whose location the walk reaches through the log.
        case walk(LocationWalk)
        case absent
        case damaged
    }
}
