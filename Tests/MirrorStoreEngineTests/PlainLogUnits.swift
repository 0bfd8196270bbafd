@testable import MirrorStoreEngine

/// The units of a plain (unencrypted) log, walked by their frames, for tests that look at what a
/// writer wrote.
enum PlainLogUnits {
    /// A unit's payload, and what kind of unit it is.
    struct Unit {
        let payload: Range<Int>
        /// An index unit's kind (its payload's first byte); `nil` for a commit.
        let indexKind: UInt8?

        /// The frame and payload.
        var size: Int { LogFrame.headerSize + payload.count }
    }

    /// Every unit of the log `bytes`, from the end of the header region to the last whole unit.
    static func units(of bytes: [UInt8]) -> [Unit] {
        var units: [Unit] = []
        var offset = LogHeader.regionSize
        while offset + LogFrame.headerSize < bytes.count {
            let field = littleEndian(bytes, at: offset)
            let payload = (offset + LogFrame.headerSize)..<(offset + LogFrame.headerSize + (field & 0x7FFF_FFFF))
            guard payload.upperBound <= bytes.count else { break }
            let isIndexUnit = field & 0x8000_0000 != 0 && !payload.isEmpty
            units.append(Unit(payload: payload, indexKind: isIndexUnit ? bytes[payload.lowerBound] : nil))
            offset = payload.upperBound
        }
        return units
    }

    /// The layout byte of every block of every key-run unit of the log `bytes`.
    static func keyRunBlockLayouts(of bytes: [UInt8]) -> [UInt8] {
        keyRunBlocks(of: bytes).map(\.layout)
    }

    /// Every block of every key-run unit of the log `bytes`: its layout and where it lies.
    static func keyRunBlocks(of bytes: [UInt8]) -> [(layout: UInt8, range: Range<Int>)] {
        var blocks: [(layout: UInt8, range: Range<Int>)] = []
        for unit in units(of: bytes) where unit.indexKind == IndexUnit.Kind.keyRun.rawValue {
            var block = unit.payload.lowerBound + 1
            while block + 5 <= unit.payload.upperBound {
                let end = min(unit.payload.upperBound, block + 4 + littleEndian(bytes, at: block) + RunBlockReader.checksumSize)
                blocks.append((bytes[block + 4], block..<end))
                block = end
            }
        }
        return blocks
    }

    /// The opcode of every operation of every commit unit and stream piece of the log `bytes`,
    /// with the frame of the unit it lies in, found by walking the operations as the decoder
    /// does (an opcode's byte value may also be a value's); a unit's walk stops where its bytes
    /// stop making sense.
    static func operations(of bytes: [UInt8]) -> [(opcode: UInt8, unit: Range<Int>)] {
        var found: [(opcode: UInt8, unit: Range<Int>)] = []
        for unit in units(of: bytes) where unit.indexKind == nil || unit.indexKind == IndexUnit.Kind.streamPiece.rawValue {
            let frame = (unit.payload.lowerBound - LogFrame.headerSize)..<unit.payload.upperBound
            var reader = ByteReader(bytes, from: unit.payload.lowerBound, to: unit.payload.upperBound)
            for code in (try? operationCodes(&reader, piece: unit.indexKind != nil)) ?? [] { found.append((code, frame)) }
        }
        return found
    }

    /// The opcodes of the operations `reader` holds, past a piece's header when `piece`.
    private static func operationCodes(_ reader: inout ByteReader, piece: Bool) throws(DecodeFailure) -> [UInt8] {
        var codes: [UInt8] = []
        if piece {
            _ = try reader.byte()
            _ = try reader.varint()
            _ = try reader.varint()
        }
        while !reader.isAtEnd {
            let code = try reader.byte()
            codes.append(code)
            switch OperationCodec.Opcode(rawValue: code) {
            case .defineType, .setSchema: _ = try reader.varint(); _ = try reader.lengthPrefixedRange()
            case .put: _ = try reader.varint(); _ = try OperationCodec.decodeKey(&reader); _ = try reader.lengthPrefixedRange()
            case .delete: _ = try reader.varint(); _ = try OperationCodec.decodeKey(&reader)
            case .deleteAll: _ = try reader.varint()
            case .setMetadata: _ = try reader.lengthPrefixedRange(); _ = try reader.lengthPrefixedRange()
            case .reserveCapacity: for _ in 0..<4 { _ = try reader.varint() }
            case .commitStream: _ = try reader.varint(); _ = try reader.varint(); _ = try reader.uint32()
            case .putIntegers:
                _ = try reader.varint()
                let counted = try reader.varint()
                if counted & 1 == 1 { _ = try reader.varint() }
                for _ in 0..<min(counted >> 1, UInt64(reader.remaining)) {
                    if counted & 1 == 0 { _ = try reader.varint() }
                    _ = try reader.lengthPrefixedRange()
                }
            case .putByteKeys:
                _ = try reader.varint()
                let count = try reader.varint()
                let length = try reader.varint()
                for _ in 0..<min(count, UInt64(reader.remaining)) {
                    _ = try reader.range(count: Int(min(length, UInt64(reader.remaining) + 1)))
                    _ = try reader.lengthPrefixedRange()
                }
            case nil: return codes
            }
        }
        return codes
    }

    /// The four bytes at `offset`, little-endian.
    private static func littleEndian(_ bytes: [UInt8], at offset: Int) -> Int {
        bytes[offset..<(offset + 4)].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
    }
}
