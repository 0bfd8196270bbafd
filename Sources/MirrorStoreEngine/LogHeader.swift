/// The 32-byte header at the start of every store file.
///
/// Layout (little-endian): magic (8) · format version (4) · flags (4) · end of the compacted run (8) ·
/// reserved (4) · masked CRC32C of bytes 0..<28 (4). In format 2 it begins a 4 KiB header
/// region that also holds the two checkpoint slots (`CheckpointSlot`); units follow the region.
struct LogHeader: Equatable {
    static let size = 32
    /// The bytes before the first unit of a format-2 file.
    static let regionSize = 4096
    /// `\x89MSTORE\n`: the high byte and the newline catch transfers that mangle binary files.
    static let magic: [UInt8] = [0x89, 0x4D, 0x53, 0x54, 0x4F, 0x52, 0x45, 0x0A]
    /// The format this code writes and the newest it reads.
    static let currentVersion: UInt32 = 7
    /// The first format whose writers pack integer puts into runs (`OperationCodec`) and integer
    /// key-run blocks into the packed layout (`PackedIntegerBlock`). Readers take both encodings
    /// in any format; a file of an earlier one goes on being written as it was, so that the
    /// code that made it still reads it, until a compaction rewrites it in the current format.
    static let packedVersion: UInt32 = 3

    /// Whether a writer of a file of format `version` uses the packed encodings.
    static func packsEncodings(_ version: UInt32) -> Bool { version >= packedVersion }
    /// The first format whose writers write key-run blocks whose locations a lookup walks through
    /// the log (the walked layout, `WalkedIntegerBlock`); readers take it in any format, as above.
    static let walkedVersion: UInt32 = 4

    /// Whether a writer of a file of format `version` uses the walked layout.
    static func walksLocations(_ version: UInt32) -> Bool { version >= walkedVersion }
    /// The first format whose values the layer above may write in forms that code of an earlier
    /// format cannot read (its tagless records): the engine's own encodings are format 4's, and
    /// the step only makes that code refuse the file as *newer format* rather than meet them.
    /// The layer learns a file's format from ``EngineSnapshot/formatVersion``.
    static let valueFormsVersion: UInt32 = 5
    /// The first format whose writers write key-run blocks of byte-string keys of one length in
    /// the packed byte-string layout (`PackedByteBlock`); readers take it in any format, as above.
    static let packedBytesVersion: UInt32 = 6

    /// Whether a writer of a file of format `version` uses the packed byte-string layout.
    static func packsByteKeys(_ version: UInt32) -> Bool { version >= packedBytesVersion }
    /// The first format whose writers write consecutive puts of one type whose keys are byte
    /// strings of one length as one operation (`OperationCodec`'s `putByteKeys`); readers take it
    /// in any format, as above.
    static let packedBytePutsVersion: UInt32 = 7

    /// Whether a writer of a file of format `version` packs byte-string puts.
    static func packsBytePuts(_ version: UInt32) -> Bool { version >= packedBytePutsVersion }
    /// Flag bit 0: the file was created numbering its units from 1, so unless the header records a
    /// compacted run, a first unit with another number means the units before it are missing.
    /// Files from before the flag may start with a compacted run their header does not record.
    static let numberedFromOne: UInt32 = 1

    var version: UInt32 = LogHeader.currentVersion
    var flags: UInt32 = LogHeader.numberedFromOne
    /// In a file written by compaction, the end of the units compaction wrote (0 otherwise).
    /// Those units form one state only together, so recovery accepts them all or none.
    /// Readers that predate the field ignore it, as they ignore any reserved bytes.
    var compactedEnd: UInt64 = 0

    /// Where the first unit starts: after the header in format 1, after the header region in format 2.
    var unitsStart: UInt64 { version >= 2 ? UInt64(Self.regionSize) : UInt64(Self.size) }

    /// The header followed by zeros up to `unitsStart`: in format 2, empty checkpoint slots.
    func encoded() -> [UInt8] {
        var bytes = fields()
        bytes += [UInt8](repeating: 0, count: Int(unitsStart) - bytes.count)
        return bytes
    }

    /// The 32 bytes of the header alone, which a rewrite of the header puts back in place
    /// without touching the checkpoint slots.
    func fields() -> [UInt8] {
        var writer = ByteWriter()
        writer.bytes.append(contentsOf: Self.magic)
        writer.uint32(version)
        writer.uint32(flags)
        writer.uint64(compactedEnd)
        writer.bytes.append(contentsOf: [UInt8](repeating: 0, count: 4))
        writer.uint32(CRC32C.mask(CRC32C.checksum(writer.bytes)))
        return writer.bytes
    }

    /// Whether `bytes`, shorter than a header, could be the start of one whose writing was
    /// interrupted when the store was created: they match the magic as far as they go.
    static func isInterruptedCreation(_ bytes: [UInt8]) -> Bool {
        bytes.count < size && zip(bytes, magic).allSatisfy { $0 == $1 }
    }

    /// Parses and checks a header: wrong magic is `notAStore`, a bad checksum `corrupted`,
    /// a newer version `newerFormat`. The checksum is checked first so a flipped version
    /// bit reads as damage, not as a future format.
    static func decode(_ bytes: [UInt8], path: String) throws -> LogHeader {
        guard bytes.count >= size, Array(bytes[0..<8]) == magic else {
            throw StorageError(.notAStore(path: path))
        }
        var reader = ByteReader(bytes, from: 8, to: size)
        do {
            let version = try reader.uint32()
            let flags = try reader.uint32()
            let compactedEnd = try reader.uint64()
            var checksumReader = ByteReader(bytes, from: 28, to: size)
            let stored = try checksumReader.uint32()
            let computed = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<28])) }
            guard CRC32C.unmask(stored) == computed else {
                throw StorageError(.corrupted(path: path, offset: 0, reason: "the header checksum does not match"))
            }
            guard version >= 1 else {
                throw StorageError(.corrupted(path: path, offset: 8, reason: "the header names format version 0, which never existed"))
            }
            guard version <= currentVersion else {
                throw StorageError(.newerFormat(path: path, found: version, supported: currentVersion))
            }
            return LogHeader(version: version, flags: flags, compactedEnd: compactedEnd)
        } catch let failure as DecodeFailure {
            throw StorageError(.corrupted(path: path, offset: UInt64(failure.offset), reason: failure.reason))
        }
    }
}
