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
        self.init(schema: schema, wanted: schema.properties.map { properties.contains($0.name) }, schemas: schemas)
    }

    /// Reads the property at `position` alone: an aggregate's, made for each call, with no set
    /// of names to hash.
    init(schema: ObjectSchema, position: Int, schemas: any SchemaSource) {
        self.init(schema: schema, wanted: schema.properties.indices.map { $0 == position }, schemas: schemas)
    }

    private init(schema: ObjectSchema, wanted: [Bool], schemas: any SchemaSource) {
        self.schema = schema
        self.wanted = wanted
        lastWanted = wanted.lastIndex(of: true) ?? -1
        self.schemas = schemas
    }

    /// The wanted values by schema position (`.null` at positions not read).
    func values(of bytes: [UInt8]) throws(RecordCodingFailure) -> [QueryValue] {
        var reader = ByteReader(bytes)
        do throws(DecodeFailure) {
            let tagless = try RecordGrammar.readStart(from: &reader, of: schema)
            var values = [QueryValue](repeating: .null, count: schema.properties.count)
            var index = 0
            while index <= lastWanted {
                if wanted[index] {
                    values[index] = try Self.read(schema.properties[index].kind, at: index, of: tagless, from: &reader, schemaNamed: schemas.schema(named:))
                } else {
                    try Self.skip(at: index, of: tagless, from: &reader)
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
            let tagless = try RecordGrammar.readStart(from: &reader, of: schema)
            guard schema.properties.indices.contains(position) else { return .null }
            for index in 0..<position { try Self.skip(at: index, of: tagless, from: &reader) }
            return try Self.read(schema.properties[position].kind, at: position, of: tagless, from: &reader, schemaNamed: schemas.schema(named:))
        } catch {
            throw RecordCodingFailure(error)
        }
    }

    /// Every value of an encoded record: a linked one a condition reads (`depth` 0), in either
    /// form, or an embedded one, tagged.
    static func allValues(
        of schema: ObjectSchema, from reader: inout ByteReader, schemaNamed: (String) -> ObjectSchema?, depth: Int = 0
    ) throws(DecodeFailure) -> [QueryValue] {
        var tagless: TaglessRecord?
        if depth == 0 {
            tagless = try RecordGrammar.readStart(from: &reader, of: schema)
        } else {
            try RecordGrammar.readValueCount(from: &reader, of: schema)
        }
        var values: [QueryValue] = []
        values.reserveCapacity(schema.properties.count)
        for (index, property) in schema.properties.enumerated() {
            values.append(try read(property.kind, at: index, of: tagless, from: &reader, schemaNamed: schemaNamed, depth: depth))
        }
        return values
    }

    /// The value of the property at `index`, of kind `kind`, of a tagless record or a tagged one (`tagless` nil).
    private static func read(
        _ kind: PropertyKind, at index: Int, of tagless: TaglessRecord?, from reader: inout ByteReader,
        schemaNamed: (String) -> ObjectSchema?, depth: Int = 0
    ) throws(DecodeFailure) -> QueryValue {
        let start = reader.position
        if RecordGrammar.nestsTooDeep(depth) { throw RecordGrammar.nestingFailure(at: start, depth: depth) }
        let tag = if let tagless { tagless.tag(at: index, in: reader.bytes) } else { try reader.byte() }
        return try read(kind, tag: tag, from: &reader, start: start, schemaNamed: schemaNamed, depth: depth)
    }

    /// Moves past the value of the property at `index` of a tagless record or a tagged one.
    private static func skip(at index: Int, of tagless: TaglessRecord?, from reader: inout ByteReader) throws(DecodeFailure) {
        if let tagless {
            try RecordGrammar.skipBody(ofTag: tagless.tag(at: index, in: reader.bytes), from: &reader)
        } else {
            try RecordGrammar.skipValue(from: &reader)
        }
    }

    private static func read(
        _ kind: PropertyKind, from reader: inout ByteReader, schemaNamed: (String) -> ObjectSchema?, depth: Int
    ) throws(DecodeFailure) -> QueryValue {
        let start = reader.position
        if RecordGrammar.nestsTooDeep(depth) { throw RecordGrammar.nestingFailure(at: start, depth: depth) }
        return try read(kind, tag: try reader.byte(), from: &reader, start: start, schemaNamed: schemaNamed, depth: depth)
    }

    /// The value whose tag, read or implied, is `tagByte`; `reader` stands at its body.
    private static func read(
        _ kind: PropertyKind, tag tagByte: UInt8, from reader: inout ByteReader, start: Int, schemaNamed: (String) -> ObjectSchema?, depth: Int
    ) throws(DecodeFailure) -> QueryValue {
        guard let tag = ValueTag(rawValue: tagByte) else {
            throw RecordGrammar.unknownTagFailure(tagByte, at: start)
        }
        let expected = if case .optional(let wrapped) = kind { wrapped } else { kind }
        // Values are read against their kind, as the decoder reads them (links and containers
        // below); null is any kind's.
        if let type = expected.storedValueType {
            guard tag == .null || type.isWritten(with: tagByte) else { throw mismatch(tag, kind, at: start) }
        } else if tag != .null, RecordGrammar.payload(ofTag: tagByte)?.isSingleValue == true {
            throw mismatch(tag, kind, at: start)
        }
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
        case .date: return .date(try StoredValues.readDate(from: &reader, start: start))
        case .uuid:
            return .uuid(UUID(storedBytes: try reader.fixedBytes(16)))
        case .decimal: return .decimal(try StoredValues.readDecimal(from: &reader, start: start))
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
}
