import Foundation
import MirrorStoreEngine

/// Reads chosen properties of an encoded record as ``QueryValue``s and skips the rest, without
/// building a record or a model: what a query needs to test a condition or find a sort key.
///
/// Links come back as the key they store; embedded records and containers are read whole. Every
/// length is checked against the bytes, so damaged input ends in a ``RecordCodingFailure``.
struct RecordProjection: Sendable {
    let schema: ObjectSchema
    /// Per schema position, whether the property is read.
    private let wanted: [Bool]
    /// The last wanted position: reading stops after it.
    private let lastWanted: Int
    /// Where the schemas of embedded types come from.
    private let schemas: any SchemaSource

    init(schema: ObjectSchema, properties: Set<String>, schemas: any SchemaSource) {
        self.schema = schema
        wanted = schema.properties.map { properties.contains($0.name) }
        lastWanted = wanted.lastIndex(of: true) ?? -1
        self.schemas = schemas
    }

    /// The wanted values by schema position (`.null` at positions not read).
    func values(of bytes: [UInt8]) throws(RecordCodingFailure) -> [QueryValue] {
        var reader = ByteReader(bytes)
        do throws(DecodeFailure) {
            try checkCount(&reader)
            var values = [QueryValue](repeating: .null, count: schema.properties.count)
            var index = 0
            while index <= lastWanted {
                if wanted[index] {
                    values[index] = try Self.read(schema.properties[index].kind, from: &reader, schemaNamed: schemas.schema(named:))
                } else {
                    try Self.skip(from: &reader)
                }
                index += 1
            }
            return values
        } catch {
            throw RecordCodingFailure(error)
        }
    }

    /// The value of the property at `position` alone, the others skipped, with no array of values:
    /// what an index key needs, once per index for every object a commit writes.
    func value(at position: Int, of bytes: [UInt8]) throws(RecordCodingFailure) -> QueryValue {
        var reader = ByteReader(bytes)
        do throws(DecodeFailure) {
            try checkCount(&reader)
            guard schema.properties.indices.contains(position) else { return .null }
            for _ in 0..<position { try Self.skip(from: &reader) }
            return try Self.read(schema.properties[position].kind, from: &reader, schemaNamed: schemas.schema(named:))
        } catch {
            throw RecordCodingFailure(error)
        }
    }

    private func checkCount(_ reader: inout ByteReader) throws(DecodeFailure) {
        let count = try reader.varint()
        guard count == UInt64(schema.properties.count) else {
            throw DecodeFailure(offset: 0, reason: "\(count) values for the \(schema.properties.count) properties of \(schema.typeName)")
        }
    }

    /// Every value of an encoded record (of an embedded record, or a linked one a condition reads).
    static func allValues(
        of schema: ObjectSchema, from reader: inout ByteReader, schemaNamed: (String) -> ObjectSchema?, depth: Int = 0
    ) throws(DecodeFailure) -> [QueryValue] {
        let count = try reader.varint()
        guard count == UInt64(schema.properties.count) else {
            throw DecodeFailure(offset: reader.position, reason: "\(count) values for the \(schema.properties.count) properties of \(schema.typeName)")
        }
        var values: [QueryValue] = []
        values.reserveCapacity(schema.properties.count)
        for property in schema.properties {
            values.append(try read(property.kind, from: &reader, schemaNamed: schemaNamed, depth: depth))
        }
        return values
    }

    /// Values nest only as deep as their kinds do, except embedded records of a recursive type:
    /// beyond this depth a record is refused rather than read with ever more stack.
    static let maximumDepth = 200

    private static func read(
        _ kind: PropertyKind, from reader: inout ByteReader, schemaNamed: (String) -> ObjectSchema?, depth: Int = 0
    ) throws(DecodeFailure) -> QueryValue {
        let start = reader.position
        guard depth < maximumDepth else {
            throw DecodeFailure(offset: start, reason: "values nest more than \(maximumDepth) levels deep")
        }
        let tagByte = try reader.byte()
        guard let tag = ValueTag(rawValue: tagByte) else {
            throw DecodeFailure(offset: start, reason: "unknown value tag \(tagByte)")
        }
        let expected = if case .optional(let wrapped) = kind { wrapped } else { kind }
        switch tag {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .int: return .int(ByteWriter.unzigzag(try reader.varint()))
        case .uint: return .uint(try reader.varint())
        case .float: return .float(Float(bitPattern: try reader.uint32()))
        case .double: return .double(Double(bitPattern: try reader.uint64()))
        case .string: return .string(try reader.lengthPrefixedString())
        case .data: return .data(try reader.lengthPrefixedBytes())
        case .date:
            guard let value = StoredValues.date(try reader.uint64()) else {
                throw DecodeFailure(offset: start, reason: "a date that is not a number (NaN), which no store writes")
            }
            return .date(value)
        case .uuid:
            return .uuid(UUID(storedBytes: try reader.fixedBytes(16)))
        case .decimal:
            let text = try reader.lengthPrefixedString()
            guard let value = StoredValues.decimal(text) else {
                throw DecodeFailure(offset: start, reason: "\(text.debugDescription) is not a decimal number as a store writes one")
            }
            return .decimal(value)
        case .url: return .url(try reader.lengthPrefixedString())
        case .reference:
            guard case .object(let typeName) = expected else { throw mismatch(tag, kind, at: start) }
            return .link(typeName: typeName, key: try PrimaryKey.read(from: &reader))
        case .embedded:
            guard case .object(let typeName) = expected, let schema = schemaNamed(typeName) else { throw mismatch(tag, kind, at: start) }
            return .embedded(schema, try allValues(of: schema, from: &reader, schemaNamed: schemaNamed, depth: depth + 1))
        case .list:
            let element: PropertyKind
            switch expected {
            case .list(let inner), .set(let inner): element = inner
            default: throw mismatch(tag, kind, at: start)
            }
            let count = try reader.count()
            var elements: [QueryValue] = []
            elements.reserveCapacity(count)
            for _ in 0..<count {
                elements.append(try read(element, from: &reader, schemaNamed: schemaNamed, depth: depth + 1))
            }
            return .list(elements)
        case .dictionary:
            guard case .dictionary(let element) = expected else { throw mismatch(tag, kind, at: start) }
            let count = try reader.count()
            var entries: [String: QueryValue] = [:]
            for _ in 0..<count {
                let key = try reader.lengthPrefixedString()
                entries[key] = try read(element, from: &reader, schemaNamed: schemaNamed, depth: depth + 1)
            }
            return .dictionary(entries)
        }
    }

    private static func mismatch(_ tag: ValueTag, _ kind: PropertyKind, at offset: Int) -> DecodeFailure {
        DecodeFailure(offset: offset, reason: "a value tagged \(tag) where \(kind) was expected")
    }

    /// Moves past one encoded value without reading it. Embedded records carry their own count,
    /// so no schema is needed. Nesting is walked with an explicit stack, so a deeply nested value
    /// cannot exhaust the thread's stack.
    static func skip(from reader: inout ByteReader) throws(DecodeFailure) {
        // Each entry is a value still to skip after the current one; `true` marks a dictionary
        // entry, whose key comes first. It stays empty, and unallocated, for a scalar: skipping
        // the properties before a queried one allocates nothing.
        var pending: [Bool] = []
        var isEntry = false
        while true {
            if isEntry { _ = try reader.lengthPrefixedRange() }
            let start = reader.position
            let tagByte = try reader.byte()
            guard let tag = ValueTag(rawValue: tagByte) else {
                throw DecodeFailure(offset: start, reason: "unknown value tag \(tagByte)")
            }
            switch tag {
            case .null, .false, .true: break
            case .int, .uint: _ = try reader.varint()
            case .float: try reader.skipBytes(4)
            case .double, .date: try reader.skipBytes(8)
            case .uuid: try reader.skipBytes(16)
            case .string, .data, .decimal, .url: _ = try reader.lengthPrefixedRange()
            case .reference: _ = try PrimaryKey.read(from: &reader)
            case .embedded, .list: pending += repeatElement(false, count: try reader.count())
            case .dictionary: pending += repeatElement(true, count: try reader.count())
            }
            guard let next = pending.popLast() else { return }
            isEntry = next
        }
    }
}

extension ByteReader {
    /// Moves past `count` bytes, checking they are there.
    mutating func skipBytes(_ count: Int) throws(DecodeFailure) {
        guard remaining >= count else {
            throw DecodeFailure(offset: position, reason: "the record ends inside a \(count)-byte value")
        }
        for _ in 0..<count { _ = try byte() }
    }
}
