/// One decoded payload operation. Values are not copied: a put names where its bytes lie in the log.
enum DecodedOperation: Equatable {
    case put(type: String, key: StorageKey, valueOffset: UInt64, valueLength: Int)
    case delete(type: String, key: StorageKey)
    case deleteAll(type: String)
    case setSchema(type: String, schema: [UInt8])
    case setMetadata(key: String, value: [UInt8])
    case reserveCapacity(type: String, integers: Int, strings: Int, byteStrings: Int)
}

/// The payload encoding of a unit: a sequence of operations, each an opcode byte and its fields.
///
/// Type names appear once per file, in a `defineType` operation placed before the first use;
/// later operations refer to the type by its id (a varint). In a file of the packed format
/// (``LogHeader/packsEncodings(_:)``) consecutive puts of one type with integer keys are one
/// `putIntegers` operation: the type once, then per put its key as the step from the one before
/// and its value, or, for keys that count up by one, the first key alone: an auto-incremented
/// key costs nothing beyond its value's length instead of a put's five bytes. From format 7
/// (``LogHeader/packsBytePuts(_:)``) consecutive puts of one type whose keys are byte strings of
/// one length (UUIDs) are one `putByteKeys` operation: the type and the keys' length once, then
/// per put its key's bytes and its value, four bytes a put less than plain puts.
enum OperationCodec {
    /// The compact put encodings a writer uses: those its file's format has.
    struct Packing: Equatable, Sendable {
        /// Integer puts as `putIntegers` (format 3 on).
        var integers: Bool
        /// Puts of byte-string keys of one length as `putByteKeys` (format 7 on).
        var byteKeys: Bool

        init(format: UInt32) {
            integers = LogHeader.packsEncodings(format)
            byteKeys = LogHeader.packsBytePuts(format)
        }

        /// The encodings of the current format, which every new file and every compaction writes.
        static let current = Packing(format: LogHeader.currentVersion)
    }

    enum Opcode: UInt8 {
        case defineType = 1
        case put = 2
        case delete = 3
        case deleteAll = 4
        case setSchema = 5
        case setMetadata = 6
        case reserveCapacity = 7
        /// Opens a streamed commit's unit only (`StreamReference`): never an operation.
        case commitStream = 8
        /// Puts of one type with integer keys: type id, then count × 2 + 1 for keys that count
        /// up by one (then the first key, zigzagged, and per put its value) or count × 2 (then
        /// per put the zigzagged step, key − previous key − 1 with the previous of the first
        /// −1, wrapping, and its value); a count of at least 1, values as varint length + bytes.
        case putIntegers = 9
        /// Puts of one type whose keys are byte strings of one length: type id, count (at least
        /// 1), the keys' length, then per put its key's bytes and its value (varint length + bytes).
        case putByteKeys = 10
    }

    enum KeyTag: UInt8 {
        case integer = 0
        case string = 1
        case bytes = 2
    }

    /// Encodes `operations` as a payload that will start at `fileOffset` in the log, defining new
    /// types in `types` as they are first used, puts packed as `packing` says (the encodings the
    /// file's format has). Also returns the operations as recovery would decode them,
    /// so a commit updates the index exactly as a later reopen will.
    static func encode(
        _ operations: [WriteBatch.Operation], types: inout TypeTable, fileOffset: UInt64, packing: Packing
    ) -> (payload: [UInt8], decoded: [DecodedOperation]) {
        var writer = ByteWriter()
        let decoded = encode(operations, types: &types, fileOffset: fileOffset, packing: packing, into: &writer)
        return (writer.bytes, decoded)
    }

    /// Appends `operations` to `writer`, whose first byte will lie at `fileOffset` in the log (see
    /// ``encode(_:types:fileOffset:packing:)``).
    static func encode(
        _ operations: [WriteBatch.Operation], types: inout TypeTable, fileOffset: UInt64, packing: Packing, into writer: inout ByteWriter
    ) -> [DecodedOperation] {
        // Room for the values too: growing a payload of a mebibyte step by step copies it again and again.
        var size = 0
        for case .put(_, _, let value) in operations { size += value.count }
        writer.reserve(size + operations.count * 24)
        var decoded: [DecodedOperation] = []
        decoded.reserveCapacity(operations.count)
        // Operations of one type come in long runs: its id is looked up once per run.
        var last: (name: String, id: UInt32)?
        func typeID(_ name: String, writer: inout ByteWriter) -> UInt32 {
            if let last, last.name == name { return last.id }
            let id = Self.typeID(name, types: &types, writer: &writer)
            last = (name, id)
            return id
        }
        var index = operations.startIndex
        while index < operations.endIndex {
            let operation = operations[index]
            index += 1
            switch operation {
            case .put(let type, .integer(let key), let value) where packing.integers:
                let id = typeID(type, writer: &writer)
                // The run: a dense one while the keys count up by one from this put's; else this
                // put and the puts of the same type with an integer key after it, up to one whose
                // step would take more bytes than its key or that starts keys counting up (a new
                // run then starts, its first step the key's own bytes). A run is never longer
                // than plain puts.
                var end = index
                while end < operations.endIndex, Self.follows(operations[end], key &+ Int64(end - index), type) { end += 1 }
                let dense = end > index
                if !dense {
                    var last = key
                    while end < operations.endIndex, case .put(let next, .integer(let nextKey), _) = operations[end], next == type,
                          ByteWriter.varintSize(Self.step(to: nextKey, after: last)) <= ByteWriter.varintSize(ByteWriter.zigzag(nextKey)),
                          !(end + 1 < operations.endIndex && Self.follows(operations[end + 1], nextKey, type)) {
                        last = nextKey
                        end += 1
                    }
                }
                writer.byte(Opcode.putIntegers.rawValue)
                writer.varint(UInt64(id))
                writer.varint(UInt64(end - index + 1) << 1 | (dense ? 1 : 0))
                if dense { writer.varint(ByteWriter.zigzag(key)) }
                var previous: Int64 = -1
                func append(_ key: Int64, _ value: [UInt8]) {
                    if !dense { writer.varint(Self.step(to: key, after: previous)) }
                    previous = key
                    writer.varint(UInt64(value.count))
                    let offset = fileOffset + UInt64(writer.bytes.count)
                    writer.bytes.append(contentsOf: value)
                    decoded.append(.put(type: type, key: .integer(key), valueOffset: offset, valueLength: value.count))
                }
                append(key, value)
                while index < end {
                    if case .put(_, .integer(let key), let value) = operations[index] { append(key, value) }
                    index += 1
                }
            case .put(let type, .bytes(let key), let value) where packing.byteKeys:
                let id = typeID(type, writer: &writer)
                // The run: this put and the puts of the same type after it whose keys are byte
                // strings of this one's length. A run of one takes the bytes of a plain put, a
                // longer one four bytes a put less (its count's varint grows by a byte only past
                // 127 puts).
                var end = index
                while end < operations.endIndex, case .put(let next, .bytes(let nextKey), _) = operations[end],
                      nextKey.count == key.count, next == type {
                    end += 1
                }
                writer.byte(Opcode.putByteKeys.rawValue)
                writer.varint(UInt64(id))
                writer.varint(UInt64(end - index + 1))
                writer.varint(UInt64(key.count))
                func append(_ key: [UInt8], _ value: [UInt8]) {
                    writer.bytes.append(contentsOf: key)
                    writer.varint(UInt64(value.count))
                    let offset = fileOffset + UInt64(writer.bytes.count)
                    writer.bytes.append(contentsOf: value)
                    decoded.append(.put(type: type, key: .bytes(key), valueOffset: offset, valueLength: value.count))
                }
                append(key, value)
                while index < end {
                    if case .put(_, .bytes(let key), let value) = operations[index] { append(key, value) }
                    index += 1
                }
            case .put(let type, let key, let value):
                let id = typeID(type, writer: &writer)
                writer.byte(Opcode.put.rawValue)
                writer.varint(UInt64(id))
                encodeKey(key, into: &writer)
                writer.varint(UInt64(value.count))
                let offset = fileOffset + UInt64(writer.bytes.count)
                writer.bytes.append(contentsOf: value)
                decoded.append(.put(type: type, key: key, valueOffset: offset, valueLength: value.count))
            case .delete(let type, let key):
                let id = typeID(type, writer: &writer)
                writer.byte(Opcode.delete.rawValue)
                writer.varint(UInt64(id))
                encodeKey(key, into: &writer)
                decoded.append(.delete(type: type, key: key))
            case .deleteAll(let type):
                let id = typeID(type, writer: &writer)
                writer.byte(Opcode.deleteAll.rawValue)
                writer.varint(UInt64(id))
                decoded.append(.deleteAll(type: type))
            case .setSchema(let type, let schema):
                let id = typeID(type, writer: &writer)
                writer.byte(Opcode.setSchema.rawValue)
                writer.varint(UInt64(id))
                writer.lengthPrefixed(schema)
                decoded.append(.setSchema(type: type, schema: schema))
            case .setMetadata(let key, let value):
                writer.byte(Opcode.setMetadata.rawValue)
                writer.lengthPrefixed(key)
                writer.lengthPrefixed(value)
                decoded.append(.setMetadata(key: key, value: value))
            case .reserveCapacity(let type, let integers, let strings, let byteStrings):
                let id = typeID(type, writer: &writer)
                writer.byte(Opcode.reserveCapacity.rawValue)
                writer.varint(UInt64(id))
                writer.varint(UInt64(integers))
                writer.varint(UInt64(strings))
                writer.varint(UInt64(byteStrings))
                decoded.append(.reserveCapacity(type: type, integers: integers, strings: strings, byteStrings: byteStrings))
            }
        }
        return decoded
    }

    /// Whether `operation` is a put of `type` whose key is the one after `previous` (no wrap).
    @inline(__always)
    private static func follows(_ operation: WriteBatch.Operation, _ previous: Int64, _ type: String) -> Bool {
        guard case .put(let next, .integer(let key), _) = operation, previous != .max, key == previous + 1 else { return false }
        return next == type
    }

    /// How a run of integer puts writes `key` after `previous`: zigzagged, less one, so that
    /// consecutive keys write 0 (wrapping, so every key has one).
    @inline(__always)
    static func step(to key: Int64, after previous: Int64) -> UInt64 {
        ByteWriter.zigzag(key &- previous &- 1)
    }

    static func typeID(_ name: String, types: inout TypeTable, writer: inout ByteWriter) -> UInt32 {
        if let id = types.id(of: name) { return id }
        let id = types.define(name)
        writer.byte(Opcode.defineType.rawValue)
        writer.varint(UInt64(id))
        writer.lengthPrefixed(name)
        return id
    }

    static func encodeKey(_ key: StorageKey, into writer: inout ByteWriter) {
        switch key {
        case .integer(let value):
            writer.byte(KeyTag.integer.rawValue)
            writer.varint(ByteWriter.zigzag(value))
        case .string(let value):
            writer.byte(KeyTag.string.rawValue)
            writer.lengthPrefixed(value)
        case .bytes(let value):
            writer.byte(KeyTag.bytes.rawValue)
            writer.lengthPrefixed(value)
        }
    }

    /// The encoded size of `key`, for live-byte accounting.
    static func encodedSize(of key: StorageKey) -> Int {
        switch key {
        case .integer(let value):
            return 1 + ByteWriter.varintSize(ByteWriter.zigzag(value))
        case .string(let value):
            let count = value.utf8.count
            return 1 + ByteWriter.varintSize(UInt64(count)) + count
        case .bytes(let value):
            return 1 + ByteWriter.varintSize(UInt64(value.count)) + value.count
        }
    }

    /// Decodes the payload `bytes[range]`, which starts at `fileOffset` in the log, checking every
    /// field and type id. `types` gains the unit's definitions only if the whole payload decodes.
    static func decode(
        _ bytes: [UInt8], range: Range<Int>, fileOffset: UInt64, types: inout TypeTable
    ) throws(DecodeFailure) -> [DecodedOperation] {
        var reader = ByteReader(bytes, from: range.lowerBound, to: range.upperBound)
        var table = types
        var operations: [DecodedOperation] = []
        func typeName(_ reader: inout ByteReader) throws(DecodeFailure) -> String {
            let start = reader.position
            let id = try reader.varint()
            guard let name = table.name(of: id) else {
                throw DecodeFailure(offset: start, reason: "type id \(id) is used before it is defined")
            }
            return name
        }
        while !reader.isAtEnd {
            let start = reader.position
            let code = try reader.byte()
            guard let opcode = Opcode(rawValue: code) else {
                throw DecodeFailure(offset: start, reason: "unknown operation code \(code)")
            }
            switch opcode {
            case .defineType:
                let id = try reader.varint()
                let name = try reader.lengthPrefixedString()
                guard id == UInt64(table.count) else {
                    throw DecodeFailure(offset: start, reason: "type '\(name)' is defined with id \(id) where id \(table.count) comes next")
                }
                guard table.id(of: name) == nil else {
                    throw DecodeFailure(offset: start, reason: "type '\(name)' is defined twice")
                }
                table.define(name)
            case .put:
                let type = try typeName(&reader)
                let key = try decodeKey(&reader)
                let value = try reader.lengthPrefixedRange()
                let offset = fileOffset + UInt64(value.lowerBound - range.lowerBound)
                operations.append(.put(type: type, key: key, valueOffset: offset, valueLength: value.count))
            case .delete:
                let type = try typeName(&reader)
                operations.append(.delete(type: type, key: try decodeKey(&reader)))
            case .deleteAll:
                operations.append(.deleteAll(type: try typeName(&reader)))
            case .setSchema:
                let type = try typeName(&reader)
                operations.append(.setSchema(type: type, schema: try reader.lengthPrefixedBytes()))
            case .setMetadata:
                let key = try reader.lengthPrefixedString()
                operations.append(.setMetadata(key: key, value: try reader.lengthPrefixedBytes()))
            case .reserveCapacity:
                let type = try typeName(&reader)
                // Clamped to Int32 here and to the file's size when applied: a hint never
                // makes a crafted file allocate more than its own contents justify.
                let integers = Int(min(try reader.varint(), UInt64(Int32.max)))
                let strings = Int(min(try reader.varint(), UInt64(Int32.max)))
                let byteStrings = Int(min(try reader.varint(), UInt64(Int32.max)))
                operations.append(.reserveCapacity(type: type, integers: integers, strings: strings, byteStrings: byteStrings))
            case .putIntegers:
                let type = try typeName(&reader)
                let countStart = reader.position
                let counted = try reader.varint()
                let count = counted >> 1
                let dense = counted & 1 == 1
                // Each put takes at least one byte, two with its step: a count beyond that is no writer's.
                guard count > 0, count <= UInt64(reader.remaining / (dense ? 1 : 2)) else {
                    throw DecodeFailure(offset: countStart, reason: "a run of \(count) puts does not fit the \(reader.remaining) bytes left")
                }
                var previous: Int64 = -1
                if dense {
                    let first = ByteWriter.unzigzag(try reader.varint())
                    guard !first.addingReportingOverflow(Int64(count - 1)).overflow else {
                        throw DecodeFailure(offset: countStart, reason: "a run of \(count) keys counting up from \(first) passes the largest integer")
                    }
                    previous = first &- 1
                }
                for _ in 0..<count {
                    // Dense keys count up; others are the inverse of `step(to:after:)`.
                    let key = dense ? previous &+ 1 : previous &+ 1 &+ ByteWriter.unzigzag(try reader.varint())
                    previous = key
                    let value = try reader.lengthPrefixedRange()
                    let offset = fileOffset + UInt64(value.lowerBound - range.lowerBound)
                    operations.append(.put(type: type, key: .integer(key), valueOffset: offset, valueLength: value.count))
                }
            case .putByteKeys:
                let type = try typeName(&reader)
                let countStart = reader.position
                let count = try reader.varint()
                let length = try reader.varint()
                // Each put takes its key and at least one byte for its value's length: a count
                // beyond that, or a key longer than the bytes left, is no writer's.
                guard count > 0, length < UInt64(reader.remaining), count <= UInt64(reader.remaining) / (length + 1) else {
                    throw DecodeFailure(
                        offset: countStart, reason: "a run of \(count) puts of \(length)-byte keys does not fit the \(reader.remaining) bytes left")
                }
                for _ in 0..<count {
                    let key = Array(bytes[try reader.range(count: Int(length))])
                    let value = try reader.lengthPrefixedRange()
                    let offset = fileOffset + UInt64(value.lowerBound - range.lowerBound)
                    operations.append(.put(type: type, key: .bytes(key), valueOffset: offset, valueLength: value.count))
                }
            case .commitStream:
                throw DecodeFailure(offset: start, reason: "a streamed commit's reference lies among operations, not at the start of a commit unit")
            }
        }
        types = table
        return operations
    }

    static func decodeKey(_ reader: inout ByteReader) throws(DecodeFailure) -> StorageKey {
        let start = reader.position
        let tag = try reader.byte()
        switch KeyTag(rawValue: tag) {
        case .integer: return .integer(ByteWriter.unzigzag(try reader.varint()))
        case .string: return .string(try reader.lengthPrefixedString())
        case .bytes: return .bytes(try reader.lengthPrefixedBytes())
        case nil: throw DecodeFailure(offset: start, reason: "unknown key tag \(tag)")
        }
    }
}
