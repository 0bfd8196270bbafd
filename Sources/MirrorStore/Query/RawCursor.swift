import MirrorStoreEngine

/// Reads a record's bytes in place, every access checked against their end. Reads return nil or
/// a failure rather than throwing, and failures are made out of line, so the per-record loops
/// stay small enough to be inlined.
struct RawCursor {
    let bytes: UnsafeRawBufferPointer
    private(set) var position: Int
    /// `UTF8Text.smallStrings` as the maker of the cursor took it, when ``isSmallStringsTaken``;
    /// otherwise each string read takes it (a call into the runtime's once-only initialisation).
    private let smallStrings: UTF8Text.SmallStrings?
    private let isSmallStringsTaken: Bool

    init(_ bytes: UnsafeRawBufferPointer, at position: Int = 0) {
        self.bytes = bytes
        self.position = position
        smallStrings = nil
        isSmallStringsTaken = false
    }

    /// A cursor at the start of `bytes` whose strings are read with `smallStrings`, which the
    /// caller took from `UTF8Text.smallStrings` once for many reads (a plan holds it).
    init(_ bytes: UnsafeRawBufferPointer, smallStrings: UTF8Text.SmallStrings?) {
        self.bytes = bytes
        position = 0
        self.smallStrings = smallStrings
        isSmallStringsTaken = true
    }

    /// The small-string proof the cursor's maker took, when it took one that holds.
    var takenSmallStrings: UTF8Text.SmallStrings? {
        isSmallStringsTaken ? smallStrings : nil
    }

    /// The string `utf8` spells (`UTF8Text.string(_:)`), or nil.
    @inline(__always)
    func string(_ utf8: UnsafeRawBufferPointer) -> String? {
        let text = utf8.assumingMemoryBound(to: UInt8.self)
        return isSmallStringsTaken ? UTF8Text.string(text, smallStrings: smallStrings) : UTF8Text.string(text)
    }

    @inline(__always)
    static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }

    @inline(__always)
    mutating func byte() -> UInt8? {
        guard position < bytes.count else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    @inline(never)
    func endFailure() -> DecodeFailure {
        DecodeFailure(offset: position, reason: "the record ends in the middle of a value")
    }

    @inline(__always)
    mutating func varint() -> Result<UInt64, DecodeFailure> {
        let start = position
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard let byte = byte() else { return .failure(endFailure()) }
            guard shift < 63 || (shift == 63 && byte <= 1) else { return .failure(Self.overflowFailure(at: start)) }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return .success(value) }
            shift += 7
        }
    }

    @inline(never)
    private static func overflowFailure(at start: Int) -> DecodeFailure {
        DecodeFailure(offset: start, reason: "a varint overflows 64 bits")
    }

    /// Moves past `count` bytes; false (and no move) when fewer are left.
    @inline(__always)
    mutating func skip(_ count: Int) -> Bool {
        guard count <= bytes.count - position else { return false }
        position += count
        return true
    }

    @inline(__always)
    mutating func uint32() -> UInt32? {
        let start = position
        guard skip(4) else { return nil }
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt32.self))
    }

    @inline(__always)
    mutating func uint64() -> UInt64? {
        let start = position
        guard skip(8) else { return nil }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt64.self))
    }

    /// A varint length and that many bytes.
    @inline(__always)
    mutating func lengthPrefixed() -> Result<UnsafeRawBufferPointer, DecodeFailure> {
        let start = position
        return varint().flatMap { length in
            guard length <= UInt64(bytes.count - position) else { return .failure(Self.lengthFailure(length, at: start)) }
            defer { position += Int(length) }
            return .success(UnsafeRawBufferPointer(rebasing: bytes[position..<(position + Int(length))]))
        }
    }

    @inline(never)
    private static func lengthFailure(_ length: UInt64, at start: Int) -> DecodeFailure {
        DecodeFailure(offset: start, reason: "a length of \(length) bytes runs past the end of the record")
    }

    /// Moves past one value of a single-value kind (or its null); false, with the position
    /// anywhere, when the bytes there are not one (``skipFailure(from:)`` says why). The shapes
    /// are ``RecordGrammar``'s, whose table the optimiser folds into this switch.
    ///
    /// Transparent, so that it is inlined into the loop over a record's values: with
    /// `@inline(__always)` the optimizer still left a call per value skipped.
    @_transparent
    mutating func skipSingleValueQuickly() -> Bool {
        guard position < bytes.count else { return false }
        let tag = bytes[position]
        position += 1
        return skipBodyQuickly(ofTag: tag)
    }

    /// Moves past the marker and `bitmap` of a tagless record (``TaglessLayout``) and returns
    /// where its bitmap starts; nil, without moving, for a record in the tagged form, or for a
    /// bitmap that runs past the end or sets unused bits (left to ``RecordGrammar``'s reading,
    /// which says why).
    @inline(__always)
    mutating func skipTaglessStart(_ bitmap: TaglessLayout.Bitmap) -> Int? {
        let bitmapStart = position + 1
        guard position < bytes.count, bytes[position] == TaglessLayout.marker,
              bytes.count - bitmapStart >= bitmap.size,
              bitmap.size == 0 || bitmap.unusedBitsAreZero(lastByte: bytes[bitmapStart + bitmap.size - 1]) else { return nil }
        position = bitmapStart + bitmap.size
        return bitmapStart
    }

    /// The tag a value of `type` implies in a tagless record whose bitmap starts at `bitmapStart`,
    /// `booleans` counting the `Bool` values before it (and this one, when it is one): for a
    /// reader that knows each property's type, in schema order, without the layout's codes.
    @inline(__always)
    func impliedTag(of type: StoredValueType, booleans: inout Int, bitmapStart: Int) -> UInt8 {
        guard type == .bool else { return type.tag.rawValue }
        defer { booleans += 1 }
        return TaglessLayout.booleanTag(bit: booleans) { bytes[bitmapStart + $0] }
    }

    /// Why the tagless start here, with `bitmap`, is not one (``RecordGrammar/readStart(from:of:)`` says).
    @inline(never)
    func taglessStartFailure(_ bitmap: TaglessLayout.Bitmap) -> DecodeFailure {
        let start = position
        let bitmapEnd = start + 1 + bitmap.size
        guard bitmapEnd <= bytes.count else {
            return RecordGrammar.shortBitmapFailure(bitmap.size, at: start + 1)
        }
        return RecordGrammar.unusedBitsFailure(at: bitmapEnd - 1)
    }

    /// The tag of property `index` of a tagless record of `layout` whose bitmap starts at `bitmapStart`.
    @inline(__always)
    func impliedTag(_ layout: TaglessLayout, at index: Int, bitmapStart: Int) -> UInt8 {
        layout.tag(at: index) { bytes[bitmapStart + $0] }
    }

    /// Moves past the body of a single value whose tag, read or implied, is `tag`; false, with the
    /// position anywhere, when the bytes end first.
    @_transparent
    mutating func skipBodyQuickly(ofTag tag: UInt8) -> Bool {
        switch RecordGrammar.payload(ofTag: tag) {
        case .empty?:
            return true
        case .varint?:
            return skipVarint() != nil
        case .fixed(let size)?:
            return skip(size)
        case .lengthPrefixed?:
            guard let length = skipVarint(), length <= UInt64(bytes.count - position) else { return false }
            position += Int(length)
            return true
        case .key?, .values?, .entries?, nil:
            return false
        }
    }

    /// A varint's value, moving past it; nil when it runs past the end or overflows 64 bits.
    @_transparent
    mutating func skipVarint() -> UInt64? {
        // A local position, stored once on the way out: storing it per byte kept the loop's
        // bounds test and advance out of registers.
        var at = position
        defer { position = at }
        let end = bytes.count
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while at < end {
            let byte = bytes[at]
            at += 1
            guard shift < 63 || (shift == 63 && byte <= 1) else { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }

    /// A tag byte that is `tag`, then a varint's value, moving past both; nil, with the position
    /// anywhere, when they are not there: a list's integer element in one call.
    @inline(__always)
    mutating func taggedVarint(_ tag: UInt8) -> UInt64? {
        guard position < bytes.count, bytes[position] == tag else { return nil }
        position += 1
        return skipVarint()
    }

    /// Why the value where ``skipSingleValueQuickly()`` started, read again from `start`, is not one.
    @inline(never)
    func skipFailure(from start: Int) -> DecodeFailure {
        var cursor = RawCursor(bytes, at: start)
        if case .failure(let failure) = cursor.skipSingleValue() { return failure }
        return DecodeFailure(offset: start, reason: "a value that is not a single value")
    }

    /// Moves past one value of a single-value kind (or its null), saying why when it cannot.
    mutating func skipSingleValue() -> Result<Void, DecodeFailure> {
        let start = position
        guard let tag = byte() else { return .failure(endFailure()) }
        switch RecordGrammar.payload(ofTag: tag) {
        case .empty?: return .success(())
        case .varint?: return varint().map { _ in () }
        case .fixed(let size)?: return skip(size) ? .success(()) : .failure(endFailure())
        case .lengthPrefixed?: return lengthPrefixed().map { _ in () }
        case .key?, .values?, .entries?: return .failure(Self.tagFailure(tag, at: start))
        case nil: return .failure(RecordGrammar.unknownTagFailure(tag, at: start))
        }
    }

    @inline(never)
    private static func tagFailure(_ tag: UInt8, at start: Int) -> DecodeFailure {
        DecodeFailure(offset: start, reason: "a value tagged \(tag) where the schema asks for a single value")
    }
}
