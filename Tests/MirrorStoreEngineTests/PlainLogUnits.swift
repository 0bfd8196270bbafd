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

    /// The four bytes at `offset`, little-endian.
    private static func littleEndian(_ bytes: [UInt8], at offset: Int) -> Int {
        bytes[offset..<(offset + 4)].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
    }
}
