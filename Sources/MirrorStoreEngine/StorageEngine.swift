#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// An embedded, append-only, crash-safe key-value store of typed objects.
///
/// Each commit appends one checksummed unit to a log file; an in-memory index maps every
/// (type, key) to where its value lies; opening rebuilds the index and drops a torn tail;
/// compaction rewrites the live data and swaps it in atomically. See docs/FILE_FORMAT.md.
///
/// ```swift
/// let engine = try StorageEngine(path: "heroes.store")
/// var batch = WriteBatch()
/// batch.put(type: "Hero", key: .integer(1455), value: Array("Tony".utf8))
/// try engine.commit(batch)
/// let name = try engine.snapshot().value(type: "Hero", key: .integer(1455))
/// try engine.close()
/// ```
///
/// Commits are serialized; snapshots are cheap and may be read from any thread while
/// commits and compactions run.
public final class StorageEngine: Sendable {
    /// The writer's side: held for the whole of a commit or a compaction, so they never overlap.
    struct Writer: Sendable {
        var generation: any LogStorage
        var types: TypeTable
        var appendOffset: UInt64
        var lastSequence: UInt64
        /// Set when the log can no longer be trusted (a failed sync); every later write throws it.
        var poison: StorageError?
        var isClosed = false
        /// Whether something was written or truncated without a sync since the last one (`.none` durability).
        var hasUnsyncedChanges = false
        var lock: FileLock?
        var registration: OpenPathRegistration?
        /// The log's format: only format 2 has checkpoints.
        var formatVersion = LogHeader.currentVersion
        /// The number of the newest checkpoint slot written (valid or not); the next is one more.
        var checkpointNumber: UInt64 = 0
        /// Where the newest checkpoint ends (or the first unit starts): the tail after it is what
        /// opening replays.
        var checkpointEnd: UInt64 = 0
        /// For a reader beside a writer: the file it reads and how its units go on; nil for a writer.
        var following: Following?
        /// The secret the log is encrypted with, nil for a plain log: each new generation
        /// (compaction, rewrite) is encrypted with it under a new data key.
        var keys: EncryptionKeys?
        /// The most the last compaction or rewrite held in memory at once.
        var lastRewriteHeld = Compaction.Held()
        /// Bytes of key runs and index runs in the log that the checkpoints of this open merged
        /// into others, so that no checkpoint names them any more: the dead bytes the engine's
        /// own merges leave (`maybeCompact`). 0 again after a compaction or a rewrite.
        var supersededIndexBytes: UInt64 = 0
    }

    /// What a reader beside a writer needs to go on reading the log where it stopped.
    struct Following: Sendable {
        /// The file the reader has open, compared with the file its path names now.
        var identity: FileIdentity
        /// That file, whose size tells whether the writer wrote since.
        var file: FileLog
        /// Which sequence number may come next; nil when the reader found no header yet (a file
        /// being created), or stopped at a unit it cannot pass: the next refresh opens anew.
        var numbering: Recovery.Numbering?
        /// The file's size (in bytes of the file, not of an encrypted log) when it was opened or
        /// last refreshed.
        var seenSize: UInt64
        /// The log's size then: an encrypted log in format 2 may grow with the file's size
        /// unchanged (a commit that changes only a tail slot).
        var seenLogSize: UInt64
        /// The pieces of streamed commits read and not committed yet (docs/FILE_FORMAT.md,
        /// "Streamed commits"): applied when their commit unit arrives, never before.
        var streams = PendingStreams()
    }

    /// What snapshots and statistics read: swapped in under a short lock after each commit.
    struct Published: Sendable {
        var index: KeyIndex
        var generation: any LogStorage
        var sequence: UInt64
        var fileSize: UInt64
        var formatVersion: UInt32
        var compactions = 0
        var commitSyncs = 0
        var lastAutoCompactionError: StorageError?
        var lastCheckpointError: StorageError?
        var checkpoints = 0
        /// The checkpoint in force, nil when there is none.
        var checkpoint: CheckpointSlot?
        /// Bytes of the log that stay live besides the objects: the key runs and the checkpoint
        /// unit in force.
        var indexBytes: UInt64 { UInt64(index.runBytes) + UInt64(checkpoint?.unitLength ?? 0) }
        var secondary = SecondaryIndexes()
        /// The snapshot of this state, made by the first ``StorageEngine/snapshot()`` after a
        /// change and shared by the later ones; dropped before each change, so that the change
        /// finds the index's storage unshared when no reader holds a snapshot (but for each
        /// type's fields a snapshot showed, which it copies: `TypeIndex.markShown()`).
        var snapshot: EngineSnapshot?
    }

    /// The store's path as given, or nil for an in-memory engine.
    public let path: String?
    /// The store file's path with every symbolic link resolved: what the engine locks, opens,
    /// compacts and renames, so that every spelling of one file is one store.
    let filePath: String?
    /// What recovery left out when the store was opened, and where it kept those bytes; nil
    /// when the file was intact (and for an in-memory engine).
    public let recoveryReport: RecoveryReport?
    /// The configuration the engine was opened with.
    public let configuration: EngineConfiguration
    let faults: FaultInjection?
    let writer: Lock<Writer>
    let published: Lock<Published>
    /// Counts the changes of what snapshots see: commits, compactions, index definitions and
    /// closing. Changed only under `published`'s lock, with the change; read without it. Starts
    /// at 1, so that a snapshot made elsewhere (version 0) is never current.
    private let publishedVersion = Atomic<UInt64>(1)
    /// Streamed commits begun and neither committed nor abandoned: no checkpoint or automatic
    /// compaction is written while one is open, so every piece lies after the newest checkpoint
    /// and in the file its commit goes to. Not under `writer`'s lock, since a stream released
    /// while that lock is held ends itself.
    let openStreams = Atomic<Int>(0)

    /// Opens the store at `path`, creating it if missing: takes the lock, recovers the log
    /// (dropping a torn final commit, whose bytes it keeps in a sidecar file and describes in
    /// `recoveryReport`) and rebuilds the index.
    ///
    /// Throws `StorageError` for a file that is not a store, a newer format, damage (in
    /// `.strict` mode, and damage to a compaction's output in every mode), a lock held by
    /// another process, a second open in this process, a file with several hard links, or a
    /// failing system call.
    public convenience init(path: String, configuration: EngineConfiguration = .init()) throws {
        try self.init(path: path, configuration: configuration, faults: nil)
    }

    /// An engine with the same semantics whose log lives in memory and vanishes with it.
    public convenience init(inMemoryWith configuration: EngineConfiguration = .init()) {
        let header = LogHeader()
        let log = MemoryLog(header.encoded())
        let writer = Writer(
            generation: log, types: TypeTable(), appendOffset: header.unitsStart, lastSequence: 0)
        let published = Published(
            index: KeyIndex(), generation: log, sequence: 0,
            fileSize: header.unitsStart, formatVersion: LogHeader.currentVersion)
        self.init(path: nil, filePath: nil, configuration: configuration, faults: nil, writer: writer, published: published, recoveryReport: nil)
    }

    private init(
        path: String?, filePath: String?, configuration: EngineConfiguration, faults: FaultInjection?, writer: Writer,
        published: Published, recoveryReport: RecoveryReport?
    ) {
        self.path = path
        self.filePath = filePath
        self.recoveryReport = recoveryReport
        self.configuration = configuration
        self.faults = faults
        self.writer = Lock(writer)
        self.published = Lock(published)
    }

    /// Opens a file store whose system calls can be made to fail (tests only).
    convenience init(path: String, configuration: EngineConfiguration, faults: FaultInjection?) throws {
        // Before anything is made: "" would name a lock file ".lock" in the working directory.
        guard !path.isEmpty else { throw StorageError(.emptyPath) }
        // A secret that can open nothing is refused before any file is touched.
        let keys = try configuration.encryption.map { (encryption) throws(StorageError) in
            try EncryptionKeys(encryption.secret, iterations: configuration.keyDerivationIterations)
        }
        let filePath = try FileSystem.resolvedPath(path)
        if configuration.readsBesideWriter {
            let (writer, published) = try Self.openBesideWriter(
                path: path, filePath: filePath, configuration: configuration, keys: keys, faults: faults)
            self.init(
                path: path, filePath: filePath, configuration: configuration, faults: faults, writer: writer, published: published,
                recoveryReport: nil)
            return
        }
        let registration = try OpenPathRegistration.register(filePath, as: path)
        let lock = try FileLock.acquire(
            storePath: filePath, exclusive: !configuration.readOnly, waiting: configuration.lockTimeout, as: path)
        if !configuration.readOnly {
            _ = FileSystem.remove(Compaction.temporaryPath(for: filePath))
        }
        let flags = configuration.readOnly ? O_RDONLY : (O_RDWR | O_CREAT)
        let descriptor: Int32
        do {
            descriptor = try FileSystem.openRegularFile(filePath, flags: flags)
        } catch let error as StorageError {
            if case .notARegularFile(_, let fileType) = error.kind { throw StorageError(.notARegularFile(path: path, fileType: fileType)) }
            throw error
        }
        guard descriptor >= 0 else { throw FileSystem.ioError("open the store file", path) }
        let file = FileLog(path: path, descriptor: descriptor, faults: faults)
        // The lock file is found by name; this lock stays with the file when it is renamed.
        try file.lock(exclusive: !configuration.readOnly, waiting: configuration.lockTimeout)
        try FileSystem.requireSingleLink(descriptor, path: path)
        let log = try EncryptedLog.storage(for: file, keys: keys, writable: !configuration.readOnly)
        // Point-in-time recovery must find the first damaged unit, which only a replay of the
        // whole log does; strict opening trusts the newest checkpoint and checks as it reads.
        var recovered = try Recovery.scan(log, fromCheckpoint: configuration.recoveryMode == .strict)
        var report: RecoveryReport?
        let sync = configuration.durability == .full
        if recovered.needsHeader {
            let header = LogHeader()
            if !configuration.readOnly {
                try log.truncate(to: 0)
                try log.write(header.encoded(), at: 0)
                if sync {
                    try log.sync()
                    try FileSystem.syncDirectory(containing: path)
                }
            }
            recovered.validEnd = header.unitsStart
            recovered.unitsStart = header.unitsStart
            recovered.fileSize = header.unitsStart
            recovered.formatVersion = header.version
        } else if recovered.problem != nil {
            report = try Recovery.leaveOut(&recovered, of: log, storePath: filePath, configuration: configuration)
        }
        let writer = Writer(
            generation: log, types: recovered.types, appendOffset: recovered.validEnd,
            lastSequence: recovered.lastSequence,
            hasUnsyncedChanges: !sync && !configuration.readOnly && (recovered.needsHeader || recovered.problem != nil),
            lock: lock, registration: registration, formatVersion: recovered.formatVersion,
            checkpointNumber: recovered.highestCheckpointNumber,
            checkpointEnd: recovered.checkpoint.map { $0.unitOffset + UInt64($0.unitLength) } ?? recovered.unitsStart,
            keys: keys)
        let published = Published(
            index: recovered.index, generation: log, sequence: recovered.lastSequence,
            fileSize: recovered.fileSize, formatVersion: recovered.formatVersion,
            checkpoint: recovered.checkpoint)
        self.init(
            path: path, filePath: filePath, configuration: configuration, faults: faults, writer: writer, published: published,
            recoveryReport: report)
        if !configuration.readOnly, (log as? EncryptedLog)?.rewritesInPlace == true {
            // An encrypted file in format 1 rewrites its last page in place, which a power cut can
            // tear: it is rewritten in format 2 now, by a compaction (crash-safe: the old file or
            // the new one). Should that fail, the store stays in format 1, which it can still write.
            do {
                try compact()
            } catch {
                let failure = error as? StorageError ?? StorageError(.io(operation: "compact", path: path, errno: 0))
                self.published.withLock { $0.lastAutoCompactionError = failure }
            }
        }
    }

    /// Opens `filePath` for reading beside a writer: no lock, no registration (a reader has its
    /// own index and writes nothing, so it may share a process with the writer), `O_RDONLY`, and
    /// a scan that stops before the first unit not yet written whole. Reads go through the file's
    /// mapping only up to the end of the units it validated.
    ///
    /// A unit a writer is appending looks like a torn final commit: the reader leaves it out
    /// (without cutting it off) and reads it on a later refresh. Damage is judged as a writer's
    /// open judges it, after a second and third look 20 ms apart (a unit seen half-written cannot
    /// be told from damage by its bytes alone): `.strict` refuses it, `.recoverValidPrefix`
    /// reads the units before it.
    private static func openBesideWriter(
        path: String, filePath: String, configuration: EngineConfiguration, keys: EncryptionKeys?, faults: FaultInjection?
    ) throws -> (Writer, Published) {
        let descriptor: Int32
        do {
            descriptor = try FileSystem.openRegularFile(filePath, flags: O_RDONLY)
        } catch let error as StorageError {
            if case .notARegularFile(_, let fileType) = error.kind { throw StorageError(.notARegularFile(path: path, fileType: fileType)) }
            throw error
        }
        guard descriptor >= 0 else { throw FileSystem.ioError("open the store file", path) }
        // The log owns the descriptor from here on, and closes it should opening fail.
        let file = FileLog(path: path, descriptor: descriptor, faults: faults, mappedSize: 0)
        guard let identity = FileIdentity(descriptor: descriptor) else { throw FileSystem.ioError("read the status of", path) }
        let log = try EncryptedLog.storage(for: file, keys: keys, writable: false, followsWriter: true)
        var recovered = try Recovery.scan(log, fromCheckpoint: true, followingWriter: true)
        for _ in 0..<2 {
            guard let problem = recovered.problem, problem.kind != .tornTail else { break }
            var pause = timespec(tv_sec: 0, tv_nsec: 20_000_000)
            _ = nanosleep(&pause, nil)
            recovered = try Recovery.scan(log, fromCheckpoint: true, followingWriter: true)
        }
        if let problem = recovered.problem {
            switch problem.kind {
            case .damagedCompaction(let compactedEnd):
                throw StorageError(.compactionDamaged(
                    path: path, offset: problem.offset, compactedEnd: compactedEnd, fileSize: recovered.fileSize,
                    reason: problem.reason))
            case .damage where configuration.recoveryMode == .strict:
                throw StorageError(.corrupted(path: path, offset: problem.offset, reason: problem.reason))
            case .damage, .tornTail:
                break
            }
        }
        if recovered.needsHeader {
            // The writer is creating the file: nothing is committed yet.
            let header = LogHeader()
            recovered.validEnd = header.unitsStart
            recovered.unitsStart = header.unitsStart
            recovered.formatVersion = header.version
            recovered.numbering = nil
        } else {
            (log as? FileLog)?.extendMapping(to: recovered.validEnd)
        }
        let following = Following(
            identity: identity, file: file, numbering: recovered.numbering,
            seenSize: log is FileLog ? recovered.fileSize : try file.size(), seenLogSize: recovered.fileSize, streams: recovered.streams)
        let writer = Writer(
            generation: log, types: recovered.types, appendOffset: recovered.validEnd, lastSequence: recovered.lastSequence,
            formatVersion: recovered.formatVersion, checkpointNumber: recovered.highestCheckpointNumber,
            checkpointEnd: recovered.checkpoint.map { $0.unitOffset + UInt64($0.unitLength) } ?? recovered.unitsStart,
            following: following, keys: keys)
        let published = Published(
            index: recovered.index, generation: log, sequence: recovered.lastSequence, fileSize: recovered.validEnd,
            formatVersion: recovered.formatVersion, checkpoint: recovered.checkpoint)
        return (writer, published)
    }

    /// Makes the commits a writer in another process made since the last refresh (or the open)
    /// visible to new snapshots, for an engine opened with `readsBesideWriter`; does nothing on
    /// a writer, which sees its own commits at once.
    ///
    /// A commit becomes visible whole or not at all: the refresh reads the units appended after
    /// the end it validated, up to the first one not yet written whole (a writer may be
    /// appending it), and reads nothing past that. When the store's path names another file
    /// (compaction renamed a new one over it) or the file is shorter than what was read (a new
    /// writer rewrote it), the refresh opens the path anew. Snapshots taken before keep reading
    /// the state they show, from the file they were taken on. Never writes, locks or waits for
    /// the writer.
    ///
    /// ```swift
    /// let outcome = try reader.refresh()
    /// if outcome.hasNewCommits { print("now at commit", outcome.sequence) }
    /// ```
    ///
    /// - Throws: `StorageError` when the engine is closed, a system call fails, or the file
    ///   opened anew is not a store (the previous state then stays).
    @discardableResult
    public func refresh() throws -> RefreshOutcome {
        try writer.withLock { writer in
            if writer.isClosed { throw StorageError(.closed) }
            let previous = writer.lastSequence
            let unchanged = RefreshOutcome(previousSequence: previous, sequence: previous, writtenTypes: [], reopened: false)
            guard var following = writer.following, let path, let filePath else {
                return unchanged
            }
            let log = writer.generation
            let fileSize = try following.file.size()
            let size = try log.size()
            let replaced = FileIdentity(path: filePath).map { $0 != following.identity } ?? false
            let stuck = following.numbering == nil && (fileSize != following.seenSize || size != following.seenLogSize)
            if replaced || stuck || size < writer.appendOffset {
                let (opened, openedState) = try Self.openBesideWriter(
                    path: path, filePath: filePath, configuration: configuration, keys: writer.keys, faults: faults)
                let definitions = published.withLock { Array($0.secondary.definitions.values) }
                let secondary = definitions.isEmpty ? SecondaryIndexes() : try SecondaryIndexes(
                    definitions: definitions,
                    snapshot: EngineSnapshot(index: openedState.index, generation: openedState.generation, sequence: openedState.sequence))
                writer = opened
                publish { state in
                    state.index = openedState.index
                    state.generation = openedState.generation
                    state.sequence = openedState.sequence
                    state.fileSize = openedState.fileSize
                    state.formatVersion = openedState.formatVersion
                    state.checkpoint = openedState.checkpoint
                    state.secondary = secondary
                }
                return RefreshOutcome(previousSequence: previous, sequence: opened.lastSequence, writtenTypes: nil, reopened: true)
            }
            following.seenSize = fileSize
            following.seenLogSize = size
            writer.following = following
            guard size > writer.appendOffset, let numbering = following.numbering else { return unchanged }
            let tail = try Recovery.follow(
                log, from: writer.appendOffset, types: writer.types, numbering: numbering, lastSequence: writer.lastSequence,
                formatVersion: writer.formatVersion, streams: following.streams)
            guard tail.validEnd > writer.appendOffset else { return unchanged }
            (log as? FileLog)?.extendMapping(to: tail.validEnd)
            let secondary = try followedSecondaryIndexes(tail, log: log)
            var applyFailure: (any Error)?
            publish { state in
                do {
                    try state.index.apply(tail.operations)
                } catch {
                    // Unreachable in practice: `followedSecondaryIndexes` read every block this reads.
                    applyFailure = error
                }
                state.secondary = secondary
                state.sequence = tail.lastSequence
                state.fileSize = tail.validEnd
            }
            writer.types = tail.types
            writer.appendOffset = tail.validEnd
            writer.lastSequence = tail.lastSequence
            writer.following?.numbering = tail.numbering
            writer.following?.streams = tail.streams
            if let applyFailure {
                // The next refresh reads the file anew rather than build on a half-applied tail.
                writer.following?.numbering = nil
                writer.following?.seenSize = .max
                throw applyFailure
            }
            return RefreshOutcome(
                previousSequence: previous, sequence: tail.lastSequence, writtenTypes: tail.writtenTypes, reopened: false)
        }
    }

    /// The secondary indexes with a followed tail applied, after checking that the index can
    /// read every persisted block the tail's operations touch. Throws, changing nothing, when
    /// it cannot.
    private func followedSecondaryIndexes(_ tail: FollowedTail, log: any LogStorage) throws -> SecondaryIndexes {
        let (base, current) = published.withLock { ($0.index, $0.secondary) }
        try base.checkReadable(tail.operations)
        let indexed = Set(current.definitions.values.map(\.typeName))
        guard !indexed.isDisjoint(with: tail.writtenTypes) else { return current }
        var secondary = current
        let operations = try Self.batchOperations(tail.operations, readingValuesOf: indexed, from: log)
        try secondary.apply(operations) { type, key in
            try GroupValues.stored(type: type, key: key, base: base, log: log)
        }
        return secondary
    }

    var displayPath: String { path ?? ":memory:" }

    /// Bytes of units past which a compaction or rewrite writes a checkpoint; nil for none.
    private var checkpointAfter: Int? { configuration.checkpointInterval > 0 ? configuration.checkpointInterval : nil }

    /// Batches waiting for the writer, in the order submitted; whoever holds the writer next
    /// writes all of them.
    private let queue = Lock<[CommitTicket]>([])

    /// Appends `batch` as one unit and makes it visible, all or nothing: ``submit(_:after:onPublish:)``
    /// and ``wait(for:)`` in one call.
    ///
    /// Returns the unit's sequence number (the current one, writing nothing, for an empty
    /// batch). With `.full` durability the unit is on disk when this returns. After a failed
    /// sync every later write throws `syncFailed`: reopen the store.
    @discardableResult
    public func commit(_ batch: WriteBatch) throws -> UInt64 {
        try wait(for: submit(batch))
    }

    /// Queues `batch` behind every batch submitted before it, without writing anything yet.
    ///
    /// Batches are written in the order submitted. `dependency` is a batch submitted earlier that
    /// this one was computed from before it was durable: if it is refused, so is this one
    /// (`precedingCommitFailed`), and nothing of it is written. `onPublish` runs once the unit
    /// is visible to new snapshots, in commit order, before any ``wait(for:)`` for it returns.
    public func submit(
        _ batch: WriteBatch, after dependency: CommitTicket? = nil, onPublish: (@Sendable () -> Void)? = nil
    ) -> CommitTicket {
        let ticket = CommitTicket(batch: batch, stream: nil, dependency: dependency, onPublish: onPublish)
        queue.withLock { $0.append(ticket) }
        return ticket
    }

    /// Queues the commit of `stream`: one unit that makes the stream's pieces and then `batch`
    /// visible together, all or nothing, as ``submit(_:after:onPublish:)`` queues a batch.
    ///
    /// The stream takes no more writes once submitted. If the commit is refused (a unique index
    /// it breaks, a failed dependency, a compaction since the stream began), none of the stream
    /// is visible and its pieces stay in the log as dead bytes.
    ///
    /// ```swift
    /// let stream = try engine.beginStream()!
    /// _ = try stream.write(firstHalf)
    /// try engine.wait(for: engine.submit(lastOperations, completing: stream))
    /// ```
    public func submit(
        _ batch: WriteBatch, completing stream: WriteStream, after dependency: CommitTicket? = nil,
        onPublish: (@Sendable () -> Void)? = nil
    ) -> CommitTicket {
        let ticket = CommitTicket(batch: batch, stream: stream, dependency: dependency, onPublish: onPublish)
        queue.withLock { $0.append(ticket) }
        return ticket
    }

    /// Waits until `ticket`'s batch is written (and synced, with `.full` durability) or refused.
    ///
    /// The first waiter to get the writer writes every queued batch, each as its own unit,
    /// behind one shared sync; waiters whose batch it wrote return without syncing again
    /// (group commit).
    ///
    /// - Returns: The unit's sequence number.
    @discardableResult
    public func wait(for ticket: CommitTicket) throws -> UInt64 {
        let outcome = ticket.outcome ?? writer.withLock { writer -> Result<UInt64, StorageError>? in
            // A writer that held the lock before us may already have written our batch.
            if let done = ticket.outcome { return done }
            writeQueued(writer: &writer)
            // The checkpoint first: the runs its merges replace count towards a compaction now,
            // and a compaction after it reads every key from runs, in key order.
            maybeCheckpoint(writer: &writer)
            maybeCompact(writer: &writer)
            return ticket.outcome
        }
        switch outcome {
        case .success(let sequence): return sequence
        case .failure(let error): throw error
        case nil: throw StorageError(.closed)  // Unreachable: every drained ticket gets an outcome.
        }
    }

    /// Writes every queued batch as one group.
    private func writeQueued(writer: inout Writer) {
        let group = queue.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
        if !group.isEmpty { appendGroup(group, writer: &writer) }
    }

    func checkWritable(_ writer: Writer) throws {
        if writer.isClosed { throw StorageError(.closed) }
        if configuration.refusesWrites { throw StorageError(.readOnly) }
        if let poison = writer.poison { throw poison }
    }

    /// Writes every request of `group` as its own unit with one write and one sync, and gives
    /// each request its outcome. A request that cannot be encoded fails alone; a failed write
    /// or sync fails the whole group, and none of it becomes visible.
    private func appendGroup(_ group: [CommitTicket], writer: inout Writer) {
        func finish(_ tickets: [CommitTicket], _ outcome: Result<UInt64, StorageError>) {
            for ticket in tickets { ticket.finish(outcome) }
        }
        do {
            try checkWritable(writer)
        } catch {
            finish(group, .failure(error as? StorageError ?? StorageError(.closed)))
            return
        }
        let start = writer.appendOffset
        var types = writer.types
        var sequence = writer.lastSequence
        var frames: [UInt8] = []
        var applies: [GroupApply] = []
        var written: [(request: CommitTicket, sequence: UInt64)] = []
        let (base, publishedLog) = published.withLock { ($0.index, $0.generation) }
        var secondary = published.withLock { $0.secondary }
        // Values the group's earlier units wrote, which the next unit's index update replaces.
        var groupValues = GroupValues(log: publishedLog)
        for request in group {
            if request.takeDependencyFailure() {
                request.stream?.abandon()
                request.finish(.failure(StorageError(.precedingCommitFailed)))
                continue
            }
            // A stream's pieces, once taken here, are never written to again: the stream is finished
            // whether this commit succeeds or not.
            var streamed: WriteStream.State?
            if let stream = request.stream {
                guard let taken = stream.finish(), stream.generation === writer.generation else {
                    request.finish(.failure(StorageError(.streamEnded(path: displayPath))))
                    continue
                }
                streamed = taken
            }
            if request.batch.isEmpty, streamed?.pieces.isEmpty ?? true {
                request.finish(.success(sequence))
                continue
            }
            let unitStart = start + UInt64(frames.count)
            var unitTypes = types
            var opening = ByteWriter()
            if let streamed, let id = streamed.id {
                StreamReference(stream: id, pieces: UInt64(streamed.pieces.count), check: streamed.check).encode(into: &opening)
                // The pieces number their types themselves; the file's table learns them here.
                for type in streamed.types.sorted() {
                    _ = OperationCodec.typeID(type, types: &unitTypes, writer: &opening)
                }
            }
            let (encoded, decoded) = OperationCodec.encode(
                request.batch.operations, types: &unitTypes,
                fileOffset: unitStart + UInt64(LogFrame.headerSize + opening.bytes.count),
                packing: OperationCodec.Packing(format: writer.formatVersion))
            let payload = opening.bytes.isEmpty ? encoded : opening.bytes + encoded
            if payload.count > LogFrame.maximumPayload {
                request.finish(.failure(StorageError(.batchTooLarge(size: payload.count, limit: LogFrame.maximumPayload))))
                continue
            }
            if unitStart + UInt64(LogFrame.headerSize + payload.count) > ValueLocation.offsetLimit {
                request.finish(.failure(StorageError(.fileTooLarge(path: displayPath, limit: ValueLocation.offsetLimit))))
                continue
            }
            guard sequence < LogFrame.maximumSequence else {
                request.finish(.failure(StorageError(.sequenceExhausted(path: displayPath, last: sequence))))
                continue
            }
            // The index checks come last: a refusal after them would leave the refused unit's
            // entries in the group's indexes, which the group then publishes.
            do {
                if let streamed {
                    // Checked on copies: a stream refused after some of its pieces leaves the
                    // group's indexes as they were.
                    var streamSecondary = secondary
                    var streamValues = groupValues
                    try base.checkReadable(request.batch.operations)
                    try checkStreamed(
                        streamed, then: request.batch.operations, base: base, secondary: &streamSecondary, groupValues: &streamValues,
                        log: publishedLog, spillBound: streamKeysInMemory < Int.max && writer.formatVersion >= 2 ? streamIndexEntriesInMemory : nil)
                    secondary = streamSecondary
                    groupValues = streamValues
                } else {
                    // Applying the unit to the index reads the run blocks of the keys it touches: a
                    // damaged one refuses the commit here, before anything is written.
                    try base.checkReadable(request.batch.operations)
                    if !secondary.isEmpty {
                        try secondary.apply(request.batch.operations) { type, key in
                            try groupValues.value(type: type, key: key, base: base, log: publishedLog)
                        }
                    }
                }
            } catch {
                request.finish(.failure(error as? StorageError ?? StorageError(.closed)))
                continue
            }
            sequence += 1
            types = unitTypes
            if !secondary.isEmpty { groupValues.record(request.batch.operations) }
            frames += LogFrame.encode(sequence: sequence, payload: payload)
            if let streamed, !streamed.pieces.isEmpty { applies.append(.pieces(streamed.pieces)) }
            applies.append(.operations(decoded))
            written.append((request, sequence))
        }
        // Ended before the group is applied: a copy of the published index held past `publish`
        // shares every type's fields with it, and each touched type's key maps would be copied
        // rather than changed in place.
        _ = consume base
        guard !written.isEmpty else { return }
        let log = writer.generation
        do {
            try log.write(frames, at: start)
        } catch {
            // Whatever part of the units reached the file must not outlive this failure.
            do {
                try log.truncate(to: start)
                if configuration.durability == .full { try log.sync() }
            } catch {
                writer.poison = StorageError(.syncFailed(path: displayPath))
            }
            finish(written.map(\.request), .failure(error as? StorageError ?? StorageError(.syncFailed(path: displayPath))))
            return
        }
        if configuration.durability == .full {
            do {
                try log.sync()
            } catch {
                // Never retry a failed sync: the kernel may have dropped the dirty pages already.
                let poison = error as? StorageError ?? StorageError(.syncFailed(path: displayPath))
                writer.poison = poison
                finish(written.map(\.request), .failure(poison))
                return
            }
        }
        writer.hasUnsyncedChanges = configuration.durability == .none
        writer.types = types
        writer.appendOffset = start + UInt64(frames.count)
        writer.lastSequence = sequence
        let end = writer.appendOffset
        var applyFailure: (any Error)?
        // Past `streamKeysInMemory` keys of a type, a stream's keys go to a scratch file's runs
        // until the checkpoint that follows.
        let spillBound = streamKeysInMemory
        let spills = spillBound < Int.max && writer.formatVersion >= 2
        publish { state in
            do {
                for apply in applies {
                    switch apply {
                    case .operations(let operations):
                        try state.index.apply(operations)
                    case .pieces(let pieces):
                        // Read back one piece at a time: the stream's operations are never all in
                        // memory, and past the bound neither are its keys.
                        var spilling = spills
                        var spill: StreamSpill?
                        for piece in pieces {
                            try state.index.apply(
                                StreamPiece.read(piece, from: log), capacityLimit: spilling ? spillBound : Int(Int32.max))
                            guard spilling, state.index.types.values.contains(where: { $0.memoryCount >= spillBound }) else { continue }
                            if spill == nil { spill = StreamSpill(bound: spillBound, log: log) }
                            do {
                                try spill?.spill(&state.index)
                            } catch {
                                // A failed write to the scratch file: the keys stay in memory.
                                spill = nil
                            }
                            // No scratch file: likewise.
                            spilling = spill != nil
                        }
                    }
                }
            } catch {
                // Unreachable in practice: `checkReadable` read every block this reads, and the
                // pieces were checked as they were read back before the commit.
                applyFailure = error
            }
            state.secondary = secondary
            state.sequence = sequence
            state.fileSize = end
            if configuration.durability == .full { state.commitSyncs += 1 }
        }
        if let applyFailure {
            let failure = applyFailure as? StorageError ?? StorageError(.syncFailed(path: displayPath))
            writer.poison = failure
            finish(written.map(\.request), .failure(failure))
            return
        }
        for (request, _) in written {
            request.onPublish?()
        }
        for (request, unitSequence) in written {
            request.finish(.success(unitSequence))
        }
    }

    /// What a group applies to the index once it is written, in order: a unit's own operations,
    /// or the pieces of a stream it commits, read back from the log.
    private enum GroupApply {
        case operations([DecodedOperation])
        case pieces([StreamPiece.Span])
    }

    /// Checks that the index can take a stream's pieces, reading them back one at a time, and
    /// updates `secondary` with them (reading the indexed types' values from the log), then with
    /// `tail`, the commit unit's own operations; throws, for a damaged run block or a unique
    /// index they break, before anything is written. With a `spillBound`, an index's entries
    /// past it, and all of them at the end, go to a scratch file's runs (`StreamIndexSpill`):
    /// the tail's too, so that a bulk load leaves each index one run and nothing in memory.
    private func checkStreamed(
        _ streamed: WriteStream.State, then tail: [WriteBatch.Operation], base: KeyIndex, secondary: inout SecondaryIndexes,
        groupValues: inout GroupValues, log: any LogStorage, spillBound: Int?
    ) throws {
        let indexed = Set(secondary.definitions.values.map(\.typeName))
        let touchesIndexes = !indexed.isDisjoint(with: streamed.types)
        // Only keys a checkpoint's runs hold can meet a damaged block.
        let touchesRuns = streamed.types.contains { base.types[$0]?.runs.isEmpty == false }
        guard touchesIndexes || touchesRuns else {
            if !secondary.isEmpty {
                let values = groupValues
                try secondary.apply(tail) { type, key in try values.value(type: type, key: key, base: base, log: log) }
            }
            return
        }
        // One update for every piece: the commit's entries are merged and checked once.
        var update = IndexUpdate(secondary, spill: spillBound.map { StreamIndexSpill(bound: $0, log: log) })
        for piece in streamed.pieces {
            let readBack = try StreamPiece.readBack(piece, from: log)
            let decoded = readBack.operations
            try base.checkReadable(decoded)
            guard touchesIndexes else { continue }
            // A few hundred operations at a time: a piece's values are not all copied out at once.
            for start in stride(from: 0, to: decoded.count, by: 256) {
                let some = Array(decoded[start..<min(start + 256, decoded.count)])
                let operations = try Self.batchOperations(some, readingValuesOf: indexed, from: log, within: readBack)
                try update.add(operations, streamed: some, values: &groupValues) { type, key in
                    try GroupValues.stored(type: type, key: key, base: base, log: log)
                }
            }
        }
        if !secondary.isEmpty {
            try update.add(tail, values: &groupValues) { type, key in try GroupValues.stored(type: type, key: key, base: base, log: log) }
        }
        secondary = try update.finish()
    }

    /// Decoded operations as batch operations, the values of `types`' puts read from `log` (the
    /// others left empty: no index reads them), or taken from `piece` when it holds them.
    static func batchOperations(
        _ decoded: [DecodedOperation], readingValuesOf types: Set<String>, from log: any LogStorage,
        within piece: StreamPiece.ReadBack? = nil
    ) throws -> [WriteBatch.Operation] {
        try decoded.map { operation -> WriteBatch.Operation in
            switch operation {
            case .put(let type, let key, let offset, let length):
                guard types.contains(type) else { return .put(type: type, key: key, value: []) }
                return .put(type: type, key: key, value: try piece?.bytes(at: offset, count: length) ?? log.read(at: offset, count: length))
            case .delete(let type, let key): return .delete(type: type, key: key)
            case .deleteAll(let type): return .deleteAll(type: type)
            case .setSchema(let type, let schema): return .setSchema(type: type, schema: schema)
            case .setMetadata(let key, let value): return .setMetadata(key: key, value: value)
            case .reserveCapacity(let type, let integers, let strings, let byteStrings):
                return .reserveCapacity(type: type, integers: integers, strings: strings, byteStrings: byteStrings)
            }
        }
    }

    private func maybeCompact(writer: inout Writer) {
        guard case .whenDeadBytesExceed(let ratio, let minimumFileSize) = configuration.autoCompaction,
              !configuration.refusesWrites, writer.poison == nil, !writer.isClosed,
              openStreams.load(ordering: .acquiring) == 0 else { return }
        let size = writer.appendOffset
        let rotates = (writer.generation as? EncryptedLog)?.needsNewKey ?? false
        guard size >= UInt64(max(0, minimumFileSize)) || rotates else { return }
        let live = published.withLock { UInt64($0.index.liveBytes) + $0.indexBytes }
        let header = writer.formatVersion >= 2 ? UInt64(LogHeader.regionSize) : UInt64(LogHeader.size)
        let dead = size > live + header ? size - live - header : 0
        let superseded = Double(writer.supersededIndexBytes) > Compaction.supersededIndexShare * Double(size)
        guard Double(dead) > ratio * Double(size) || superseded || rotates else { return }
        do {
            try compact(writer: &writer)
            published.withLock { $0.lastAutoCompactionError = nil }
        } catch {
            let failure = error as? StorageError ?? StorageError(.io(operation: "compact", path: displayPath, errno: 0))
            published.withLock { $0.lastAutoCompactionError = failure }
        }
    }

    /// Writes a checkpoint once the units since the last one pass `checkpointInterval` bytes, so
    /// that opening replays at most about that much. A failure leaves the previous checkpoint in
    /// force and the commits standing; it is reported in `statistics.lastCheckpointError`.
    private func maybeCheckpoint(writer: inout Writer) {
        guard filePath != nil, !configuration.refusesWrites, configuration.checkpointInterval > 0, writer.formatVersion >= 2,
              writer.poison == nil, openStreams.load(ordering: .acquiring) == 0,
              !writer.isClosed, writer.appendOffset > writer.checkpointEnd,
              writer.appendOffset - writer.checkpointEnd >= UInt64(configuration.checkpointInterval)
        else { return }
        do {
            try checkpoint(writer: &writer)
            published.withLock { $0.lastCheckpointError = nil }
        } catch {
            let failure = error as? StorageError ?? StorageError(.io(operation: "checkpoint", path: displayPath, errno: 0))
            published.withLock { $0.lastCheckpointError = failure }
        }
    }

    /// Writes every type's changes since the last checkpoint as key runs and a checkpoint unit
    /// after the last commit, syncs them, then points the next header slot at the checkpoint and
    /// syncs that: a crash before the slot's sync leaves the previous checkpoint in force.
    private func checkpoint(writer: inout Writer) throws {
        let start = writer.appendOffset
        let (index, secondary) = published.withLock { ($0.index, $0.secondary) }
        let log = writer.generation
        let sync = configuration.durability == .full
        let written: Checkpoint.Written
        do {
            written = try Checkpoint.write(
                index: index, secondary: secondary, types: writer.types, log: log, at: start, sequence: writer.lastSequence,
                number: writer.checkpointNumber + 1, format: writer.formatVersion)
            if sync { try log.sync() }
        } catch {
            // Nothing points at what was appended: cut it off, so the next commit follows the last one.
            do {
                try log.truncate(to: start)
                if sync { try log.sync() }
            } catch {
                writer.poison = StorageError(.syncFailed(path: displayPath))
            }
            throw error
        }
        // The runs the log held before plus those this checkpoint wrote, less those it names now
        // (a merge that lists blocks as they lie names bytes it did not write). Superseded
        // checkpoint units are left to the dead-byte share: they grow with the file, not with merges.
        let before = UInt64(index.runBytes(in: log))
        let after = UInt64(written.index.runBytes(in: log))
        let wroteRuns = written.end - start - UInt64(written.slot.unitLength)
        writer.supersededIndexBytes += before + wroteRuns > after ? before + wroteRuns - after : 0
        writer.appendOffset = written.end
        writer.checkpointEnd = written.end
        writer.checkpointNumber = written.slot.number
        writer.hasUnsyncedChanges = !sync
        do {
            try log.write(written.slot.encoded(), at: CheckpointSlot.offset(forNumber: written.slot.number))
            if sync { try log.sync() }
        } catch {
            // Whether the slot reached the disk is unknown; either slot still names an intact checkpoint.
            writer.poison = StorageError(.syncFailed(path: displayPath))
            throw writer.poison ?? error
        }
        publish { state in
            state.index = written.index
            state.secondary = written.secondary
            state.fileSize = written.end
            state.checkpoints += 1
            state.checkpoint = written.slot
        }
    }

    /// A consistent view as of the last acknowledged commit.
    public func snapshot() -> EngineSnapshot {
        published.withLock { state in
            if let snapshot = state.snapshot { return snapshot }
            state.index.provideFileOrderCaches()
            state.secondary.providePositionsMemos()
            let snapshot = EngineSnapshot(
                index: state.index, generation: state.generation, sequence: state.sequence, secondary: state.secondary,
                version: publishedVersion.load(ordering: .relaxed), formatVersion: state.formatVersion)
            state.snapshot = snapshot
            return snapshot
        }
    }

    /// The version of the newest state, which every commit, compaction, index definition and
    /// closing changes: a snapshot whose ``EngineSnapshot/version`` equals it is still current.
    /// Takes no lock.
    public var version: UInt64 { publishedVersion.load(ordering: .acquiring) }

    /// Changes what snapshots see, under the lock, and counts the change.
    func publish(_ change: (inout Published) -> Void) {
        published.withLock { state in
            // A snapshot of this state may still be read, or was read by a thread that has not
            // taken this lock since: the change must not write where it read, even once no
            // snapshot holds the index any more.
            if state.snapshot != nil { state.index.markShown() }
            state.snapshot = nil
            change(&state)
            publishedVersion.wrappingAdd(1, ordering: .releasing)
        }
    }

    /// Replaces the secondary indexes with `definitions`, kept in step with each later commit and
    /// written to the log's runs by each checkpoint. Define them after each open: an index the
    /// newest checkpoint persisted for the same definition (see ``IndexDefinition/fingerprint``)
    /// is read from its runs plus the objects changed since; any other is built now from every
    /// stored object of its type.
    ///
    /// - Throws: `StorageError` when stored objects already share a key of a unique index, a
    ///   stored value's keys cannot be read, or a persisted run is damaged; the previous indexes
    ///   then stay.
    public func defineIndexes(_ definitions: [IndexDefinition]) throws {
        try writer.withLock { writer in
            if writer.isClosed { throw StorageError(.closed) }
            let current = published.withLock { $0.secondary }
            let built = try SecondaryIndexes(definitions: definitions, snapshot: snapshot(), reusing: current)
            publish { $0.secondary = built }
        }
    }

    /// Rewrites the live objects, schemas and metadata into a new log and swaps it in
    /// atomically (temp file, sync, rename, directory sync). Sequence numbers keep counting.
    /// Snapshots taken before keep reading the old log until they are released.
    public func compact() throws {
        try writer.withLock { writer in
            try checkWritable(writer)
            try compact(writer: &writer)
        }
    }

    /// Encrypts the store, changes its passphrase or key, or decrypts it (`nil`). Between two
    /// secrets only the key slot in the file's clear first page is rewritten, synced, and the old
    /// slot wiped: the data stays as it is, a crash leaves the old or the new secret opening the
    /// store, and once this returns the old one opens nothing. Encrypting a plain store and
    /// decrypting an encrypted one rewrite it as `compact()` does (a new file renamed over the
    /// old, crash-safe). Later opens need the new secret in `EngineConfiguration.encryption`.
    /// An in-memory engine has nothing on disk and does nothing.
    ///
    /// ```swift
    /// try engine.changeEncryption(to: .passphrase("a new passphrase"))
    /// ```
    ///
    /// `compact()` rotates an encrypted store's data key: every new file has a new random one.
    ///
    /// - Throws: `emptyPassphrase` or `invalidKeyLength` for a secret that could open nothing,
    ///   and the errors of `compact()`; the store is then as it was. A failure while the key slot
    ///   is written leaves either secret in force, and the engine refuses further writes
    ///   (`syncFailed`): reopen it.
    public func changeEncryption(to encryption: EngineConfiguration.Encryption?) throws {
        let keys = try encryption.map { (encryption) throws(StorageError) in
            try EncryptionKeys(encryption.secret, iterations: configuration.keyDerivationIterations)
        }
        try writer.withLock { writer in
            try checkWritable(writer)
            guard filePath != nil else { return }
            if let keys, let log = writer.generation as? EncryptedLog {
                do {
                    try log.rewrapDataKey(for: keys)
                } catch {
                    writer.poison = StorageError(.syncFailed(path: displayPath))
                    throw error
                }
                writer.keys = keys
                return
            }
            let previous = writer.keys
            writer.keys = keys
            do {
                try compact(writer: &writer)
            } catch {
                writer.keys = previous
                throw error
            }
        }
    }

    private func compact(writer: inout Writer) throws {
        let (source, secondary) = published.withLock { ($0.index, $0.secondary) }
        let result: Compaction.Result
        if let filePath {
            result = try Compaction.compactFile(
                path: filePath, index: source, secondary: secondary, from: writer.generation, lastSequence: writer.lastSequence,
                checkpointAfter: checkpointAfter, keysInMemory: configuration.rewriteKeysInMemory, encryptedWith: writer.keys, faults: faults,
                poison: &writer.poison)
        } else {
            result = try Compaction.compactMemory(index: source, from: writer.generation, lastSequence: writer.lastSequence)
        }
        install(result, writer: &writer)
    }

    /// Replaces the whole stored state at once with what `produce` writes, reading the current
    /// state from the snapshot it is given: the store is rewritten into a new file (synced, then
    /// renamed over the old one, as compaction does), so a failure or a crash at any moment leaves
    /// either the old state or the complete new one. `validate` sees the new state before it
    /// replaces the old and may refuse it by throwing. The new state is one commit: its sequence
    /// number follows the last one. The secondary `indexes` are built on the new state before it
    /// replaces the old, so a unique index it breaks refuses it.
    ///
    /// - Throws: What `produce` or `validate` throw, or `StorageError`; the store is then unchanged.
    public func rewrite(
        indexes: [IndexDefinition],
        _ produce: (EngineSnapshot, inout LogRewriter) throws -> Void,
        validate: (EngineSnapshot) throws -> Void = { _ in }
    ) throws {
        try writer.withLock { writer in
            try checkWritable(writer)
            guard writer.lastSequence < LogFrame.maximumSequence else {
                throw StorageError(.sequenceExhausted(path: displayPath, last: writer.lastSequence))
            }
            let source = snapshot()
            let sequence = writer.lastSequence + 1
            func write(_ target: any LogStorage) throws -> Compaction.Result {
                try Compaction.rewrite(
                    into: target, sequence: sequence, checkpointAfter: target is MemoryLog ? nil : checkpointAfter,
                    keysInMemory: configuration.rewriteKeysInMemory, indexes: indexes
                ) {
                    try produce(source, &$0)
                }
            }
            var built = SecondaryIndexes()
            func check(_ result: Compaction.Result) throws {
                let snapshot = EngineSnapshot(index: result.index, generation: result.generation, sequence: sequence)
                try validate(snapshot)
                // The indexes the rewrite wrote as runs are taken as they are (checked unique).
                built = try SecondaryIndexes(definitions: indexes, snapshot: snapshot, reusing: result.secondary)
            }
            let result: Compaction.Result
            if let filePath {
                result = try Compaction.replaceFile(
                    path: filePath, replacing: writer.generation, encryptedWith: writer.keys, faults: faults, poison: &writer.poison,
                    validate: check, write: write)
            } else {
                result = try write(MemoryLog())
                try check(result)
            }
            writer.lastSequence = sequence
            install(result, writer: &writer)
            publish { state in
                state.sequence = sequence
                state.secondary = built
            }
        }
    }

    /// The most the last compaction or rewrite held in memory at once: for tests that it does
    /// not grow with the store.
    var lastRewriteHeld: Compaction.Held {
        writer.withLock { $0.lastRewriteHeld }
    }

    private func install(_ result: Compaction.Result, writer: inout Writer) {
        writer.lastRewriteHeld = result.held
        writer.supersededIndexBytes = 0
        writer.generation = result.generation
        writer.types = result.types
        writer.appendOffset = result.size
        writer.hasUnsyncedChanges = false
        writer.formatVersion = LogHeader.currentVersion
        writer.checkpointNumber = result.checkpoint?.number ?? 0
        writer.checkpointEnd = result.size
        publish { state in
            state.index = result.index
            if let secondary = result.secondary { state.secondary = secondary }
            state.generation = result.generation
            state.fileSize = result.size
            state.compactions += 1
            state.formatVersion = LogHeader.currentVersion
            if result.checkpoint != nil { state.checkpoints += 1 }
            state.checkpoint = result.checkpoint
        }
    }

    /// Releases the lock and the file. Snapshots taken earlier stay readable; later calls
    /// throw `closed` (closing twice does nothing). With `.none` durability the log is synced
    /// once here if anything was written, so a bulk load is durable when `close` returns. When
    /// many bytes of commits follow the last checkpoint, a checkpoint is written first, so the
    /// next open reads it rather than those commits.
    public func close() throws {
        try writer.withLock { writer in
            if writer.isClosed { return }
            // Batches already submitted are written first: their writers are waiting for them.
            writeQueued(writer: &writer)
            writer.isClosed = true
            defer {
                // Snapshots may keep the file open for reading; its lock goes now.
                writer.generation.backingFile?.unlock()
                let closedLog = ClosedLog(path: displayPath)
                writer.generation = closedLog
                writer.lock = nil
                writer.registration = nil
                publish { $0.generation = closedLog }
            }
            if writer.hasUnsyncedChanges, writer.poison == nil {
                try writer.generation.sync()
                writer.hasUnsyncedChanges = false
            }
            checkpointAtClose(writer: &writer)
            if writer.hasUnsyncedChanges, writer.poison == nil {
                try writer.generation.sync()
            }
            // Every commit is durable by now: a failure here only leaves the next open the
            // slower check it would have made anyway.
            if writer.poison == nil, !configuration.refusesWrites { try? writer.generation.settle() }
        }
    }

    /// Writes a checkpoint when the commits since the last one take at least
    /// `closingCheckpointTail` bytes (or `checkpointInterval`, if less), so that the next open
    /// replays none of them and its indexes read none of their objects, or when an index in
    /// force is not the one the checkpoint persisted (built at this open, after a migration or a
    /// changed definition), so that the next open does not build it again. The commits are durable
    /// before it starts; a failure leaves them as they are and is kept in `statistics`.
    private func checkpointAtClose(writer: inout Writer) {
        let interval = UInt64(max(0, configuration.checkpointInterval))
        guard filePath != nil, !configuration.readOnly, interval > 0, writer.formatVersion >= 2, writer.poison == nil,
              openStreams.load(ordering: .acquiring) == 0 else { return }
        let tail = writer.appendOffset > writer.checkpointEnd ? writer.appendOffset - writer.checkpointEnd : 0
        let unpersisted = published.withLock { $0.secondary.unpersisted(in: $0.index, log: writer.generation) }
        guard tail >= min(interval, Self.closingCheckpointTail) || unpersisted else { return }
        do {
            try checkpoint(writer: &writer)
        } catch {
            let failure = error as? StorageError ?? StorageError(.io(operation: "checkpoint", path: displayPath, errno: 0))
            published.withLock { $0.lastCheckpointError = failure }
        }
    }

    /// Bytes of commits after the last checkpoint past which closing writes one.
    static let closingCheckpointTail: UInt64 = 64 << 10

    /// Keys per type a streamed commit's publication, and the write transaction making it, hold
    /// in memory before they go to key runs in an unnamed scratch file (`StreamSpill`,
    /// ``StreamKeyTable``; ``EngineConfiguration/streamKeysInMemory``), or `Int.max` where they
    /// may not: in memory, or with no checkpoints to merge them into the log. An encrypted
    /// store's scratch files are sealed (``sealsScratchFiles``).
    public var streamKeysInMemory: Int {
        guard filePath != nil, configuration.checkpointInterval > 0, !configuration.refusesWrites else { return Int.max }
        return max(1, configuration.streamKeysInMemory)
    }

    /// Whether scratch files hold their data encrypted and authenticated under a key of their own
    /// that only memory holds (``StreamKeyTable/init(keysInMemory:sealed:)``): in an encrypted
    /// store, whose keys and values a plain scratch file would hold in the clear.
    public var sealsScratchFiles: Bool {
        configuration.encryption != nil
    }

    /// Entries per secondary index a streamed commit's index update holds in memory before they
    /// go to index runs in an unnamed scratch file (`StreamIndexSpill`): as many as keys, and at
    /// most `StreamIndexSpill.bytesInMemory` bytes of memory for them encoded.
    var streamIndexEntriesInMemory: Int {
        streamKeysInMemory
    }

    /// Sizes, counts and the last sequence number.
    public var statistics: EngineStatistics {
        published.withLock { state in
            let live = UInt64(state.index.liveBytes) + state.indexBytes
            let used = live + (state.formatVersion >= 2 ? UInt64(LogHeader.regionSize) : UInt64(LogHeader.size))
            return EngineStatistics(
                formatVersion: state.formatVersion,
                fileSize: state.fileSize,
                liveBytes: live,
                deadBytes: state.fileSize > used ? state.fileSize - used : 0,
                objectCounts: state.index.types.mapValues(\.count).filter { $0.value > 0 },
                lastSequence: state.sequence,
                commitSyncs: state.commitSyncs,
                compactions: state.compactions,
                lastAutoCompactionError: state.lastAutoCompactionError,
                checkpoints: state.checkpoints,
                persistedRuns: state.index.types.values.reduce(0) { $0 + $1.runs.count },
                persistedIndexRuns: state.index.persistedIndexes.values.reduce(0) { $0 + $1.runs.count },
                checkpointEnd: state.checkpoint.map { $0.unitOffset + UInt64($0.unitLength) },
                lastCheckpointError: state.lastCheckpointError)
        }
    }
}

/// The generation an engine points at after `close()`: every access throws `closed`.
final class ClosedLog: LogStorage {
    let path: String

    init(path: String) {
        self.path = path
    }

    func size() throws -> UInt64 { throw StorageError(.closed) }
    func read(at offset: UInt64, count: Int) throws -> [UInt8] { throw StorageError(.closed) }
    func write(_ bytes: [UInt8], at offset: UInt64) throws { throw StorageError(.closed) }
    func truncate(to size: UInt64) throws { throw StorageError(.closed) }
    func sync() throws { throw StorageError(.closed) }
}
