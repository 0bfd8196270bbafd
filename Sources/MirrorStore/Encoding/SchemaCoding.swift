import MirrorStoreEngine

/// Object schemas as bytes, so a store file describes its own records.
enum SchemaCoding {
    static let version: UInt8 = 1

    static func encode(_ schema: ObjectSchema) -> [UInt8] {
        var writer = ByteWriter()
        writer.byte(version)
        writer.lengthPrefixed(schema.typeName)
        writer.varint(UInt64(schema.properties.count))
        for property in schema.properties {
            writer.lengthPrefixed(property.name)
            write(property.kind, into: &writer)
            writer.byte((property.isPrimaryKey ? 1 : 0) | (property.isIndexed ? 2 : 0))
        }
        writer.varint(UInt64(schema.ignoredProperties.count))
        for name in schema.ignoredProperties {
            writer.lengthPrefixed(name)
        }
        return writer.bytes
    }

    static func decode(_ bytes: [UInt8]) throws(DecodeFailure) -> ObjectSchema {
        var reader = ByteReader(bytes)
        let start = reader.position
        let found = try reader.byte()
        guard found == version else { throw DecodeFailure(offset: start, reason: "schema encoding version \(found) is not \(version)") }
        let typeName = try reader.lengthPrefixedString()
        var properties: [ObjectSchema.Property] = []
        for _ in 0..<(try reader.count()) {
            let name = try reader.lengthPrefixedString()
            let kind = try readKind(from: &reader, depth: 0)
            let flagsOffset = reader.position
            let flags = try reader.byte()
            guard flags & ~3 == 0 else {
                throw DecodeFailure(offset: flagsOffset, reason: "unknown property flags \(flags)")
            }
            properties.append(ObjectSchema.Property(name: name, kind: kind, isPrimaryKey: flags & 1 != 0, isIndexed: flags & 2 != 0))
        }
        var ignored: [String] = []
        for _ in 0..<(try reader.count()) {
            ignored.append(try reader.lengthPrefixedString())
        }
        guard reader.isAtEnd else { throw DecodeFailure(offset: reader.position, reason: "bytes follow the schema") }
        return ObjectSchema(typeName: typeName, properties: properties, ignoredProperties: ignored)
    }

    private static func write(_ kind: PropertyKind, into writer: inout ByteWriter) {
        // A single-value kind is its stored value type's byte; the others are 100 and up.
        if let type = kind.storedValueType {
            writer.byte(type.rawValue)
            return
        }
        switch kind {
        case .object(let typeName):
            writer.byte(100)
            writer.lengthPrefixed(typeName)
        case .list(let inner):
            writer.byte(101)
            write(inner, into: &writer)
        case .set(let inner):
            writer.byte(102)
            write(inner, into: &writer)
        case .dictionary(let inner):
            writer.byte(103)
            write(inner, into: &writer)
        case .optional(let inner):
            writer.byte(104)
            write(inner, into: &writer)
        default:
            break
        }
    }

    /// Kinds nest as deep as Swift types do; ``RecordGrammar``'s depth rule stops damaged bytes
    /// from recursing forever, each container and optional of a kind counting one level.
    private static func readKind(from reader: inout ByteReader, depth: Int) throws(DecodeFailure) -> PropertyKind {
        let start = reader.position
        if RecordGrammar.nestsTooDeep(depth) { throw RecordGrammar.nestingFailure(at: start, depth: depth) }
        let tag = try reader.byte()
        if let type = StoredValueType(rawValue: tag) { return type.kind }
        switch tag {
        case 100: return .object(typeName: try reader.lengthPrefixedString())
        case 101: return .list(try readKind(from: &reader, depth: depth + 1))
        case 102: return .set(try readKind(from: &reader, depth: depth + 1))
        case 103: return .dictionary(try readKind(from: &reader, depth: depth + 1))
        case 104: return .optional(try readKind(from: &reader, depth: depth + 1))
        default: throw DecodeFailure(offset: start, reason: "unknown property kind tag \(tag)")
        }
    }
}
