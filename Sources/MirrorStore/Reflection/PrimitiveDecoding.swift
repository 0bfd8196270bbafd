import Foundation
import MirrorStoreEngine

/// What ``StoredValueType/decode(from:into:optional:)`` reads a stored value with: the record
/// decoder's ``ByteReader``, or a ``RawCursor`` over the bytes where they lie, whose reads inline
/// into the decoding (a call into the engine per byte read cost more than the reading). Each read
/// moves past what it read, or returns nil, with the position anywhere, when the bytes end first
/// or are not what it reads.
protocol SingleValueReading {
    mutating func readByte() -> UInt8?
    mutating func readVarint() -> UInt64?
    /// A tag byte that is `tag`, then a varint: a list's integer element in one read.
    mutating func readVarint(taggedWith tag: UInt8) -> UInt64?
    mutating func readUInt32() -> UInt32?
    mutating func readUInt64() -> UInt64?
    /// A varint count of values, each at least one byte long, so no more than the bytes left.
    mutating func readCount() -> Int?
    /// A varint length and that many bytes of valid UTF-8.
    mutating func readString() -> String?
    /// A varint length and that many bytes.
    mutating func readData() -> Data?
    mutating func readUUID() -> UUID?
}

extension ByteReader: SingleValueReading {
    mutating func readByte() -> UInt8? { try? byte() }
    mutating func readVarint() -> UInt64? { try? varint() }
    mutating func readVarint(taggedWith tag: UInt8) -> UInt64? { readByte() == tag ? readVarint() : nil }
    mutating func readUInt32() -> UInt32? { try? uint32() }
    mutating func readUInt64() -> UInt64? { try? uint64() }
    mutating func readCount() -> Int? { try? count() }
    mutating func readString() -> String? { try? lengthPrefixedString() }
    mutating func readData() -> Data? { (try? lengthPrefixedBytes()).map { Data($0) } }
    mutating func readUUID() -> UUID? { (try? fixedBytes(16)).map { UUID(storedBytes: $0) } }
}

extension RawCursor: SingleValueReading {
    @inline(__always)
    mutating func readByte() -> UInt8? { byte() }
    @inline(__always)
    mutating func readVarint() -> UInt64? { skipVarint() }
    @inline(__always)
    mutating func readVarint(taggedWith tag: UInt8) -> UInt64? { taggedVarint(tag) }
    @inline(__always)
    mutating func readUInt32() -> UInt32? { uint32() }
    @inline(__always)
    mutating func readUInt64() -> UInt64? { uint64() }

    @inline(__always)
    mutating func readCount() -> Int? {
        guard let count = skipVarint(), count <= UInt64(bytes.count - position) else { return nil }
        return Int(count)
    }

    @inline(__always)
    mutating func readString() -> String? {
        guard case .success(let text) = lengthPrefixed() else { return nil }
        return string(text)
    }

    mutating func readData() -> Data? {
        guard case .success(let bytes) = lengthPrefixed() else { return nil }
        return Data(bytes)
    }

    /// Built from the bytes in place, loaded as one `uuid_t` (16 bytes, any alignment): an array
    /// of them first cost an allocation per UUID, and a tuple built byte by byte a check per byte.
    mutating func readUUID() -> UUID? {
        let start = position
        guard skip(16) else { return nil }
        return UUID(uuid: bytes.loadUnaligned(fromByteOffset: start, as: uuid_t.self))
    }
}

extension StoredValueType {
    /// Reads a stored value (tag first) straight into a field of this type, or of its optional,
    /// with no `RecordValue` in between, and returns `true`. Returns `false` for anything this fast
    /// path leaves to the general one, which then reads the same bytes again and reports them as
    /// it always does: bytes that end or are malformed, a tag that does not fit, a number the field
    /// cannot hold, `null` in a required field, a NaN date, decimals and URLs (parsed from text).
    ///
    /// `tag` is the one a tagless record's schema implies, the reader then standing at the body;
    /// nil to read it from the bytes (``RecordGrammar``).
    @inline(never)
    func decode<Reader: SingleValueReading>(tag implied: UInt8? = nil, from reader: inout Reader, into field: UnsafeMutableRawPointer, optional: Bool) -> Bool {
        guard let tag = implied ?? reader.readByte() else { return false }
        if tag == ValueTag.null.rawValue {
            guard optional else { return false }
            return setNil(field)
        }
        guard isWritten(with: tag) else { return false }
        switch self {
        case .bool: return Self.store(tag == ValueTag.true.rawValue, field, optional)
        case .int: return Self.storeSigned(Int.self, &reader, field, optional)
        case .int8: return Self.storeSigned(Int8.self, &reader, field, optional)
        case .int16: return Self.storeSigned(Int16.self, &reader, field, optional)
        case .int32: return Self.storeSigned(Int32.self, &reader, field, optional)
        case .int64: return Self.storeSigned(Int64.self, &reader, field, optional)
        case .uint: return Self.storeUnsigned(UInt.self, &reader, field, optional)
        case .uint8: return Self.storeUnsigned(UInt8.self, &reader, field, optional)
        case .uint16: return Self.storeUnsigned(UInt16.self, &reader, field, optional)
        case .uint32: return Self.storeUnsigned(UInt32.self, &reader, field, optional)
        case .uint64: return Self.storeUnsigned(UInt64.self, &reader, field, optional)
        case .float:
            guard let bits = reader.readUInt32() else { return false }
            return Self.store(Float(bitPattern: bits), field, optional)
        case .double:
            guard let bits = reader.readUInt64() else { return false }
            return Self.store(Double(bitPattern: bits), field, optional)
        case .string:
            guard let text = reader.readString() else { return false }
            return Self.store(text, field, optional)
        case .data:
            guard let data = reader.readData() else { return false }
            return Self.store(data, field, optional)
        case .date:
            guard let bits = reader.readUInt64(), let value = StoredValues.date(bits) else { return false }
            return Self.store(value, field, optional)
        case .uuid:
            guard let value = reader.readUUID() else { return false }
            return Self.store(value, field, optional)
        case .decimal, .url:
            return false
        }
    }

    /// Reads a stored list of values of this type (tag first) straight into a field of type
    /// `[Self]`, in one pass into an array reserved for the count the bytes give; `false` as
    /// ``decode(from:into:optional:)`` returns it, for a null element too (arrays hold none), and
    /// for decimals and URLs (``isReadInLists``).
    @inline(never)
    func decodeList<Reader: SingleValueReading>(from reader: inout Reader, into field: UnsafeMutableRawPointer) -> Bool {
        decodeElements(from: &reader, into: field, asSet: false)
    }

    /// ``decodeList(from:into:)`` for a field of type `Set<Self>`: equal elements kept once, as
    /// the general path keeps them.
    @inline(never)
    func decodeSet<Reader: SingleValueReading>(from reader: inout Reader, into field: UnsafeMutableRawPointer) -> Bool {
        decodeElements(from: &reader, into: field, asSet: true)
    }

    @inline(__always)
    private func decodeElements<Reader: SingleValueReading>(from reader: inout Reader, into field: UnsafeMutableRawPointer, asSet: Bool) -> Bool {
        guard reader.readByte() == ValueTag.list.rawValue, let count = reader.readCount() else { return false }
        switch self {
        case .bool: return plain(Bool.self, count, &reader, field, asSet) { tag, _ in tag == ValueTag.true.rawValue }
        case .int: return integers(Int.self, count, &reader, field, asSet) { Int(exactly: RawCursor.unzigzag($0)) }
        case .int8: return integers(Int8.self, count, &reader, field, asSet) { Int8(exactly: RawCursor.unzigzag($0)) }
        case .int16: return integers(Int16.self, count, &reader, field, asSet) { Int16(exactly: RawCursor.unzigzag($0)) }
        case .int32: return integers(Int32.self, count, &reader, field, asSet) { Int32(exactly: RawCursor.unzigzag($0)) }
        case .int64: return integers(Int64.self, count, &reader, field, asSet) { RawCursor.unzigzag($0) }
        case .uint: return integers(UInt.self, count, &reader, field, asSet) { UInt(exactly: $0) }
        case .uint8: return integers(UInt8.self, count, &reader, field, asSet) { UInt8(exactly: $0) }
        case .uint16: return integers(UInt16.self, count, &reader, field, asSet) { UInt16(exactly: $0) }
        case .uint32: return integers(UInt32.self, count, &reader, field, asSet) { UInt32(exactly: $0) }
        case .uint64: return integers(UInt64.self, count, &reader, field, asSet) { $0 }
        case .float: return plain(Float.self, count, &reader, field, asSet) { $1.readUInt32().map(Float.init(bitPattern:)) }
        case .double: return plain(Double.self, count, &reader, field, asSet) { $1.readUInt64().map(Double.init(bitPattern:)) }
        case .string: return elements(String.self, count, &reader, field, asSet) { $1.readString() }
        case .data: return elements(Data.self, count, &reader, field, asSet) { $1.readData() }
        case .date: return elements(Date.self, count, &reader, field, asSet) { $1.readUInt64().flatMap(StoredValues.date) }
        case .uuid: return elements(UUID.self, count, &reader, field, asSet) { $1.readUUID() }
        case .decimal, .url: return false
        }
    }

    /// Reads `count` elements, each a tag this type is written with and what `element` reads
    /// after it (given the tag), into the array or set at `field`.
    @inline(__always)
    private func elements<Value: Hashable, Reader: SingleValueReading>(
        _ type: Value.Type, _ count: Int, _ reader: inout Reader, _ field: UnsafeMutableRawPointer, _ asSet: Bool,
        _ element: (UInt8, inout Reader) -> Value?
    ) -> Bool {
        if asSet {
            var set = Set<Value>(minimumCapacity: count)
            for _ in 0..<count {
                guard let tag = reader.readByte(), isWritten(with: tag), let value = element(tag, &reader) else { return false }
                set.insert(value)
            }
            FieldMemory.store(set, to: field, at: 0)
            return true
        }
        var array: [Value] = []
        // Not for no element: the empty array is shared, and stays so.
        if count > 0 { array.reserveCapacity(count) }
        for _ in 0..<count {
            guard let tag = reader.readByte(), isWritten(with: tag), let value = element(tag, &reader) else { return false }
            array.append(value)
        }
        FieldMemory.store(array, to: field, at: 0)
        return true
    }

    /// ``elements(_:_:_:_:_:_:)`` for a type whose values are plain bits: a list through
    /// ``plainList(_:_:_:_:_:)``, a set as any other.
    @inline(__always)
    private func plain<Value: Hashable & BitwiseCopyable, Reader: SingleValueReading>(
        _ type: Value.Type, _ count: Int, _ reader: inout Reader, _ field: UnsafeMutableRawPointer, _ asSet: Bool,
        _ element: (UInt8, inout Reader) -> Value?
    ) -> Bool {
        guard !asSet else { return elements(type, count, &reader, field, true, element) }
        return plainList(type, count, &reader, field) { reader in
            guard let tag = reader.readByte(), isWritten(with: tag) else { return nil }
            return element(tag, &reader)
        }
    }

    /// ``plain(_:_:_:_:_:_:)`` for an integer type (written with its own tag only), `convert`
    /// making a value of the varint read: a list's element, tag and varint, is read in one step
    /// (``SingleValueReading/readVarint(taggedWith:)``).
    @inline(__always)
    private func integers<Value: Hashable & BitwiseCopyable, Reader: SingleValueReading>(
        _ type: Value.Type, _ count: Int, _ reader: inout Reader, _ field: UnsafeMutableRawPointer, _ asSet: Bool,
        _ convert: (UInt64) -> Value?
    ) -> Bool {
        guard !asSet else { return elements(type, count, &reader, field, true) { _, reader in reader.readVarint().flatMap(convert) } }
        let tag = self.tag.rawValue
        return plainList(type, count, &reader, field) { $0.readVarint(taggedWith: tag).flatMap(convert) }
    }

    /// A list of `count` plain values (numbers, `Bool`s), each (its tag included) read by
    /// `element`, into temporary storage first, then copied at once into an array made for
    /// them: appending to an array checked its capacity and uniqueness per element, which cost
    /// more than reading the element. A function of its own per type, so that the array is made
    /// by code specialised for it.
    @inline(never)
    private func plainList<Value: BitwiseCopyable, Reader: SingleValueReading>(
        _ type: Value.Type, _ count: Int, _ reader: inout Reader, _ field: UnsafeMutableRawPointer,
        _ element: (inout Reader) -> Value?
    ) -> Bool {
        // Not for no element: the empty array is shared, and stays so.
        guard count > 0 else {
            FieldMemory.store([Value](), to: field, at: 0)
            return true
        }
        return withUnsafeTemporaryAllocation(of: Value.self, capacity: count) { values in
            for index in 0..<count {
                guard let value = element(&reader) else { return false }
                values.initializeElement(at: index, to: value)
            }
            FieldMemory.store(Array(UnsafeBufferPointer(values)), to: field, at: 0)
            return true
        }
    }

    /// Stores `nil` into an optional field of this type.
    private func setNil(_ field: UnsafeMutableRawPointer) -> Bool {
        switch self {
        case .bool: Self.storeNil(Bool.self, field)
        case .int: Self.storeNil(Int.self, field)
        case .int8: Self.storeNil(Int8.self, field)
        case .int16: Self.storeNil(Int16.self, field)
        case .int32: Self.storeNil(Int32.self, field)
        case .int64: Self.storeNil(Int64.self, field)
        case .uint: Self.storeNil(UInt.self, field)
        case .uint8: Self.storeNil(UInt8.self, field)
        case .uint16: Self.storeNil(UInt16.self, field)
        case .uint32: Self.storeNil(UInt32.self, field)
        case .uint64: Self.storeNil(UInt64.self, field)
        case .float: Self.storeNil(Float.self, field)
        case .double: Self.storeNil(Double.self, field)
        case .string: Self.storeNil(String.self, field)
        case .data: Self.storeNil(Data.self, field)
        case .date: Self.storeNil(Date.self, field)
        case .uuid: Self.storeNil(UUID.self, field)
        case .decimal: Self.storeNil(Decimal.self, field)
        case .url: Self.storeNil(URL.self, field)
        }
        return true
    }

    @inline(__always)
    private static func storeSigned<Value: FixedWidthInteger, Reader: SingleValueReading>(
        _ type: Value.Type, _ reader: inout Reader, _ field: UnsafeMutableRawPointer, _ optional: Bool
    ) -> Bool {
        guard let bits = reader.readVarint(), let value = Value(exactly: RawCursor.unzigzag(bits)) else { return false }
        return store(value, field, optional)
    }

    @inline(__always)
    private static func storeUnsigned<Value: FixedWidthInteger, Reader: SingleValueReading>(
        _ type: Value.Type, _ reader: inout Reader, _ field: UnsafeMutableRawPointer, _ optional: Bool
    ) -> Bool {
        guard let bits = reader.readVarint(), let value = Value(exactly: bits) else { return false }
        return store(value, field, optional)
    }

    /// Stores `text`, already read, into a field of this type (`.string`), as ``decode(tag:from:into:optional:)``
    /// stores a string it reads.
    @inline(__always)
    static func storeString(_ text: String, into field: UnsafeMutableRawPointer, optional: Bool) -> Bool {
        store(text, field, optional)
    }

    @inline(__always)
    private static func store<Value>(_ value: Value, _ field: UnsafeMutableRawPointer, _ optional: Bool) -> Bool {
        if optional {
            field.assumingMemoryBound(to: Value?.self).pointee = value
        } else {
            field.assumingMemoryBound(to: Value.self).pointee = value
        }
        return true
    }

    @inline(__always)
    private static func storeNil<Value>(_ type: Value.Type, _ field: UnsafeMutableRawPointer) {
        field.assumingMemoryBound(to: Value?.self).pointee = nil
    }
}
