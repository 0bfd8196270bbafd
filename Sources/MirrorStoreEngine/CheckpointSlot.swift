/// One of the two checkpoint slots of a format-2 header region: where the newest checkpoint unit
/// lies, so that opening finds it without scanning the log (as LMDB's two meta pages do).
///
/// Layout (64 bytes, little-endian): checkpoint number (8) · offset of the checkpoint unit (8) ·
/// the unit's length with its frame (4) · the sequence number it covers (8) · zeros (32) ·
/// masked CRC32C of bytes 0..<60 (4). Checkpoint `n` goes to slot `n % 2`, so writing one never
/// touches the slot of the one before: a torn slot write leaves the other intact.
struct CheckpointSlot: Equatable {
    static let size = 64
    /// Where each slot lies in the header region.
    static let offsets: [UInt64] = [64, 128]

    var number: UInt64
    var unitOffset: UInt64
    var unitLength: UInt32
    var sequence: UInt64

    static func offset(forNumber number: UInt64) -> UInt64 { offsets[Int(number % 2)] }

    func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.uint64(number)
        writer.uint64(unitOffset)
        writer.uint32(unitLength)
        writer.uint64(sequence)
        writer.bytes += [UInt8](repeating: 0, count: Self.size - 4 - writer.bytes.count)
        writer.uint32(CRC32C.mask(CRC32C.checksum(writer.bytes)))
        return writer.bytes
    }

    /// The slot in `bytes`, or nil when it is empty (all zeros, never written) or its checksum
    /// fails (a torn or damaged write): either way the other slot decides.
    static func decode(_ bytes: [UInt8]) -> CheckpointSlot? {
        guard bytes.count == size, bytes.contains(where: { $0 != 0 }) else { return nil }
        var reader = ByteReader(bytes)
        guard let number = try? reader.uint64(), let unitOffset = try? reader.uint64(), let unitLength = try? reader.uint32(),
              let sequence = try? reader.uint64()
        else { return nil }
        var checksum = ByteReader(bytes, from: size - 4)
        guard let stored = try? checksum.uint32(),
              CRC32C.unmask(stored) == CRC32C.checksum(Array(bytes[0..<(size - 4)]))
        else { return nil }
        return CheckpointSlot(number: number, unitOffset: unitOffset, unitLength: unitLength, sequence: sequence)
    }
}
