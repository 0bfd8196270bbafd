/// An index entry's key as a run block stores it (`IndexKeyTag`), lent where it lies: a walk
/// that only compares keys with the one before (for the groups of equal keys) reads no `IndexKey`.
struct StoredIndexKey {
    let tag: IndexKeyTag
    /// The 8 bytes of a number's key; 0 for other kinds.
    let fixed: UInt64
    /// The bytes of a string, byte string or tuple key; empty for other kinds.
    let body: UnsafeRawBufferPointer

    /// The key decoded, or nil when its bytes are not a key (a string that is not UTF-8).
    var indexKey: IndexKey? {
        switch tag {
        case .null: .null
        case .falseValue: .bool(false)
        case .trueValue: .bool(true)
        case .integer: .integer(Int64(bitPattern: fixed))
        case .unsigned: .unsigned(fixed)
        case .double: .double(Double(bitPattern: fixed))
        case .string: UTF8Text.string(body.assumingMemoryBound(to: UInt8.self)).map { .string($0) }
        case .bytes: .bytes(Array(body))
        case .tuple: .tuple(IndexTuple(encoded: Array(body)))
        }
    }

    /// Calls `use` with `key`'s stored form; nil for ``IndexKey/greatest``, which no entry holds.
    static func with<Result>(_ key: IndexKey, _ use: (StoredIndexKey) -> Result) -> Result? {
        let none = UnsafeRawBufferPointer(start: nil, count: 0)
        switch key {
        case .null: return use(StoredIndexKey(tag: .null, fixed: 0, body: none))
        case .bool(let value): return use(StoredIndexKey(tag: value ? .trueValue : .falseValue, fixed: 0, body: none))
        case .integer(let value): return use(StoredIndexKey(tag: .integer, fixed: UInt64(bitPattern: value), body: none))
        case .unsigned(let value): return use(StoredIndexKey(tag: .unsigned, fixed: value, body: none))
        case .double(let value): return use(StoredIndexKey(tag: .double, fixed: value.bitPattern, body: none))
        case .string(var value): return value.withUTF8 { use(StoredIndexKey(tag: .string, fixed: 0, body: UnsafeRawBufferPointer($0))) }
        case .bytes(let value): return value.withUnsafeBytes { use(StoredIndexKey(tag: .bytes, fixed: 0, body: $0)) }
        case .tuple(let value): return value.bytes.withUnsafeBytes { use(StoredIndexKey(tag: .tuple, fixed: 0, body: $0)) }
        case .greatest: return nil
        }
    }
}

/// An object's key as an index entry stores it (`OperationCodec.encodeKey`), lent where it lies:
/// a set of objects (``ObjectKeySet``) is searched with its bytes, and only the objects kept are
/// decoded into a `StorageKey`.
struct StoredObjectKey {
    let tag: OperationCodec.KeyTag
    /// An integer key's value; 0 for other kinds.
    let integer: Int64
    /// The bytes of a string (its UTF-8 as stored) or byte-string key; empty for an integer.
    let body: UnsafeRawBufferPointer

    /// The key decoded, or nil when its bytes are not a key (a string that is not UTF-8).
    var storageKey: StorageKey? {
        switch tag {
        case .integer: .integer(integer)
        case .string: UTF8Text.string(body.assumingMemoryBound(to: UInt8.self)).map { .string($0) }
        case .bytes: .bytes(Array(body))
        }
    }

    /// Calls `use` with `key`'s stored form.
    static func with<Result>(_ key: StorageKey, _ use: (StoredObjectKey) -> Result) -> Result {
        switch key {
        case .integer(let value): use(StoredObjectKey(tag: .integer, integer: value, body: UnsafeRawBufferPointer(start: nil, count: 0)))
        case .string(var value): value.withUTF8 { use(StoredObjectKey(tag: .string, integer: 0, body: UnsafeRawBufferPointer($0))) }
        case .bytes(let value): value.withUnsafeBytes { use(StoredObjectKey(tag: .bytes, integer: 0, body: $0)) }
        }
    }
}

extension RunBlockReader {
    /// What `use` makes of entry `index` of an index-layout block, its key and object lent where
    /// they lie (a key that straddles the block's two pieces is joined first), and whether it adds
    /// (true) or marks a deletion; nil when the entry does not decode as ``indexEntry(_:)``
    /// decodes it (a string's UTF-8 is checked by whoever decodes it).
    func withIndexEntryBytes<Result>(_ index: Int, _ use: (StoredIndexKey, StoredObjectKey, Bool) -> Result) -> Result? {
        guard layout == Self.indexLayout else { return nil }
        let end = size - Self.checksumSize
        if tail.isEmpty, let base = head.baseAddress {
            // `entryStart`, each number loaded where it lies.
            let count = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: 5, as: UInt16.self)))
            let table = Self.prefixSize + 2 * index
            guard index < count, table + 2 <= size else { return nil }
            let start = Self.entryStart(in: base, index, entries: Self.prefixSize + 2 * count)
            guard start < end else { return nil }
            return Self.withIndexEntryBytes(in: base, at: start, end: end, use)
        }
        guard var position = entryStart(index) else { return nil }
        let flag = self[position]
        position += 1
        guard flag <= 1, position < end, let keyTag = IndexKeyTag(rawValue: self[position]) else { return nil }
        position += 1
        var fixed: UInt64 = 0
        var keyBody = position..<position
        switch keyTag {
        case .null, .falseValue, .trueValue:
            break
        case .integer, .unsigned, .double:
            guard end - position >= 8 else { return nil }
            fixed = uint64(at: position)
            position += 8
        case .string, .bytes, .tuple:
            guard let length = varint(&position), length <= UInt64(end - position) else { return nil }
            keyBody = position..<(position + Int(length))
            position += Int(length)
        }
        guard position < end, let objectTag = OperationCodec.KeyTag(rawValue: self[position]) else { return nil }
        position += 1
        var integer: Int64 = 0
        var objectBody = position..<position
        switch objectTag {
        case .integer:
            guard let value = varint(&position) else { return nil }
            integer = ByteWriter.unzigzag(value)
        case .string, .bytes:
            guard let length = varint(&position), length <= UInt64(end - position) else { return nil }
            objectBody = position..<(position + Int(length))
        }
        return withSpan(keyBody) { key in
            withSpan(objectBody) { object in
                use(StoredIndexKey(tag: keyTag, fixed: fixed, body: key), StoredObjectKey(tag: objectTag, integer: integer, body: object), flag == 1)
            }
        }
    }

    /// ``withIndexEntryBytes(_:_:)`` for a block in one piece at `base`, the entry at `start`,
    /// read before `end`: each byte loaded where it lies, with no test of which piece holds it.
    @inline(__always)
    private static func withIndexEntryBytes<Result>(
        in base: UnsafeRawPointer, at start: Int, end: Int, _ use: (StoredIndexKey, StoredObjectKey, Bool) -> Result
    ) -> Result? {
        var position = start
        let flag = base.load(fromByteOffset: position, as: UInt8.self)
        position += 1
        guard flag <= 1, position < end, let keyTag = IndexKeyTag(rawValue: base.load(fromByteOffset: position, as: UInt8.self)) else { return nil }
        position += 1
        var fixed: UInt64 = 0
        var key = UnsafeRawBufferPointer(start: nil, count: 0)
        switch keyTag {
        case .null, .falseValue, .trueValue:
            break
        case .integer, .unsigned, .double:
            guard end - position >= 8 else { return nil }
            fixed = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt64.self))
            position += 8
        case .string, .bytes, .tuple:
            guard let length = varint(in: base, &position, end: end), length <= UInt64(end - position) else { return nil }
            key = UnsafeRawBufferPointer(start: base + position, count: Int(length))
            position += Int(length)
        }
        guard position < end, let objectTag = OperationCodec.KeyTag(rawValue: base.load(fromByteOffset: position, as: UInt8.self)) else { return nil }
        position += 1
        var integer: Int64 = 0
        var object = UnsafeRawBufferPointer(start: nil, count: 0)
        switch objectTag {
        case .integer:
            guard let value = varint(in: base, &position, end: end) else { return nil }
            integer = ByteWriter.unzigzag(value)
        case .string, .bytes:
            guard let length = varint(in: base, &position, end: end), length <= UInt64(end - position) else { return nil }
            object = UnsafeRawBufferPointer(start: base + position, count: Int(length))
        }
        return use(StoredIndexKey(tag: keyTag, fixed: fixed, body: key), StoredObjectKey(tag: objectTag, integer: integer, body: object), flag == 1)
    }

    /// What `use` makes of the bytes at `span` of the entries (checked to lie before the
    /// checksum), in place, or joined when they straddle the two pieces.
    private func withSpan<Result>(_ span: Range<Int>, _ use: (UnsafeRawBufferPointer) -> Result) -> Result {
        if span.upperBound <= head.count { return use(UnsafeRawBufferPointer(rebasing: head[span])) }
        if span.lowerBound >= head.count { return use(UnsafeRawBufferPointer(rebasing: tail[(span.lowerBound - head.count)..<(span.upperBound - head.count)])) }
        let joined = Array(head[span.lowerBound...]) + Array(tail[..<(span.upperBound - head.count)])
        return joined.withUnsafeBytes(use)
    }
}
