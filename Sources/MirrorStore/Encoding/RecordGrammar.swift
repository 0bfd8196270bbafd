import MirrorStoreEngine

/// The shape of record bytes, which ``RecordEncoder`` writes and every reader follows: the
/// decoder, the projection, a query's byte conditions and the field fast path of mapping
/// (docs/FILE_FORMAT.md, "Record encoding").
///
/// - A record is a varint count of values, equal to its schema's property count
///   (``readValueCount(from:of:)``), then one value per property in schema order; or, for a
///   type whose properties are all required single values, the tagless form of ``TaglessLayout``
///   (``readStart(from:of:)``), whose values are read with the tags the schema implies.
/// - A value is a ``ValueTag`` byte, then the payload its tag names (``payload(ofTag:)``). Every
///   count and length is checked against the bytes that remain (``ByteReader/count()``) before
///   anything is allocated.
/// - Nesting, the one depth rule: a record's own values are at depth 0, and each embedded record,
///   list and dictionary a value lies inside adds one level. No value is written or read at
///   ``maximumNesting`` levels or deeper, and a walk that recurses stops sooner when its thread's
///   stack runs low (``nestsTooDeep(_:)``). A schema's kinds are bounded the same way.
enum RecordGrammar {
    /// What follows a value's tag.
    enum Payload: Equatable {
        /// Nothing: null, false, true.
        case empty
        /// A varint: an integer (zigzagged) or an unsigned one.
        case varint
        /// That many bytes: a float (4), a double or a date (8), a UUID (16).
        case fixed(Int)
        /// A varint length, then that many bytes: a string, data, and a decimal or URL as text.
        case lengthPrefixed
        /// A primary key, as ``PrimaryKey`` writes it: a reference.
        case key
        /// A varint count, then that many values: an embedded record's, a list's.
        case values
        /// A varint count, then per entry a length-prefixed key text and a value: a dictionary.
        case entries

        /// Whether the value is a single value, as a property of a ``StoredValueType`` holds.
        var isSingleValue: Bool {
            switch self {
            case .empty, .varint, .fixed, .lengthPrefixed: true
            case .key, .values, .entries: false
            }
        }
    }

    /// The payload of the tag byte `tag`, or nil for a byte that is no tag: the one table of value
    /// shapes, which every skipper reads.
    ///
    /// A switch on raw tag values, transparent, so that the optimiser folds it into the caller's
    /// own switch on the payload; `ValueTag(rawValue:)` stays a call.
    @_transparent
    static func payload(ofTag tag: UInt8) -> Payload? {
        switch tag {
        case ValueTag.null.rawValue, ValueTag.false.rawValue, ValueTag.true.rawValue: .empty
        case ValueTag.int.rawValue, ValueTag.uint.rawValue: .varint
        case ValueTag.float.rawValue: .fixed(4)
        case ValueTag.double.rawValue, ValueTag.date.rawValue: .fixed(8)
        case ValueTag.uuid.rawValue: .fixed(16)
        case ValueTag.string.rawValue, ValueTag.data.rawValue, ValueTag.decimal.rawValue, ValueTag.url.rawValue: .lengthPrefixed
        case ValueTag.reference.rawValue: .key
        case ValueTag.embedded.rawValue, ValueTag.list.rawValue: .values
        case ValueTag.dictionary.rawValue: .entries
        default: nil
        }
    }

    /// The depth at which values are refused (see the depth rule above). Kinds nest only as deep
    /// as Swift types do; embedded records of a recursive type nest as deep as a model's data.
    static let maximumNesting = 200

    /// Whether a value at `depth` is refused: the one depth check of the writer and every reader.
    @inline(__always)
    static func nestsTooDeep(_ depth: Int) -> Bool {
        depth >= maximumNesting || StackRoom.runsOut(atDepth: depth)
    }

    /// Why a value at `depth`, starting at `offset`, was refused by ``nestsTooDeep(_:)``.
    @inline(never)
    static func nestingFailure(at offset: Int, depth: Int) -> DecodeFailure {
        if depth >= maximumNesting {
            DecodeFailure(offset: offset, reason: "values nest more than \(maximumNesting) levels deep")
        } else {
            DecodeFailure(offset: offset, reason: "values nest \(depth) levels deep, more than this thread's stack can follow")
        }
    }

    /// Reads a record's count of values, which must be the count of `schema`'s properties.
    static func readValueCount(from reader: inout ByteReader, of schema: ObjectSchema) throws(DecodeFailure) {
        let start = reader.position
        let count = try reader.varint()
        guard count == UInt64(schema.properties.count) else {
            throw valueCountFailure(count, of: schema.typeName, expected: schema.properties.count, at: start)
        }
    }

    /// Reads the start of a top-level record of `schema` in either form: the count of the tagged
    /// form, or the marker and bitmap of the tagless one, which it returns. Embedded records are
    /// always tagged (``readValueCount(from:of:)``).
    static func readStart(from reader: inout ByteReader, of schema: ObjectSchema) throws(DecodeFailure) -> TaglessRecord? {
        guard let layout = schema.taglessLayout, reader.position < reader.end,
              reader.bytes[reader.position] == TaglessLayout.marker else {
            try readValueCount(from: &reader, of: schema)
            return nil
        }
        let bitmapStart = reader.position + 1
        guard reader.end - bitmapStart >= layout.bitmapSize else {
            throw shortBitmapFailure(layout.bitmapSize, at: bitmapStart)
        }
        if layout.bitmapSize > 0, !layout.bitmap.unusedBitsAreZero(lastByte: reader.bytes[bitmapStart + layout.bitmapSize - 1]) {
            throw unusedBitsFailure(at: bitmapStart + layout.bitmapSize - 1)
        }
        try reader.skipBytes(1 + layout.bitmapSize)
        return TaglessRecord(layout: layout, bitmapStart: bitmapStart)
    }

    @inline(never)
    static func shortBitmapFailure(_ size: Int, at offset: Int) -> DecodeFailure {
        DecodeFailure(offset: offset, reason: "the record ends inside its \(size)-byte bitmap")
    }

    @inline(never)
    static func unusedBitsFailure(at offset: Int) -> DecodeFailure {
        DecodeFailure(offset: offset, reason: "the bitmap sets bits no Bool property uses")
    }

    /// Moves past the body of a single value whose tag is `tag`, the tag read or implied.
    static func skipBody(ofTag tag: UInt8, from reader: inout ByteReader) throws(DecodeFailure) {
        switch payload(ofTag: tag) {
        case .empty?: break
        case .varint?: _ = try reader.varint()
        case .fixed(let size)?: try reader.skipBytes(size)
        case .lengthPrefixed?: _ = try reader.lengthPrefixedRange()
        case .key?, .values?, .entries?, nil: throw unknownTagFailure(tag, at: reader.position)
        }
    }

    @inline(never)
    static func valueCountFailure(_ count: UInt64, of typeName: String, expected: Int, at offset: Int) -> DecodeFailure {
        DecodeFailure(offset: offset, reason: "\(count) values for the \(expected) properties of \(typeName)")
    }

    /// Moves past one value at `depth` without reading it. Embedded records carry their own
    /// count, so no schema is needed. Nesting is walked with an explicit stack, so a deep value
    /// uses no more of the thread's stack than a flat one.
    static func skipValue(from reader: inout ByteReader, depth: Int = 0) throws(DecodeFailure) {
        // Per open container, the values still to skip in it and whether they are dictionary
        // entries, whose key comes first. It stays empty, and unallocated, for a scalar: skipping
        // the properties before a queried one allocates nothing.
        var open: [(remaining: Int, isEntries: Bool)] = []
        while true {
            if let last = open.last, last.isEntries { _ = try reader.lengthPrefixedRange() }
            let start = reader.position
            let level = depth + open.count
            if nestsTooDeep(level) { throw nestingFailure(at: start, depth: level) }
            let tag = try reader.byte()
            let payload = payload(ofTag: tag)
            switch payload {
            case .empty?: break
            case .varint?: _ = try reader.varint()
            case .fixed(let size)?: try reader.skipBytes(size)
            case .lengthPrefixed?: _ = try reader.lengthPrefixedRange()
            case .key?: try PrimaryKey.skip(from: &reader)
            case .values?, .entries?:
                let count = try reader.count()
                if count > 0 {
                    open.append((count, payload == .entries))
                    continue
                }
            case nil: throw unknownTagFailure(tag, at: start)
            }
            // The value is skipped: close every container it ends.
            while let last = open.last {
                if last.remaining > 1 {
                    open[open.count - 1].remaining -= 1
                    break
                }
                open.removeLast()
            }
            if open.isEmpty { return }
        }
    }

    @inline(never)
    static func unknownTagFailure(_ tag: UInt8, at offset: Int) -> DecodeFailure {
        DecodeFailure(offset: offset, reason: "unknown value tag \(tag)")
    }
}

/// A top-level record in the tagless form being read: its layout, and where its bitmap lies.
struct TaglessRecord {
    let layout: TaglessLayout
    let bitmapStart: Int

    /// The tag the value of property `index` would carry in the tagged form.
    @inline(__always)
    func tag(at index: Int, in bytes: [UInt8]) -> UInt8 {
        layout.tag(at: index) { bytes[bitmapStart + $0] }
    }
}

extension ByteReader {
    /// A count of encoded items, each at least one byte long, so it cannot exceed what remains.
    mutating func count() throws(DecodeFailure) -> Int {
        let start = position
        let count = try varint()
        guard count <= UInt64(remaining) else {
            throw DecodeFailure(offset: start, reason: "a count of \(count) items runs past the end of the record")
        }
        return Int(count)
    }

    /// `count` bytes, checking they are there.
    mutating func fixedBytes(_ count: Int) throws(DecodeFailure) -> [UInt8] {
        let start = position
        try skipBytes(count)
        return Array(bytes[start..<position])
    }

    /// Moves past `count` bytes, checking they are there.
    mutating func skipBytes(_ count: Int) throws(DecodeFailure) {
        guard remaining >= count else {
            throw DecodeFailure(offset: position, reason: "the record ends inside a \(count)-byte value")
        }
        for _ in 0..<count { _ = try byte() }
    }
}
