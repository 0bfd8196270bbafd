/// Little-endian integers and LEB128 varints appended to a byte array.
package struct ByteWriter {
    package init() {}

    package var bytes: [UInt8] = []

    package mutating func reserve(_ count: Int) {
        bytes.reserveCapacity(bytes.count + count)
    }

    package mutating func byte(_ value: UInt8) {
        bytes.append(value)
    }

    // Fixed-width integers are appended in one piece: byte by byte, each append checks the
    // array's uniqueness and capacity again.
    package mutating func uint32(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func uint64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// A varint length followed by the bytes.
    package mutating func lengthPrefixed(_ value: [UInt8]) {
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    package mutating func lengthPrefixed(_ value: String) {
        var text = value
        text.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    package static func varintSize(_ value: UInt64) -> Int {
        var size = 1
        var rest = value >> 7
        while rest != 0 {
            size += 1
            rest >>= 7
        }
        return size
    }

    package static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    package static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }
}

/// Why a byte range could not be decoded, with the offset (relative to the reader's buffer) of the bad byte.
package struct DecodeFailure: Error, Equatable {
    package var offset: Int
    package var reason: String

    package init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }
}

/// Bounds-checked reading from a byte array: every read past `end` throws instead of trapping.
package struct ByteReader {
    package let bytes: [UInt8]
    package private(set) var position: Int
    package let end: Int

    package init(_ bytes: [UInt8], from start: Int = 0, to end: Int? = nil) {
        self.bytes = bytes
        self.position = start
        self.end = min(end ?? bytes.count, bytes.count)
    }

    package var isAtEnd: Bool { position >= end }

    /// Moves back to `earlier`, a position this reader was at, to read the same bytes again.
    package mutating func rewind(to earlier: Int) {
        position = min(max(earlier, 0), position)
    }
    package var remaining: Int { end - position }

    package mutating func byte() throws(DecodeFailure) -> UInt8 {
        guard position < end else { throw DecodeFailure(offset: position, reason: "the data ends in the middle of a field") }
        let value = bytes[position]
        position += 1
        return value
    }

    package mutating func uint32() throws(DecodeFailure) -> UInt32 {
        guard remaining >= 4 else { throw DecodeFailure(offset: position, reason: "the data ends in the middle of a 32-bit field") }
        var value: UInt32 = 0
        for index in 0..<4 {
            value |= UInt32(bytes[position + index]) << UInt32(8 * index)
        }
        position += 4
        return value
    }

    package mutating func uint64() throws(DecodeFailure) -> UInt64 {
        guard remaining >= 8 else { throw DecodeFailure(offset: position, reason: "the data ends in the middle of a 64-bit field") }
        var value: UInt64 = 0
        for index in 0..<8 {
            value |= UInt64(bytes[position + index]) << UInt64(8 * index)
        }
        position += 8
        return value
    }

    package mutating func varint() throws(DecodeFailure) -> UInt64 {
        let start = position
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < end else { throw DecodeFailure(offset: start, reason: "a varint runs past the end of its unit") }
            let byte = bytes[position]
            position += 1
            guard shift < 63 || (shift == 63 && byte <= 1) else {
                throw DecodeFailure(offset: start, reason: "a varint overflows 64 bits")
            }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    /// The range of the next `count` bytes, skipped.
    package mutating func range(count: Int) throws(DecodeFailure) -> Range<Int> {
        guard count >= 0, count <= remaining else {
            throw DecodeFailure(offset: position, reason: "\(count) bytes run past the end of their unit")
        }
        let range = position..<(position + count)
        position = range.upperBound
        return range
    }

    /// Reads a varint length and returns the range of that many following bytes, skipping them.
    package mutating func lengthPrefixedRange() throws(DecodeFailure) -> Range<Int> {
        let start = position
        let length = try varint()
        guard length <= UInt64(remaining) else {
            throw DecodeFailure(offset: start, reason: "a length of \(length) bytes runs past the end of its unit")
        }
        let range = position..<(position + Int(length))
        position = range.upperBound
        return range
    }

    package mutating func lengthPrefixedBytes() throws(DecodeFailure) -> [UInt8] {
        Array(bytes[try lengthPrefixedRange()])
    }

    package mutating func lengthPrefixedString() throws(DecodeFailure) -> String {
        let start = position
        let range = try lengthPrefixedRange()
        let decoded = bytes.withUnsafeBufferPointer { buffer -> String? in
            UTF8Text.string(UnsafeBufferPointer(rebasing: buffer[range]))
        }
        guard let text = decoded else {
            throw DecodeFailure(offset: start, reason: "a string is not valid UTF-8")
        }
        return text
    }
}
