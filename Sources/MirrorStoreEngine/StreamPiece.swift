/// One piece of a streamed commit (docs/FILE_FORMAT.md, "Streamed commits"): an index unit of
/// kind 4 holding some of the commit's operations, written before the commit unit that names it.
/// Until that unit follows, a piece is dead bytes that no reader applies.
///
/// The payload is the kind byte, the stream's id (the offset of its first piece, so a piece
/// numbered 0 must lie at its own id), the piece's number from 0, then operations encoded as a
/// commit's are, but with type ids of the piece's own (each piece defines the types it uses from
/// id 0): the file's type table gains nothing from a piece, so an abandoned stream leaves no
/// trace in it and commits written between pieces number their types as if it did not exist.
enum StreamPiece {
    struct Header: Equatable {
        var stream: UInt64
        var number: UInt64
    }

    /// Where a piece lies in the log: its frame's offset and length.
    struct Span: Sendable {
        var offset: UInt64
        var length: Int
    }

    /// The payload of piece `number` of stream `stream`, to be written at `payloadOffset`, and its
    /// operations as a reader will decode them; puts packed as `packing` says (the encodings the
    /// file's format has).
    static func encode(
        stream: UInt64, number: UInt64, operations: [WriteBatch.Operation], payloadOffset: UInt64, packing: OperationCodec.Packing
    ) -> (payload: [UInt8], decoded: [DecodedOperation]) {
        // The operations follow the header in the same bytes.
        var header = ByteWriter()
        header.byte(IndexUnit.Kind.streamPiece.rawValue)
        header.varint(stream)
        header.varint(number)
        var types = TypeTable()
        let decoded = OperationCodec.encode(operations, types: &types, fileOffset: payloadOffset, packing: packing, into: &header)
        return (header.bytes, decoded)
    }

    /// Decodes the piece payload `bytes[range]`, which starts at `payloadOffset` in the log.
    static func decode(
        _ bytes: [UInt8], range: Range<Int>, payloadOffset: UInt64
    ) throws(DecodeFailure) -> (header: Header, operations: [DecodedOperation]) {
        var reader = ByteReader(bytes, from: range.lowerBound, to: range.upperBound)
        let kind = try reader.byte()
        guard kind == IndexUnit.Kind.streamPiece.rawValue else {
            throw DecodeFailure(offset: range.lowerBound, reason: "the unit is not a piece of a streamed commit (kind \(kind))")
        }
        let header = Header(stream: try reader.varint(), number: try reader.varint())
        var types = TypeTable()
        let operations = try OperationCodec.decode(
            bytes, range: reader.position..<range.upperBound,
            fileOffset: payloadOffset + UInt64(reader.position - range.lowerBound), types: &types)
        return (header, operations)
    }

    /// Reads back and decodes the piece at `span`, which this process wrote.
    static func read(_ span: Span, from log: any LogStorage) throws -> [DecodedOperation] {
        try readBack(span, from: log).operations
    }

    /// A piece read back: its frame's bytes, which hold the values its puts name, and its
    /// operations.
    struct ReadBack {
        let frame: [UInt8]
        let offset: UInt64
        let operations: [DecodedOperation]

        /// The bytes at `offset` of the log when the frame holds them all, else nil.
        func bytes(at offset: UInt64, count: Int) -> [UInt8]? {
            guard offset >= self.offset, offset - self.offset <= UInt64(frame.count),
                  count <= frame.count - Int(offset - self.offset) else { return nil }
            let start = Int(offset - self.offset)
            return Array(frame[start..<(start + count)])
        }
    }

    /// Reads back (with one `pread`, not through the mapping, whose pages would stay in the
    /// process's resident set) and decodes the piece at `span`, which this process wrote.
    static func readBack(_ span: Span, from log: any LogStorage) throws -> ReadBack {
        let frame = try log.readOnce(at: span.offset, count: span.length)
        do throws(DecodeFailure) {
            let operations = try decode(frame, range: LogFrame.headerSize..<frame.count, payloadOffset: span.offset + UInt64(LogFrame.headerSize))
                .operations
            return ReadBack(frame: frame, offset: span.offset, operations: operations)
        } catch {
            throw StorageError(.corrupted(path: log.path, offset: span.offset, reason: "a piece of a streamed commit no longer decodes: \(error.reason)"))
        }
    }

    /// The stream check after one more piece: the CRC32C of the pieces' masked frame checksums in
    /// order, which the commit unit carries so that it names exactly the pieces written.
    static func chain(_ check: UInt32, frameChecksum: UInt32) -> UInt32 {
        withUnsafeBytes(of: frameChecksum.littleEndian) { CRC32C.update(check, $0) }
    }

    /// The masked checksum field of the frame whose payload starts at `payloadStart` in `bytes`.
    static func frameChecksum(_ bytes: [UInt8], payloadStart: Int) -> UInt32 {
        var reader = ByteReader(bytes, from: payloadStart - LogFrame.headerSize + 4, to: payloadStart - LogFrame.headerSize + 8)
        return (try? reader.uint32()) ?? 0
    }
}

/// What a streamed commit's unit says of the pieces it makes visible: it opens the unit's
/// payload with opcode 8, the stream's id, its piece count and its check (`StreamPiece.chain`).
struct StreamReference: Equatable, Sendable {
    var stream: UInt64
    var pieces: UInt64
    var check: UInt32

    func encode(into writer: inout ByteWriter) {
        writer.byte(OperationCodec.Opcode.commitStream.rawValue)
        writer.varint(stream)
        writer.varint(pieces)
        writer.uint32(check)
    }

    /// The reference a payload `bytes[range]` opens with, and the range of its operations after it.
    static func decode(_ bytes: [UInt8], range: Range<Int>) throws(DecodeFailure) -> (StreamReference?, Range<Int>) {
        guard !range.isEmpty, bytes[range.lowerBound] == OperationCodec.Opcode.commitStream.rawValue else { return (nil, range) }
        var reader = ByteReader(bytes, from: range.lowerBound + 1, to: range.upperBound)
        let reference = StreamReference(stream: try reader.varint(), pieces: try reader.varint(), check: try reader.uint32())
        return (reference, reader.position..<range.upperBound)
    }
}

/// The pieces of streamed commits a reader has met and no commit has named yet, kept aside
/// until their commit unit arrives; those of a stream never committed are simply never applied.
struct PendingStreams: Sendable {
    private struct Stream: Sendable {
        var pieces: UInt64 = 0
        var check: UInt32 = 0
        var operations: [DecodedOperation] = []
    }

    private var streams: [UInt64: Stream] = [:]

    /// Keeps the piece at `offset`; returns why it cannot belong to any stream, or nil.
    mutating func add(
        _ header: StreamPiece.Header, operations: [DecodedOperation], frameChecksum: UInt32, at offset: UInt64
    ) -> String? {
        var stream: Stream
        if header.number == 0 {
            guard header.stream == offset else {
                return "the first piece of a streamed commit names stream \(header.stream), not its own offset"
            }
            stream = Stream()
        } else {
            guard let found = streams[header.stream], found.pieces == header.number else {
                return "piece \(header.number) of the streamed commit at byte \(header.stream) does not follow its pieces"
            }
            stream = found
            streams[header.stream] = nil
        }
        stream.pieces += 1
        stream.check = StreamPiece.chain(stream.check, frameChecksum: frameChecksum)
        stream.operations += operations
        streams[header.stream] = stream
        return nil
    }

    /// The operations of the pieces `reference` names, which it removes, or why they do not match.
    mutating func take(_ reference: StreamReference) -> Result<[DecodedOperation], DecodeFailure> {
        guard let stream = streams[reference.stream], stream.pieces == reference.pieces, stream.check == reference.check else {
            return .failure(DecodeFailure(
                offset: 0,
                reason: "the unit commits \(reference.pieces) pieces of the streamed commit at byte \(reference.stream), which the log does not hold as written"))
        }
        streams[reference.stream] = nil
        return .success(stream.operations)
    }
}
