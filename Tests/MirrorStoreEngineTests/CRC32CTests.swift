import Testing
import TestSupport
@testable import MirrorStoreEngine

@Suite struct CRC32CTests {
    /// The check value and the RFC 3720 (iSCSI) test vectors.
    static let vectors: [(name: String, bytes: [UInt8], crc: UInt32)] = [
        ("123456789", Array("123456789".utf8), 0xE306_9283),
        ("32 zeros", [UInt8](repeating: 0, count: 32), 0x8A91_36AA),
        ("32 ones", [UInt8](repeating: 0xFF, count: 32), 0x62A8_AB43),
        ("32 ascending", (0..<32).map { UInt8($0) }, 0x46DD_794E),
        ("32 descending", (0..<32).reversed().map { UInt8($0) }, 0x113F_DB5C),
        ("iSCSI read", [
            0x01, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
            0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        ], 0xD996_3A56),
        ("empty", [], 0),
    ]

    @Test func standardVectors() {
        for vector in Self.vectors {
            #expect(CRC32C.checksum(vector.bytes) == vector.crc, "\(vector.name)")
            let software = vector.bytes.withUnsafeBytes { ~CRC32C.softwareUpdate(~0, $0) }
            #expect(software == vector.crc, "slicing-by-8, \(vector.name)")
        }
    }

    /// Extending over zeros without reading them is what hashing the zeros gives.
    @Test func extendingOverZerosEqualsHashingThem() {
        let prefix = Array("a unit header".utf8)
        for count in [0, 1, 7, 8, 100, 4_096, 65_537, 1 << 20] {
            let zeros = [UInt8](repeating: 0, count: count)
            #expect(CRC32C.extendWithZeros(CRC32C.checksum(prefix), count: UInt64(count)) == CRC32C.checksum(prefix + zeros), "\(count)")
            #expect(CRC32C.extendWithZeros(0, count: UInt64(count)) == CRC32C.checksum(zeros), "\(count)")
        }
    }

    @Test func hardwareAndSoftwareAgreeOnEveryLengthAndAlignment() {
        let seed = SeededRandom.seed(default: 0xC0FFEE)
        var generator = SeededRandom(seed: seed)
        let data = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
        data.withUnsafeBytes { raw in
            for start in 0..<9 {
                for length in [0, 1, 7, 8, 9, 15, 16, 63, 64, 65, 1000, 4000] where start + length <= raw.count {
                    let slice = UnsafeRawBufferPointer(rebasing: raw[start..<(start + length)])
                    #expect(CRC32C.checksum(slice) == ~CRC32C.softwareUpdate(~0, slice), "seed \(seed), start \(start), length \(length)")
                }
            }
        }
    }

    @Test func incrementalUpdateEqualsOneShot() {
        let bytes = Array("The quick brown fox jumps over the lazy dog".utf8)
        let split = bytes.withUnsafeBytes { raw in
            CRC32C.update(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<10])), UnsafeRawBufferPointer(rebasing: raw[10...]))
        }
        #expect(split == CRC32C.checksum(bytes))
        #expect(CRC32C.checksum(bytes) == 0x2262_0404)
    }

    @Test func maskRoundTripsAndChangesTheValue() {
        for crc: UInt32 in [0, 1, 0xE306_9283, 0xFFFF_FFFF, 0x8000_0000] {
            #expect(CRC32C.unmask(CRC32C.mask(crc)) == crc)
            #expect(CRC32C.mask(crc) != crc)
        }
    }
}
