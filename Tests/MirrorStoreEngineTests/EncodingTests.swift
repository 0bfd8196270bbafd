import Testing
@testable import MirrorStoreEngine

@Suite struct EncodingTests {
    @Test func varintsRoundTrip() throws {
        let values: [UInt64] = [0, 1, 127, 128, 300, 16_383, 16_384, UInt64(UInt32.max), UInt64.max - 1, UInt64.max]
        var writer = ByteWriter()
        for value in values { writer.varint(value) }
        var reader = ByteReader(writer.bytes)
        for value in values {
            #expect(try reader.varint() == value)
            #expect(ByteWriter.varintSize(value) > 0)
        }
        #expect(reader.isAtEnd)
    }

    @Test func zigzagRoundTrips() {
        for value: Int64 in [0, 1, -1, 63, -64, .max, .min] {
            #expect(ByteWriter.unzigzag(ByteWriter.zigzag(value)) == value)
        }
    }

    @Test func overlongAndTruncatedVarintsThrow() {
        var overflow = ByteReader([UInt8](repeating: 0xFF, count: 10) + [0x01])
        #expect(throws: DecodeFailure.self) { try overflow.varint() }
        var truncated = ByteReader([0x80, 0x80])
        #expect(throws: DecodeFailure.self) { try truncated.varint() }
    }

    @Test func operationsRoundTripThroughThePayload() throws {
        var batch = WriteBatch()
        batch.put(type: "Hero", key: .integer(-5), value: [1, 2, 3])
        batch.put(type: "Hero", key: .string("é"), value: [])
        batch.put(type: "Tag", key: .bytes([0, 255]), value: [9])
        batch.delete(type: "Hero", key: .integer(-5))
        batch.deleteAll(type: "Tag")
        batch.setSchema(type: "Hero", schema: [7])
        batch.setMetadata(key: "version", value: [2])
        var writeTypes = TypeTable()
        let (payload, decoded) = OperationCodec.encode(batch.operations, types: &writeTypes, fileOffset: 100)
        var readTypes = TypeTable()
        let reread = try OperationCodec.decode(payload, range: 0..<payload.count, fileOffset: 100, types: &readTypes)
        #expect(reread == decoded)
        #expect(readTypes.names == ["Hero", "Tag"])
        // Type names are written once, not per record.
        #expect(payload.count < 60)
    }

    @Test func undefinedTypeIdsAreRejected() {
        var types = TypeTable()
        let payload: [UInt8] = [OperationCodec.Opcode.deleteAll.rawValue, 3]
        #expect(throws: DecodeFailure(offset: 1, reason: "type id 3 is used before it is defined")) {
            try OperationCodec.decode(payload, range: 0..<payload.count, fileOffset: 0, types: &types)
        }
        #expect(types.count == 0)
    }
}
