import Foundation
import MirrorStoreEngine

/// Primary-key values as the engine keys records: integers, strings, and UUIDs as their 16 bytes.
enum PrimaryKey {
    static func storageKey(for value: RecordValue) -> StorageKey? {
        switch value {
        case .int(let value): .integer(value)
        // Unsigned keys keep their bits; no UInt64 key collides with another.
        case .uint(let value): .integer(Int64(bitPattern: value))
        case .string(let value): .string(value)
        case .uuid(let value): .bytes(withUnsafeBytes(of: value.uuid) { Array($0) })
        default: nil
        }
    }

    /// The key of a record whose schema has a primary key, or `nil` when it has none.
    ///
    /// - Throws: ``StoreError`` when the key's value is not an integer, string or UUID (a record
    ///   built or changed by hand; models' key types are checked when their plan is built).
    static func storageKey(of record: ManagedObject) throws(StoreError) -> StorageKey? {
        // By position: a lookup by name hashes it, once per object saved.
        guard let position = record.objectSchema.primaryKeyPosition, record.values.indices.contains(position) else { return nil }
        let value = record.values[position]
        guard let key = storageKey(for: value) else {
            let expected = record.objectSchema.properties[position].kind.description
            throw StoreError(.primaryKeyMismatch(typeName: record.objectSchema.typeName, expected: expected, found: value.description))
        }
        return key
    }

    /// Calls `body` with the type name and key of every record `record` links to by key, directly
    /// or through its embedded records and containers (not through the linked records).
    static func forEachLink(in record: ManagedObject, _ body: (String, StorageKey) throws -> Void) throws {
        var reached: [ManagedObject] = []
        for value in record.values { value.appendLinkedRecords(to: &reached) }
        while let linked = reached.popLast() {
            if let key = try storageKey(of: linked) {
                try body(linked.objectSchema.typeName, key)
            } else {
                for value in linked.values { value.appendLinkedRecords(to: &reached) }
            }
        }
    }

    /// A key as errors name it: `StorageKey`'s description, but the key of a `UInt` or `UInt64`
    /// primary key as the value it was made from (`18446744073709551615`, not the `-1` its bits
    /// read as signed), as the PostgreSQL backend, which keeps the value itself, names it.
    /// `schema` is the keyed type's; without it the key reads as stored.
    static func text(_ key: StorageKey, of schema: ObjectSchema?) -> String {
        guard case .integer(let bits) = key, bits < 0, let position = schema?.primaryKeyPosition,
              let kind = schema?.properties[position].kind else { return key.description }
        switch kind {
        case .uint, .uint64: return String(UInt64(bitPattern: bits))
        default: return key.description
        }
    }

    /// The record value a key was made from, as far as the key tells: integers as `.int` (an
    /// unsigned key has the same bits), 16 bytes as a UUID.
    static func recordValue(of key: StorageKey) -> RecordValue {
        switch key {
        case .integer(let value): .int(value)
        case .string(let value): .string(value)
        case .bytes(let bytes) where bytes.count == 16:
            .uuid(UUID(storedBytes: bytes))
        case .bytes(let bytes): .data(Data(bytes))
        }
    }

    static func write(_ key: StorageKey, into writer: inout ByteWriter) {
        switch key {
        case .integer(let value):
            writer.byte(0)
            writer.varint(ByteWriter.zigzag(value))
        case .string(let value):
            writer.byte(1)
            writer.lengthPrefixed(value)
        case .bytes(let value):
            writer.byte(2)
            writer.lengthPrefixed(value)
        }
    }

    static func read(from reader: inout ByteReader) throws(DecodeFailure) -> StorageKey {
        let start = reader.position
        switch try reader.byte() {
        case 0: return .integer(ByteWriter.unzigzag(try reader.varint()))
        case 1: return .string(try reader.lengthPrefixedString())
        case 2: return .bytes(try reader.lengthPrefixedBytes())
        case let tag: throw keyTagFailure(tag, at: start)
        }
    }

    /// Moves past a key as ``write(_:into:)`` writes it, without making it.
    static func skip(from reader: inout ByteReader) throws(DecodeFailure) {
        let start = reader.position
        switch try reader.byte() {
        case 0: _ = try reader.varint()
        case 1, 2: _ = try reader.lengthPrefixedRange()
        case let tag: throw keyTagFailure(tag, at: start)
        }
    }

    private static func keyTagFailure(_ tag: UInt8, at offset: Int) -> DecodeFailure {
        DecodeFailure(offset: offset, reason: "unknown key tag \(tag)")
    }
}

extension PrimaryKey {
    /// Throws ``StoreError/Kind/corruptedRecord`` when the primary-key value inside `bytes`, a
    /// record of `schema`, is not `key`, the key they are stored under: a record read by key must
    /// be the object with that key, and only a crafted file stores another. Skips the values before
    /// the key without decoding them; bytes that go wrong before it are left to the decoder, which
    /// says where.
    static func checkStored(_ bytes: [UInt8], under key: StorageKey, schema: ObjectSchema) throws(StoreError) {
        guard let position = schema.primaryKeyPosition else { return }
        var reader = ByteReader(bytes)
        let found: String
        do throws(DecodeFailure) {
            let tag: UInt8
            if let tagless = try RecordGrammar.readStart(from: &reader, of: schema) {
                for index in 0..<position { try RecordGrammar.skipBody(ofTag: tagless.tag(at: index, in: bytes), from: &reader) }
                tag = tagless.tag(at: position, in: bytes)
            } else {
                for _ in 0..<position { try RecordGrammar.skipValue(from: &reader) }
                tag = try reader.byte()
            }
            switch (tag, key) {
            case (ValueTag.int.rawValue, .integer(let expected)):
                let value = ByteWriter.unzigzag(try reader.varint())
                if value == expected { return }
                found = String(value)
            case (ValueTag.uint.rawValue, .integer(let expected)):
                // Unsigned keys keep their bits (`storageKey(for:)`).
                let value = try reader.varint()
                if Int64(bitPattern: value) == expected { return }
                found = String(value)
            case (ValueTag.string.rawValue, .string(let expected)):
                let start = reader.position
                let range = try reader.lengthPrefixedRange()
                // The same bytes, without making a string; else a string equal to the key in
                // another spelling (`String` compares canonical equivalents as equal).
                var text = expected
                if text.withUTF8({ $0.elementsEqual(bytes[range]) }) { return }
                reader.rewind(to: start)
                let value = try reader.lengthPrefixedString()
                if value == expected { return }
                found = value.debugDescription
            case (ValueTag.uuid.rawValue, .bytes(let expected)):
                let start = reader.position
                try reader.skipBytes(16)
                if bytes[start..<(start + 16)].elementsEqual(expected) { return }
                found = UUID(storedBytes: Array(bytes[start..<(start + 16)])).uuidString
            default:
                found = ValueTag(rawValue: tag).map { "a value tagged \($0)" } ?? "a value with the unknown tag \(tag)"
            }
        } catch {
            return
        }
        throw StoreError(.corruptedRecord(
            typeName: schema.typeName, key: text(key, of: schema),
            reason: "its primary key \(schema.properties[position].name) holds \(found), not the key it is stored under"))
    }
}
