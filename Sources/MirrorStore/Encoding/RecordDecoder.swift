import Foundation
import MirrorStoreEngine

/// Reads the bytes ``RecordEncoder`` wrote, guided by the schema of each record. Every length and
/// count is checked against the bytes that remain, so damaged input ends in a
/// ``RecordCodingFailure``, never a trap or a huge allocation.
struct RecordDecoder {
    /// The schema of each type a record may link to or embed.
    let schema: (String) -> ObjectSchema?
    /// The record stored under a key, or `nil` when it no longer exists (the link then reads as null).
    let resolve: (String, StorageKey) throws -> ManagedObject?

    init(schema: @escaping (String) -> ObjectSchema?, resolve: @escaping (String, StorageKey) throws -> ManagedObject?) {
        self.schema = schema
        self.resolve = resolve
    }

    /// A decoder for records whose schema has no links: it needs no way to find other records,
    /// and reads a link as damage. Its closures capture nothing, so making one allocates nothing.
    static var withoutLinks: RecordDecoder {
        RecordDecoder(schema: { _ in nil }, resolve: { typeName, _ in
            throw RecordCodingFailure(.unknownType(typeName))
        })
    }

    /// A decoder for records that reach no model with a primary key: the models they embed are
    /// read by their schemas in `embedded` (by type name), and a link is damage.
    static func withoutLinks(embedding embedded: [String: ObjectSchema]) -> RecordDecoder {
        guard !embedded.isEmpty else { return .withoutLinks }
        return RecordDecoder(schema: { embedded[$0] }, resolve: { typeName, _ in
            throw RecordCodingFailure(.unknownType(typeName))
        })
    }

    /// Fills `record`, created empty by the caller so that links back to it can be resolved
    /// while its own values are being read.
    func decode(_ bytes: [UInt8], into record: ManagedObject) throws {
        var reader = ByteReader(bytes)
        do {
            record.values = try readFields(of: record.objectSchema, from: &reader, depth: 0)
        } catch let failure as DecodeFailure {
            throw RecordCodingFailure(failure)
        }
        guard reader.isAtEnd else { throw RecordCodingFailure.malformed(reader, "\(reader.remaining) bytes follow the last property") }
    }

    /// Reads a record's values in schema order into `sink`, without building a record: for readers
    /// that fill a model directly.
    func decode(_ bytes: [UInt8], schema: ObjectSchema, into sink: inout some RecordSink) throws {
        var reader = ByteReader(bytes)
        do {
            let tagless = try RecordGrammar.readStart(from: &reader, of: schema)
            // Through a buffer: copying each property would retain and release its name and kind.
            try schema.properties.withUnsafeBufferPointer { properties in
                for index in properties.indices {
                    let start = reader.position
                    let tag = tagless?.tag(at: index, in: bytes)
                    if try sink.readDirectly(index, tag: tag, from: &reader) { continue }
                    reader.rewind(to: start)
                    let value = if let tag {
                        try read(properties[index].kind, tag: tag, from: &reader, depth: 0, start: start)
                    } else {
                        try read(properties[index].kind, from: &reader, depth: 0)
                    }
                    try sink.take(index, value)
                }
            }
        } catch let failure as DecodeFailure {
            throw RecordCodingFailure(failure)
        }
        guard reader.isAtEnd else { throw RecordCodingFailure.malformed(reader, "\(reader.remaining) bytes follow the last property") }
    }

    /// A record's values: a top-level one's (`depth` 0) in either form, an embedded one's tagged.
    private func readFields(of schema: ObjectSchema, from reader: inout ByteReader, depth: Int) throws -> [RecordValue] {
        var values: [RecordValue] = []
        values.reserveCapacity(schema.properties.count)
        if depth == 0, let tagless = try RecordGrammar.readStart(from: &reader, of: schema) {
            for (index, property) in schema.properties.enumerated() {
                let tag = tagless.tag(at: index, in: reader.bytes)
                values.append(try read(property.kind, tag: tag, from: &reader, depth: depth, start: reader.position))
            }
            return values
        }
        if depth > 0 { try RecordGrammar.readValueCount(from: &reader, of: schema) }
        for property in schema.properties {
            values.append(try read(property.kind, from: &reader, depth: depth))
        }
        return values
    }

    /// `depth` counts the embedded records and containers this value is inside of
    /// (``RecordGrammar``'s depth rule).
    private func read(_ kind: PropertyKind, from reader: inout ByteReader, depth: Int) throws -> RecordValue {
        let start = reader.position
        if RecordGrammar.nestsTooDeep(depth) { throw RecordGrammar.nestingFailure(at: start, depth: depth) }
        return try read(kind, tag: try reader.byte(), from: &reader, depth: depth, start: start)
    }

    /// The value whose tag, read or implied by a tagless record, is `tagByte`: `reader` stands at
    /// its body, and the value starts at `start`.
    private func read(_ kind: PropertyKind, tag tagByte: UInt8, from reader: inout ByteReader, depth: Int, start: Int) throws -> RecordValue {
        guard let tag = ValueTag(rawValue: tagByte) else {
            throw RecordGrammar.unknownTagFailure(tagByte, at: start)
        }
        // Null is accepted for any kind here; the mapper reports it against a required property.
        if tag == .null { return .null }
        let expected = if case .optional(let wrapped) = kind { wrapped } else { kind }
        if let type = expected.storedValueType {
            guard type.isWritten(with: tagByte), let value = try singleValue(tag, from: &reader, start: start) else {
                throw mismatch(tag, kind, reader)
            }
            return value
        }
        switch (expected, tag) {
        case (.object(let typeName), .reference):
            let key = try PrimaryKey.read(from: &reader)
            return try resolve(typeName, key).map(RecordValue.object) ?? .null
        case (.object(let typeName), .embedded):
            guard let schema = schema(typeName) else { throw RecordCodingFailure(.unknownType(typeName)) }
            return .object(ManagedObject(objectSchema: schema, values: try readFields(of: schema, from: &reader, depth: depth + 1)))
        case (.list(let element), .list), (.set(let element), .list):
            let count = try reader.count()
            var elements: [RecordValue] = []
            elements.reserveCapacity(count)
            for _ in 0..<count {
                let value = try read(element, from: &reader, depth: depth + 1)
                // A dangling link inside a to-many relationship is dropped rather than read as null.
                if case .null = value, case .object = element { continue }
                elements.append(value)
            }
            return .list(List(elements))
        case (.dictionary(let element), .dictionary):
            let count = try reader.count()
            var entries: [String: RecordValue] = [:]
            entries.reserveCapacity(count)
            for _ in 0..<count {
                let key = try reader.lengthPrefixedString()
                let value = try read(element, from: &reader, depth: depth + 1)
                // As in a list: a `[String: T]` cannot hold `nil`, so a dangling link's entry is
                // left out, where reading it as null made the whole model unreadable.
                if case .null = value, case .object = element { continue }
                entries[key] = value
            }
            return .dictionary(entries)
        default:
            throw mismatch(tag, kind, reader)
        }
    }

    /// The value of a single-value tag, whose kind the caller has checked; nil for other tags.
    /// Inlined into ``read(_:from:depth:)``, which runs once per stored value.
    @inline(__always)
    private func singleValue(_ tag: ValueTag, from reader: inout ByteReader, start: Int) throws -> RecordValue? {
        switch tag {
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .int: return .int(ByteWriter.unzigzag(try reader.varint()))
        case .uint: return .uint(try reader.varint())
        case .float: return .float(Float(bitPattern: try reader.uint32()))
        case .double: return .double(Double(bitPattern: try reader.uint64()))
        case .string: return .string(try reader.lengthPrefixedString())
        case .data: return .data(Data(try reader.lengthPrefixedBytes()))
        case .date: return .date(try StoredValues.readDate(from: &reader, start: start))
        case .uuid:
            return .uuid(UUID(storedBytes: try reader.fixedBytes(16)))
        case .decimal: return .decimal(try StoredValues.readDecimal(from: &reader, start: start))
        case .url:
            let text = try reader.lengthPrefixedString()
            guard let value = URL(string: text) else {
                throw RecordCodingFailure.malformed(reader, "\(text.debugDescription) is not a URL")
            }
            return .url(value)
        case .null, .embedded, .reference, .list, .dictionary:
            return nil
        }
    }

    private func mismatch(_ tag: ValueTag, _ kind: PropertyKind, _ reader: ByteReader) -> RecordCodingFailure {
        RecordCodingFailure.malformed(reader, "a value tagged \(tag) where \(kind) was expected")
    }
}
