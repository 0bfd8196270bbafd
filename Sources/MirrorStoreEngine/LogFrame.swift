/// The framing of one unit: payload length (4) · masked CRC32C (4) · sequence (8) · payload.
///
/// The checksum covers the length, the sequence and the payload, so a flipped length or
/// sequence bit is caught like a flipped payload bit. In a format-2 file the length field's top
/// bit marks an *index unit* (a persisted key run or a checkpoint, `IndexUnit`): it carries the
/// sequence number of the last commit before it and is never replayed as a commit.
enum LogFrame {
    static let headerSize = 16
    /// The length field's bit that marks an index unit; no payload is long enough to set it.
    static let indexFlag: UInt32 = 1 << 31
    /// The largest payload one unit may carry; larger declared lengths are damage.
    static let maximumPayload = 1 << 30
    /// The highest sequence number a store writes: a unit above it is damage, and a commit that
    /// would pass it is refused, so that counting up never overflows.
    static let maximumSequence = UInt64(Int64.max)

    /// The complete unit for `payload`.
    static func encode(sequence: UInt64, payload: [UInt8], isIndex: Bool = false) -> [UInt8] {
        var writer = ByteWriter()
        writer.reserve(headerSize + payload.count)
        writer.uint32(UInt32(payload.count) | (isIndex ? indexFlag : 0))
        writer.uint32(0)
        writer.uint64(sequence)
        writer.bytes.append(contentsOf: payload)
        let crc = checksum(writer.bytes, frameStart: 0, payloadLength: payload.count)
        let masked = CRC32C.mask(crc)
        for index in 0..<4 {
            writer.bytes[4 + index] = UInt8(truncatingIfNeeded: masked >> UInt32(8 * index))
        }
        return writer.bytes
    }

    /// Fills in the header of the unit `frame` holds, whose first `headerSize` bytes were left
    /// for it before the payload: the frame `encode` gives for that payload, without copying
    /// the payload (a run's unit of megabytes).
    static func seal(_ frame: inout [UInt8], sequence: UInt64, isIndex: Bool) {
        let length = frame.count - headerSize
        var header = ByteWriter()
        header.uint32(UInt32(length) | (isIndex ? indexFlag : 0))
        header.uint32(0)
        header.uint64(sequence)
        frame.replaceSubrange(0..<headerSize, with: header.bytes)
        let masked = CRC32C.mask(checksum(frame, frameStart: 0, payloadLength: length))
        for index in 0..<4 {
            frame[4 + index] = UInt8(truncatingIfNeeded: masked >> UInt32(8 * index))
        }
    }

    /// The CRC32C of a unit lying in `bytes` at `frameStart`, skipping its own checksum field.
    static func checksum(_ bytes: [UInt8], frameStart: Int, payloadLength: Int) -> UInt32 {
        bytes.withUnsafeBytes { raw in
            let length = UnsafeRawBufferPointer(rebasing: raw[frameStart..<(frameStart + 4)])
            let rest = UnsafeRawBufferPointer(rebasing: raw[(frameStart + 8)..<(frameStart + headerSize + payloadLength)])
            return CRC32C.update(CRC32C.checksum(length), rest)
        }
    }
}
