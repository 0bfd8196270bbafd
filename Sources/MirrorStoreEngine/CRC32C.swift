import CMirrorStoreSupport

/// CRC32C (Castagnoli), the checksum that protects every log unit.
///
/// Uses the CPU's CRC32C instruction when the C support target reports one,
/// and a slicing-by-8 table implementation otherwise.
enum CRC32C {
    /// The reflected Castagnoli polynomial.
    static let polynomial: UInt32 = 0x82F6_3B78

    /// Whether the hardware path is used; decided once per process.
    static let usesHardware: Bool = mirrorstore_crc32c_hardware_available() != 0

    /// Eight 256-entry tables: table k maps a byte to its CRC contribution k bytes further on.
    static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 {
                crc = (crc & 1) != 0 ? (crc >> 1) ^ polynomial : crc >> 1
            }
            tables[byte] = crc
        }
        for byte in 0..<256 {
            var crc = tables[byte]
            for slice in 1..<8 {
                crc = tables[Int(crc & 0xFF)] ^ (crc >> 8)
                tables[slice * 256 + byte] = crc
            }
        }
        return tables
    }()

    /// The CRC32C of `bytes`.
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        update(0, bytes)
    }

    /// The CRC32C of `bytes`.
    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    /// Extends `crc` (a finished checksum, as returned by `checksum`) over more bytes.
    static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        let register = ~crc
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        if usesHardware {
            return ~mirrorstore_crc32c_hardware_update(register, base, bytes.count)
        }
        return ~softwareUpdate(register, bytes)
    }

    /// Slicing-by-8 over the non-inverted register; exposed so tests can check it
    /// against the hardware path on machines that have one.
    static func softwareUpdate(_ register: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = register
        var index = 0
        let count = bytes.count
        tables.withUnsafeBufferPointer { table in
            while count - index >= 8 {
                let low = crc ^ (UInt32(bytes[index])
                    | UInt32(bytes[index + 1]) << 8
                    | UInt32(bytes[index + 2]) << 16
                    | UInt32(bytes[index + 3]) << 24)
                crc = table[7 * 256 + Int(low & 0xFF)]
                    ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ table[5 * 256 + Int((low >> 16) & 0xFF)]
                    ^ table[4 * 256 + Int(low >> 24)]
                    ^ table[3 * 256 + Int(bytes[index + 4])]
                    ^ table[2 * 256 + Int(bytes[index + 5])]
                    ^ table[1 * 256 + Int(bytes[index + 6])]
                    ^ table[Int(bytes[index + 7])]
                index += 8
            }
            while index < count {
                crc = table[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        return crc
    }

    /// `crc` extended over `count` zero bytes, in time logarithmic in `count` (zlib's
    /// `crc32_combine` method): a hole in a file reads as zeros, and a unit declaring a gigabyte
    /// over one is checked without reading or hashing a gigabyte.
    static func extendWithZeros(_ crc: UInt32, count: UInt64) -> UInt32 {
        // Appending a zero byte multiplies the register by x^8 modulo the polynomial; the
        // powers x^(2^k) are squared up one bit of `count` at a time.
        var power: UInt32 = 1 << 23   // x^8, bit-reflected
        var factor: UInt32 = 1 << 31  // x^0
        var rest = count
        while rest != 0 {
            if rest & 1 != 0 { factor = multiplyModulo(power, factor) }
            power = multiplyModulo(power, power)
            rest >>= 1
        }
        return ~multiplyModulo(factor, ~crc)
    }

    /// `a * b` modulo the CRC polynomial, both bit-reflected.
    private static func multiplyModulo(_ a: UInt32, _ b: UInt32) -> UInt32 {
        var product: UInt32 = 0
        var multiplier = b
        var bit: UInt32 = 1 << 31
        while bit != 0 {
            if a & bit != 0 { product ^= multiplier }
            multiplier = multiplier & 1 != 0 ? (multiplier >> 1) ^ polynomial : multiplier >> 1
            bit >>= 1
        }
        return product
    }

    /// LevelDB's mask: a CRC stored inside data that is itself checksummed
    /// (a value holding a log image) must not look like a valid CRC of that data.
    static func mask(_ crc: UInt32) -> UInt32 {
        ((crc >> 15) | (crc << 17)) &+ 0xA282_EAD8
    }

    /// Inverse of `mask`.
    static func unmask(_ masked: UInt32) -> UInt32 {
        let rotated = masked &- 0xA282_EAD8
        return (rotated >> 17) | (rotated << 15)
    }
}
