/// A commit too large to hold in memory, written to the log in pieces as it is produced and made
/// visible all at once by ``StorageEngine/submit(_:completing:after:onPublish:)``.
///
/// Each ``write(_:)`` appends the operations at once, unsynced, as pieces of about 1 MiB that no
/// snapshot, reader or later open applies until the commit unit naming them follows
/// (docs/FILE_FORMAT.md, "Streamed commits"). A stream that is abandoned, released without being
/// submitted, or cut short by a crash leaves its pieces as dead bytes. Other commits may be written
/// between its pieces; its operations apply at its commit, after theirs.
///
/// ```swift
/// guard let stream = try engine.beginStream() else { return try engine.commit(batch) }
/// for chunk in chunks { _ = try stream.write(chunk) }
/// try engine.wait(for: engine.submit(WriteBatch(), completing: stream))
/// ```
public final class WriteStream: Sendable {
    /// Where a value a stream wrote lies in the log, to read it back before the commit.
    public struct Location: Hashable, Sendable {
        public let offset: UInt64
        public let length: Int

        public init(offset: UInt64, length: Int) {
            self.offset = offset
            self.length = length
        }
    }

    struct State: Sendable {
        /// The stream's id: the offset of its first piece, nil before it has one.
        var id: UInt64?
        var pieces: [StreamPiece.Span] = []
        /// `StreamPiece.chain` over the pieces written.
        var check: UInt32 = 0
        /// The types the pieces write, which the commit unit defines in the file if it does not yet.
        var types = Set<String>()
        /// Committed, abandoned or refused: it takes no more writes.
        var isFinished = false
    }

    let engine: StorageEngine
    /// The log the pieces are written to; the commit must go to the same one.
    let generation: any LogStorage
    let state: Lock<State>

    /// The operations about this many bytes of values make one piece.
    static let pieceSize = 1 << 20

    init(engine: StorageEngine, generation: any LogStorage) {
        self.engine = engine
        self.generation = generation
        state = Lock(State())
        engine.openStreams.add(1, ordering: .releasing)
    }

    deinit {
        abandon()
    }

    /// Appends `batch`'s operations to the log as pieces of the stream and returns where each
    /// put's value lies, in the batch's order. Nothing of it is visible before the commit.
    ///
    /// - Throws: `StorageError`: ``StorageError/Kind/streamEnded(path:)`` when the stream was
    ///   submitted, abandoned or the log compacted since it began; I/O errors (the failed piece is
    ///   cut off, and the stream can still be abandoned or go on).
    public func write(_ batch: WriteBatch) throws -> [Location] {
        try engine.writePieces(batch.operations, of: self)
    }

    /// The bytes of a value this stream wrote.
    public func value(at location: Location) throws -> [UInt8] {
        try generation.read(at: location.offset, count: location.length)
    }

    /// Gives the stream up: nothing of it becomes visible, and checkpoints may be written again.
    /// Releasing an unsubmitted stream does the same.
    public func abandon() {
        _ = finish()
    }

    /// Marks the stream finished; returns what it wrote, or nil when it was finished already.
    func finish() -> State? {
        let ended = state.withLock { state -> State? in
            guard !state.isFinished else { return nil }
            state.isFinished = true
            return state
        }
        if ended != nil { engine.openStreams.subtract(1, ordering: .releasing) }
        return ended
    }
}

extension StorageEngine {
    /// Begins a streamed commit (``WriteStream``), or returns nil when the log's format (1) has
    /// no room for pieces: write the commit as one batch then.
    ///
    /// - Throws: `StorageError` when the engine is closed, read-only or poisoned.
    public func beginStream() throws -> WriteStream? {
        try writer.withLock { writer in
            try checkWritable(writer)
            guard writer.formatVersion >= 2 else { return nil }
            return WriteStream(engine: self, generation: writer.generation)
        }
    }

    /// Writes `operations` as pieces of `stream` (see ``WriteStream/write(_:)``).
    func writePieces(_ operations: [WriteBatch.Operation], of stream: WriteStream) throws -> [WriteStream.Location] {
        try writer.withLock { writer in
            try checkWritable(writer)
            // Lock order: the writer, then the stream, as a commit takes them.
            return try stream.state.withLock { state in
                guard !state.isFinished, stream.generation === writer.generation else {
                    throw StorageError(.streamEnded(path: displayPath))
                }
                var locations: [WriteStream.Location] = []
                locations.reserveCapacity(operations.count)
                // Operations of one type come in long runs: its name is hashed once per run.
                var lastType: String?
                func note(_ type: String) {
                    if type != lastType {
                        state.types.insert(type)
                        lastType = type
                    }
                }
                var start = 0
                while start < operations.count {
                    var end = start
                    var bytes = 0
                    while end < operations.count, end == start || bytes < WriteStream.pieceSize {
                        if case .put(let type, _, let value) = operations[end] {
                            bytes += value.count
                            note(type)
                        } else if case .delete(let type, _) = operations[end] {
                            note(type)
                        } else if case .deleteAll(let type) = operations[end] {
                            note(type)
                        }
                        bytes += 16
                        end += 1
                    }
                    let unitStart = writer.appendOffset
                    let id = state.id ?? unitStart
                    let (payload, decoded) = StreamPiece.encode(
                        stream: id, number: UInt64(state.pieces.count), operations: Array(operations[start..<end]),
                        payloadOffset: unitStart + UInt64(LogFrame.headerSize), packing: OperationCodec.Packing(format: writer.formatVersion))
                    guard payload.count <= LogFrame.maximumPayload else {
                        throw StorageError(.batchTooLarge(size: payload.count, limit: LogFrame.maximumPayload))
                    }
                    guard unitStart + UInt64(LogFrame.headerSize + payload.count) <= ValueLocation.offsetLimit else {
                        throw StorageError(.fileTooLarge(path: displayPath, limit: ValueLocation.offsetLimit))
                    }
                    // An index unit carries the number of the last commit before it.
                    let frame = LogFrame.encode(sequence: writer.lastSequence, payload: payload, isIndex: true)
                    do {
                        try writer.generation.write(frame, at: unitStart)
                    } catch {
                        do {
                            try writer.generation.truncate(to: unitStart)
                        } catch {
                            writer.poison = StorageError(.syncFailed(path: displayPath))
                        }
                        throw error
                    }
                    writer.appendOffset = unitStart + UInt64(frame.count)
                    writer.hasUnsyncedChanges = true
                    state.id = id
                    state.pieces.append(StreamPiece.Span(offset: unitStart, length: frame.count))
                    state.check = StreamPiece.chain(
                        state.check, frameChecksum: StreamPiece.frameChecksum(frame, payloadStart: LogFrame.headerSize))
                    for operation in decoded {
                        if case .put(_, _, let offset, let length) = operation {
                            locations.append(WriteStream.Location(offset: offset, length: length))
                        }
                    }
                    start = end
                }
                return locations
            }
        }
    }
}
