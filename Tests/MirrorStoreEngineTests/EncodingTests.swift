import Testing
@testable import MirrorStoreEngine
import TestSupport

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
        let (payload, decoded) = OperationCodec.encode(batch.operations, types: &writeTypes, fileOffset: 100, packing: .current)
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

    /// A crafted capacity hint can neither create a type nor reserve more than the file could fill.
    @Test func capacityHintsAreClampedAndInvisible() throws {
        var types = TypeTable()
        let hint = WriteBatch.Operation.reserveCapacity(type: "T", integers: Int(Int32.max), strings: Int(Int32.max), byteStrings: 5)
        let (payload, _) = OperationCodec.encode([hint], types: &types, fileOffset: 48, packing: .current)
        let log = MemoryLog(LogHeader().encoded() + LogFrame.encode(sequence: 1, payload: payload))
        let recovered = try Recovery.scan(log)
        #expect(recovered.problem == nil)
        #expect(recovered.index.types.isEmpty)
        var index = KeyIndex()
        try index.apply([.reserveCapacity(type: "T", integers: 1_000, strings: 1_000, byteStrings: 0),
                     .put(type: "T", key: .integer(1), valueOffset: 0, valueLength: 0)], capacityLimit: 100)
        let objects = try #require(index.types["T"])
        #expect(objects.integers.capacity >= 100 && objects.integers.capacity < 1_000)
        #expect(objects.strings.capacity == 0)
    }
    /// `UTF8Text` makes ASCII without the standard library's second check: on random bytes
    /// (ASCII, other valid UTF-8, and damaged sequences), it gives what the validating
    /// initializer gives, nil included, and the text's bytes are the bytes read.
    @Test func storedTextMatchesTheValidatingInitializer() {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x7E47))
        let pieces: [[UInt8]] = [Array("a".utf8), Array("é".utf8), Array("€".utf8), Array("𝄞".utf8), [0x80], [0xC3], [0xFF], [0xED, 0xA0, 0x80], [0]]
        for round in 0..<2_000 {
            var bytes: [UInt8] = []
            let length = Int.random(in: 0...40, using: &random)
            for _ in 0..<length {
                if round % 2 == 0 || random.chance(80) {
                    bytes.append(UInt8.random(in: 0...0x7F, using: &random))
                } else {
                    bytes += random.pick(pieces)
                }
            }
            let text = bytes.withUnsafeBufferPointer { UTF8Text.string($0) }
            #expect(text == String(validating: bytes, as: UTF8.self), "bytes \(bytes)")
            if let text { #expect(Array(text.utf8) == bytes) }
        }
    }

    /// The word-at-a-time ASCII check (`UTF8Text.isASCII`) agrees with a byte-by-byte one on
    /// buffers of 0 to 600 bytes, each in an allocation of its own size, ASCII or with one or a few bytes of 0x80 and over anywhere, the first and the last
    /// 16 included; and longer text, ASCII, other valid UTF-8 or damaged, reads as the validating
    /// initializer reads it.
    @Test func asciiCheckMatchesAByteByByteCheck() {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0xA5C1))
        for round in 0..<3_000 {
            let count = round < 601 ? round : Int.random(in: 0...600, using: &random)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...0x7F, using: &random) }
            if count > 0, round % 4 != 0 {
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let edge = Int.random(in: 0..<min(count, 16), using: &random)
                    let at = random.chance(50) ? (random.chance(50) ? edge : count - 1 - edge) : Int.random(in: 0..<count, using: &random)
                    bytes[at] = UInt8.random(in: 0x80...0xFF, using: &random)
                }
            }
            let expected = bytes.allSatisfy { $0 < 0x80 }
            // An allocation of exactly the bytes, so that the address sanitizer sees a load past them.
            let exact = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 1)
            defer { exact.deallocate() }
            bytes.withUnsafeBytes { exact.copyMemory(from: $0) }
            #expect(UTF8Text.isASCII(UnsafeRawBufferPointer(exact)) == expected, "bytes \(bytes)")
            let text = UTF8Text.string(UnsafeBufferPointer(exact.bindMemory(to: UInt8.self)))
            #expect(text == String(validating: bytes, as: UTF8.self), "bytes \(bytes)")
            if let text { #expect(Array(text.utf8) == bytes) }
        }
        let pieces: [[UInt8]] = [Array("é".utf8), Array("€".utf8), Array("𝄞".utf8), [0x80], [0xC3], [0xFF], [0xED, 0xA0, 0x80]]
        for _ in 0..<300 {
            var bytes = (0..<Int.random(in: 16...600, using: &random)).map { _ in UInt8.random(in: 0...0x7F, using: &random) }
            bytes.insert(contentsOf: random.pick(pieces), at: Int.random(in: 0...bytes.count, using: &random))
            let text = bytes.withUnsafeBufferPointer { UTF8Text.string($0) }
            #expect(text == String(validating: bytes, as: UTF8.self), "bytes \(bytes)")
            if let text { #expect(Array(text.utf8) == bytes) }
        }
    }

    /// Short ASCII text is made from its bits (`SmallASCII`): on this platform the check against
    /// the standard library's own strings passes, and every string of 0 to 15 bytes made so, at
    /// every position of a buffer (its last bytes included, so no load may reach past them), is
    /// the standard library's string of those bytes, bit for bit, equal and hashing alike; a byte
    /// that is not ASCII leaves it to the validating initializer.
    @Test func shortTextIsTheStandardLibrarysSmallString() {
        #if _pointerBitWidth(_64) && _endian(little)
        #expect(SmallASCII.isConfirmed)
        #endif
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x5A11))
        for round in 0..<60 {
            let buffer: [UInt8] = (0..<24).map { _ in round % 3 == 0 ? random.pick([0, 0x7F, 0x41, 0x20]) : UInt8.random(in: 0...0x7F, using: &random) }
            for count in 0...SmallASCII.capacity {
                for start in 0...(buffer.count - count) {
                    let bytes = Array(buffer[start..<(start + count)])
                    // Copied into storage of its own size, so that its end is the allocation's end.
                    let text = bytes.withUnsafeBufferPointer { UTF8Text.string($0) }
                    let expected = String(decoding: bytes, as: UTF8.self)
                    #expect(text == expected, "bytes \(bytes)")
                    #expect(text.map { Array($0.utf8) } == bytes)
                    #expect(text?.hashValue == expected.hashValue)
                    let made = text.map { text in withUnsafeBytes(of: text) { Array($0) } }
                    #expect(made == withUnsafeBytes(of: expected) { Array($0) }, "bytes \(bytes)")
                }
            }
            var other = Array(buffer.prefix(Int.random(in: 1...SmallASCII.capacity, using: &random)))
            other[Int.random(in: 0..<other.count, using: &random)] = random.pick([0x80, 0xC3, 0xE9, 0xFF])
            #expect(other.withUnsafeBufferPointer { UTF8Text.string($0) } == String(validating: other, as: UTF8.self), "bytes \(other)")
        }
    }

    /// The proof of the small-string check taken once (`UTF8Text.smallStrings`), and none at all,
    /// give every string `UTF8Text.string(_:)` gives: ASCII and not, short and long.
    @Test func takenSmallStringCheckGivesTheSameStrings() {
        #if _pointerBitWidth(_64) && _endian(little)
        #expect(UTF8Text.smallStrings != nil)
        #endif
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x5A12))
        for round in 0..<400 {
            var bytes = (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...0x7F, using: &random) }
            if round % 4 == 0, !bytes.isEmpty { bytes[Int.random(in: 0..<bytes.count, using: &random)] = random.pick([0x80, 0xC3, 0xE9, 0xFF]) }
            let expected = String(validating: bytes, as: UTF8.self)
            bytes.withUnsafeBufferPointer { buffer in
                #expect(UTF8Text.string(buffer) == expected, "bytes \(bytes)")
                #expect(UTF8Text.string(buffer, smallStrings: UTF8Text.smallStrings) == expected, "bytes \(bytes)")
                #expect(UTF8Text.string(buffer, smallStrings: nil) == expected, "bytes \(bytes)")
            }
        }
    }
}
