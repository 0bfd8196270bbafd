/// The clear first page of an encrypted store file (docs/FILE_FORMAT.md, "Encryption"): what an
/// opener needs to find the key, and nothing of the data. Little-endian:
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | magic `\x89MSENC\r\n` |
/// | 8 | 4 | encrypted format version: 2 (tail slots), 1 (the last page rewritten in place) |
/// | 12 | 4 | page size, 4096 |
/// | 16 | 16 | file id: random, new with every file generation |
/// | 32 | 28 | reserved, zero |
/// | 60 | 4 | masked CRC32C of bytes 0..<60 |
/// | 1024, 2048 | ≤ 1024 | key slots (`KeySlot`), the newest intact one in force |
///
/// The fixed fields are written once, when the generation is created; only the key slots change
/// afterwards, one at a time, so that a torn write of one leaves the other in force.
struct EncryptedFileHeader: Equatable {
    static let magic: [UInt8] = [0x89, 0x4D, 0x53, 0x45, 0x4E, 0x43, 0x0D, 0x0A]
    /// The version new generations are written in. Version 1 files (no tail slots, the last page
    /// rewritten at its place) are still read; a writable open rewrites them in version 2.
    static let currentVersion: UInt32 = 2
    /// The physical page: the header is one, and every sealed page of the log lies in one.
    static let pageSize = 4096
    static let fileIDByteCount = 16
    static let fixedByteCount = 64
    static let slotOffsets: [UInt64] = [1024, 2048]
    static let slotByteCount = 1024

    /// Random per file generation, so that no page of one generation authenticates in another.
    var fileID: [UInt8]
    /// The encrypted format version: where the log's pages lie (`EncryptedLog`).
    var version: UInt32 = EncryptedFileHeader.currentVersion

    /// One key slot: the wrapped data key, and how many nonces the key may have used.
    ///
    /// Layout: number (8) · nonce bound (8) · envelope length (2) · envelope · masked CRC32C (4).
    struct KeySlot: Equatable {
        /// Higher in the newer slot; the slot for number *n* is `slotOffsets[n % 2]`.
        var number: UInt64
        /// No page was sealed with this data key after this many nonces were drawn: an open
        /// starts counting here, and a writer raises it (and syncs) before drawing past it.
        var nonceBound: UInt64
        var envelope: KeyEnvelope

        func encoded() -> [UInt8] {
            let envelopeBytes = envelope.encoded()
            var writer = ByteWriter()
            writer.uint64(number)
            writer.uint64(nonceBound)
            writer.byte(UInt8(truncatingIfNeeded: envelopeBytes.count))
            writer.byte(UInt8(truncatingIfNeeded: envelopeBytes.count >> 8))
            writer.bytes.append(contentsOf: envelopeBytes)
            writer.uint32(CRC32C.mask(CRC32C.checksum(writer.bytes)))
            return writer.bytes
        }

        /// The slot in `bytes` (a slot's room), or nil when it is empty, torn or damaged.
        static func decode(_ bytes: [UInt8], path: String) -> KeySlot? {
            guard bytes.count >= 18 else { return nil }
            let length = Int(bytes[16]) | Int(bytes[17]) << 8
            let end = 18 + length
            guard length >= KeyEnvelope.minimumByteCount, end + 4 <= bytes.count else { return nil }
            var reader = ByteReader(bytes, from: 0, to: end + 4)
            guard let number = try? reader.uint64(), let bound = try? reader.uint64() else { return nil }
            var checksumReader = ByteReader(bytes, from: end, to: end + 4)
            guard let stored = try? checksumReader.uint32(), number > 0,
                  CRC32C.unmask(stored) == bytes.withUnsafeBytes({ CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<end])) }),
                  let envelope = try? KeyEnvelope.decode(Array(bytes[18..<end]), path: path)
            else { return nil }
            return KeySlot(number: number, nonceBound: bound, envelope: envelope)
        }
    }

    /// The fixed fields (the first 64 bytes of the page).
    func fixedFields() -> [UInt8] {
        var writer = ByteWriter()
        writer.bytes.append(contentsOf: Self.magic)
        writer.uint32(version)
        writer.uint32(UInt32(Self.pageSize))
        writer.bytes.append(contentsOf: fileID)
        writer.bytes.append(contentsOf: [UInt8](repeating: 0, count: 28))
        writer.uint32(CRC32C.mask(CRC32C.checksum(writer.bytes)))
        return writer.bytes
    }

    /// The whole first page of a new generation: the fixed fields and `slot` in its room.
    func page(with slot: KeySlot) -> [UInt8] {
        var page = fixedFields()
        page += [UInt8](repeating: 0, count: Self.pageSize - page.count)
        let start = Int(Self.slotOffsets[Int(slot.number % 2)])
        let bytes = slot.encoded()
        page.replaceSubrange(start..<(start + bytes.count), with: bytes)
        return page
    }

    /// Whether `bytes` start like an encrypted store file (as far as they go).
    static func hasMagic(_ bytes: [UInt8]) -> Bool {
        !bytes.isEmpty && zip(bytes, magic).allSatisfy { $0 == $1 }
    }

    /// The header and its newest intact key slot from the file's first page. A wrong magic is
    /// `notAStore`, a damaged fixed part or no intact slot `corrupted`, another version or page
    /// size `newerFormat`; nothing here traps on any bytes.
    static func decode(_ page: [UInt8], path: String) throws -> (header: EncryptedFileHeader, slot: KeySlot) {
        guard page.count >= pageSize, Array(page[0..<magic.count]) == magic else {
            throw StorageError(.notAStore(path: path))
        }
        var reader = ByteReader(page, from: 8, to: fixedByteCount)
        let version: UInt32
        do {
            version = try reader.uint32()
            let pageSize = try reader.uint32()
            var checksumReader = ByteReader(page, from: 60, to: fixedByteCount)
            let stored = try checksumReader.uint32()
            let computed = page.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<60])) }
            guard CRC32C.unmask(stored) == computed else {
                throw StorageError(.corrupted(path: path, offset: 0, reason: "the encrypted file's header checksum does not match"))
            }
            guard (1...currentVersion).contains(version), pageSize == UInt32(Self.pageSize) else {
                throw StorageError(.newerFormat(path: path, found: version, supported: currentVersion))
            }
        } catch let failure as DecodeFailure {
            throw StorageError(.corrupted(path: path, offset: UInt64(failure.offset), reason: failure.reason))
        }
        let header = EncryptedFileHeader(fileID: Array(page[16..<(16 + fileIDByteCount)]), version: version)
        let slots = slotOffsets.compactMap { offset in
            KeySlot.decode(Array(page[Int(offset)..<(Int(offset) + slotByteCount)]), path: path)
        }
        guard let newest = slots.max(by: { $0.number < $1.number }) else {
            throw StorageError(.corrupted(path: path, offset: slotOffsets[0], reason: "neither key slot of the encrypted file is intact"))
        }
        return (header, newest)
    }
}
