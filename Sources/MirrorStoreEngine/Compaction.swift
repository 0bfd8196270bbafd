#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Rewrites a store's live state into a fresh log.
///
/// The new log holds, in units of about `chunkSize` payload bytes, every type definition,
/// schema, metadata entry and live object, and nothing superseded. All its units carry the
/// last committed sequence number (sequence numbers never decrease in a log), so numbering
/// continues where it was. The header records where these units end, and recovery accepts them
/// all or none (docs/FILE_FORMAT.md, "Recovery"). A file store is written to `<store>.compact-tmp` in the same
/// directory, synced, renamed over the store and the directory synced: a crash at any point
/// leaves either the old or the new complete file, plus at most a temp file that the next
/// open deletes.
enum Compaction {
    static let chunkSize = 1 << 20

    /// The share of the file past which the key and index runs that checkpoints merged into
    /// others start an automatic compaction, whatever share of dead bytes the configuration allows: the
    /// size-tiered merges of keys that arrive in random order leave about 1.6 times their run
    /// bytes behind, which for small objects is about a fifth of the file, with no write of the
    /// user's behind it. So the engine's own merges make the file at most 8/7 of its live bytes.
    static let supersededIndexShare = 0.125

    struct Result {
        var index: KeyIndex
        var types: TypeTable
        var generation: any LogStorage
        var size: UInt64
        /// The checkpoint written after the compacted units (file stores only).
        var checkpoint: CheckpointSlot?
        /// The secondary indexes given, with their runs written by that checkpoint; nil when
        /// none was written (the indexes' entries do not depend on where objects lie).
        var secondary: SecondaryIndexes?
        /// The most the rewrite held in memory at once.
        var held = Held()
    }

    /// The most a rewrite held in memory at once, which must not grow with the store: for the
    /// tests that say so (an internal statistic, not a measure of the process's memory).
    struct Held: Equatable, Sendable {
        /// Object locations of one window of the old file (`SpanReader`).
        var placements = 0
        /// Keys of one type in memory, after a unit was applied and before they went to runs.
        var keys = 0
        /// Index entries gathered before they were written as a run (`RewriteIndexRuns`).
        var indexEntries = 0
        /// Runs one merge of index runs read at once (`RewriteIndexRuns`).
        var mergedRuns = 0
        /// Not held but written, for the tests that the work per entry does not grow with the
        /// store either: the entries of the indexes `RewriteIndexRuns` built, and the entries its
        /// merges wrote (each entry is written once as a run before).
        var builtIndexEntries = 0
        var mergedIndexEntries = 0
    }

    static func temporaryPath(for path: String) -> String {
        path + ".compact-tmp"
    }

    static func compactFile(
        path: String, index: KeyIndex, secondary: SecondaryIndexes, from source: any LogStorage, lastSequence: UInt64,
        checkpointAfter: Int?, keysInMemory: Int?, encryptedWith keys: EncryptionKeys?, faults: FaultInjection?,
        poison: inout StorageError?
    ) throws -> Result {
        try replaceFile(path: path, replacing: source, encryptedWith: keys, faults: faults, poison: &poison, validate: { _ in }) { target in
            try rewrite(
                index: index, secondary: secondary, from: source, into: target, lastSequence: lastSequence, checkpointAfter: checkpointAfter,
                keysInMemory: keysInMemory)
        }
    }

    /// Writes a new log with `write` into the temp file, syncs it, lets `validate` refuse it, then
    /// renames it over the store: the store is the old file or the complete new one, never a mix.
    /// `current` is the store's open file: when `path` no longer names it (the store was renamed
    /// or replaced while open), nothing is renamed over whatever is there now. With `keys`, the
    /// new file is encrypted under a new random data key and file id: every rewrite rotates the key.
    static func replaceFile(
        path: String, replacing current: any LogStorage, encryptedWith keys: EncryptionKeys?, faults: FaultInjection?,
        poison: inout StorageError?, validate: (Result) throws -> Void, write: (any LogStorage) throws -> Result
    ) throws -> Result {
        let temporary = temporaryPath(for: path)
        let descriptor = FileSystem.open(temporary, flags: O_RDWR | O_CREAT | O_TRUNC)
        guard descriptor >= 0 else { throw FileSystem.ioError("create the compaction file", temporary) }
        // Named after the store, not the temp file: after the rename this same object is the
        // store's new generation, and its errors should name the store.
        let file = FileLog(path: path, descriptor: descriptor, faults: faults)
        var result: Result
        do {
            // Locked before the rename makes it the store, so no other opener can take it first.
            try file.lock(exclusive: true)
            let target: any LogStorage = try keys.map { try EncryptedLog.create(in: file, keys: $0) } ?? file
            result = try write(target)
            // Always synced, whatever the durability: the rename must never expose unsynced data.
            try target.sync()
            try validate(result)
            try requireStillAt(path, current)
            guard rename(temporary, path) == 0 else { throw FileSystem.ioError("rename the compacted file over", path) }
        } catch {
            _ = FileSystem.remove(temporary)
            throw error
        }
        do {
            try FileSystem.syncDirectory(containing: path)
        } catch {
            // The new file is complete either way, but whether the rename is durable is unknown.
            poison = StorageError(.syncFailed(path: path))
            throw poison ?? error
        }
        return result
    }

    /// Throws `storeFileMoved` when `path` names another file than `current` has open.
    private static func requireStillAt(_ path: String, _ current: any LogStorage) throws {
        guard let file = current.backingFile else { return }
        var opened = stat()
        guard fstat(file.descriptor, &opened) == 0 else { throw FileSystem.ioError("read the status of", path) }
        var named = stat()
        guard stat(path, &named) == 0, named.st_dev == opened.st_dev, named.st_ino == opened.st_ino else {
            throw StorageError(.storeFileMoved(path: path))
        }
    }

    static func compactMemory(index: KeyIndex, from source: any LogStorage, lastSequence: UInt64) throws -> Result {
        try rewrite(
            index: index, secondary: SecondaryIndexes(), from: source, into: MemoryLog(), lastSequence: lastSequence, checkpointAfter: nil,
            keysInMemory: nil)
    }

    /// Writes the header and the live state into `target`, returning the index that points into
    /// it; when the compacted units take at least `checkpointAfter` bytes, a checkpoint after
    /// them, with `secondary`'s runs, so that opening the new file reads no unit. With
    /// `keysInMemory` (which needs `checkpointAfter`), the key table is written as runs while the
    /// units go (`RewriteKeyRuns`). Tests pass a small `chunkSize` to get runs of many units from
    /// little data.
    static func rewrite(
        index: KeyIndex, secondary: SecondaryIndexes, from source: any LogStorage, into target: any LogStorage, lastSequence: UInt64,
        checkpointAfter: Int?, keysInMemory: Int?, chunkSize: Int = Compaction.chunkSize
    ) throws -> Result {
        let header = LogHeader()
        try target.write(header.encoded(), at: 0)
        var writer = ChunkWriter(
            target: target, sequence: lastSequence, offset: header.unitsStart, chunkSize: chunkSize,
            keysInMemory: checkpointAfter == nil ? nil : keysInMemory)
        var newIndex = KeyIndex()
        // Compaction reads every live value: the old log's checkpoint regions are checked first.
        try index.regions?.verifyAll(in: source)
        for (key, value) in index.metadata.sorted(by: { $0.key < $1.key }) {
            try writer.append([.setMetadata(key: key, value: value)], into: &newIndex)
        }
        for name in index.types.keys.sorted() {
            guard let objects = index.types[name] else { continue }
            var kinds = (integers: objects.onlyIntegers ? objects.count : 0, strings: 0, byteStrings: 0)
            if !objects.onlyIntegers {
                try objects.forEach { key, _ in
                    switch key {
                    case .integer: kinds.integers += 1
                    case .string: kinds.strings += 1
                    case .bytes: kinds.byteStrings += 1
                    }
                }
            }
            var preamble: [WriteBatch.Operation] = [.reserveCapacity(
                type: name, integers: kinds.integers, strings: kinds.strings, byteStrings: kinds.byteStrings)]
            if let schema = objects.schema {
                preamble.append(.setSchema(type: name, schema: schema))
            }
            try writer.append(preamble, into: &newIndex)
            // In windows of keys, each in file order, so the old log is read in large spans. When
            // the keys go to runs, a window is the keys a type keeps in memory, written out at its
            // end: each window's keys follow the earlier ones', so they extend the one run and a
            // compaction of keys in any order writes each key once and leaves no superseded run.
            let window = writer.keysInMemory ?? SpanReader.placementLimit
            let placements = try SpanReader.forEach(
                objects, in: index, source: source, limit: window, keyOrder: writer.keysInMemory != nil,
                windowEnded: { try writer.endWindow(into: &newIndex) }
            ) { key, value in
                try writer.append([.put(type: name, key: key, value: value)], into: &newIndex)
            }
            writer.held.placements = max(writer.held.placements, placements)
        }
        try writer.finish(force: lastSequence > 0 && writer.offset == header.unitsStart, into: &newIndex)
        var result = Result(index: newIndex, types: writer.types, generation: target, size: writer.offset)
        result.held = writer.held
        return try finish(result, secondary: secondary, sequence: lastSequence, checkpointAfter: checkpointAfter)
    }

    /// Records in the header where the compacted units end, after writing a checkpoint of them
    /// when asked: the header names where the run ends, so that recovery never applies part of
    /// it (a prefix of the run is a subset of the live state, a state no commit ever made).
    private static func finish(_ compacted: Result, secondary: SecondaryIndexes, sequence: UInt64, checkpointAfter: Int?) throws -> Result {
        var result = compacted
        let target = result.generation
        // Key runs written as the units went are read only through a checkpoint's list of them.
        let wroteRuns = result.index.types.values.contains { !$0.runs.isEmpty }
        if let checkpointAfter, wroteRuns || result.size - LogHeader().unitsStart >= UInt64(max(0, checkpointAfter)) {
            let written = try Checkpoint.write(
                index: result.index, secondary: secondary, types: result.types, log: target, at: result.size, sequence: sequence,
                number: 1, format: LogHeader.currentVersion)
            result.index = written.index
            result.secondary = written.secondary
            result.size = written.end
            result.checkpoint = written.slot
            try target.write(written.slot.encoded(), at: CheckpointSlot.offset(forNumber: written.slot.number))
        }
        try target.write(LogHeader(compactedEnd: compacted.size).fields(), at: 0)
        return result
    }
}

extension Compaction {
    /// Writes the header, then whatever `produce` puts into `rewriter`, as a run that recovery
    /// accepts whole or not at all (like a compaction's). With `keysInMemory`, the key table is written as runs as the units go, and so are the
    /// secondary `indexes` of the types that needed runs (`RewriteIndexRuns`); the result then
    /// carries them.
    static func rewrite(
        into target: any LogStorage, sequence: UInt64, checkpointAfter: Int?, keysInMemory: Int?, indexes: [IndexDefinition] = [],
        chunkSize: Int = Compaction.chunkSize, produce: (inout LogRewriter) throws -> Void
    ) throws -> Result {
        let header = LogHeader()
        try target.write(header.encoded(), at: 0)
        var rewriter = LogRewriter(
            writer: ChunkWriter(
                target: target, sequence: sequence, offset: header.unitsStart, chunkSize: chunkSize,
                keysInMemory: checkpointAfter == nil ? nil : keysInMemory))
        try produce(&rewriter)
        try rewriter.writer.finish(force: rewriter.writer.offset == header.unitsStart, into: &rewriter.index)
        var secondary = SecondaryIndexes()
        var end = rewriter.writer.offset
        var held = rewriter.writer.held
        if checkpointAfter != nil, let keysInMemory {
            (secondary, end) = try RewriteIndexRuns(bound: keysInMemory, log: target, sequence: sequence).build(
                indexes, for: rewriter.index, at: end, held: &held)
        }
        var result = Result(index: rewriter.index, types: rewriter.writer.types, generation: target, size: end)
        result.held = held
        return try finish(result, secondary: secondary, sequence: sequence, checkpointAfter: checkpointAfter)
    }
}

/// Receives the whole new state of a store being rewritten (see `StorageEngine.rewrite`), in
/// any order, and writes it out in units as it comes, and its key table as runs once a type's
/// keys pass a bound (`RewriteKeyRuns`), so a rewrite needs no more memory than a unit and that
/// many keys per type.
public struct LogRewriter {
    fileprivate var writer: ChunkWriter
    fileprivate var index = KeyIndex()

    /// Stores `value` as the object `key` of `type`; a later put of the same key replaces it.
    public mutating func put(type: String, key: StorageKey, value: [UInt8]) throws {
        try writer.append([.put(type: type, key: key, value: value)], into: &index)
    }

    /// Says how many keys of each kind `type` is about to receive, so that the index is sized
    /// once (recovery reads it too) instead of growing step by step.
    public mutating func reserveCapacity(type: String, integers: Int, strings: Int, byteStrings: Int) throws {
        try writer.append([.reserveCapacity(type: type, integers: integers, strings: strings, byteStrings: byteStrings)], into: &index)
    }

    /// Stores the schema bytes of `type`.
    public mutating func setSchema(type: String, schema: [UInt8]) throws {
        try writer.append([.setSchema(type: type, schema: schema)], into: &index)
    }

    /// Stores a store-wide metadata entry.
    public mutating func setMetadata(key: String, value: [UInt8]) throws {
        try writer.append([.setMetadata(key: key, value: value)], into: &index)
    }

    /// Removes the object `key` of `type` put earlier in this rewrite, as a commit's delete
    /// would: a migration deletes what the models' delete rules take with an object it dropped
    /// once every object is written. The rewrite stays one state, accepted whole or not at all.
    public mutating func delete(type: String, key: StorageKey) throws {
        try writer.append([.delete(type: type, key: key)], into: &index)
    }

    /// What this rewrite has written so far, as a snapshot to read it back by (the pending unit
    /// is written out first). Read it before putting or deleting more: later writes may merge
    /// away the key runs it reads.
    ///
    /// - Throws: `StorageError` when the pending unit cannot be written.
    public mutating func snapshot() throws -> EngineSnapshot {
        try writer.flush(force: false, into: &index)
        return EngineSnapshot(index: index, generation: writer.target, sequence: writer.sequence)
    }

    /// Whether `key` of `type` was put already (and not deleted since).
    ///
    /// - Throws: `StorageError` when a run this rewrite wrote cannot be read back.
    public mutating func contains(type: String, key: StorageKey) throws -> Bool {
        // The pending unit's keys are its puts: deletes waiting in it are applied first.
        if writer.pendingDeletes { try writer.flush(force: false, into: &index) }
        return try index.types[type]?.location(for: key) != nil || writer.pendingContains(type: type, key: key)
    }
}

/// Batches operations into units of about `chunkSize` payload bytes.
private struct ChunkWriter {
    let target: any LogStorage
    let sequence: UInt64
    let chunkSize: Int
    var offset: UInt64
    var types = TypeTable()
    /// Writes the new key table as runs while the units go out, when the rewrite streams it.
    private var keyRuns: RewriteKeyRuns?
    private var pending: [WriteBatch.Operation] = []
    private var pendingBytes = 0
    /// Whether the pending unit deletes anything, which `pendingContains` does not account for.
    private(set) var pendingDeletes = false
    /// The keys put since the last flush, once someone asked (see `pendingContains`).
    private var pendingKeys: [String: Set<StorageKey>]?
    /// The most this writer held; `placements` is the caller's to fill.
    var held = Compaction.Held()
    /// The keys per type past which the key table goes to runs, nil when it stays in memory.
    let keysInMemory: Int?

    /// `keysInMemory`: the keys per type past which the key table is written as runs while the
    /// units go out (nil keeps it in memory, for the checkpoint after them or for none).
    init(target: any LogStorage, sequence: UInt64, offset: UInt64, chunkSize: Int, keysInMemory: Int?) {
        self.target = target
        self.sequence = sequence
        self.chunkSize = chunkSize
        self.offset = offset
        keyRuns = keysInMemory.map { RewriteKeyRuns(bound: $0, log: target, sequence: sequence) }
        self.keysInMemory = keyRuns?.bound
    }

    mutating func append(_ operations: [WriteBatch.Operation], into index: inout KeyIndex) throws {
        for operation in operations {
            pending.append(operation)
            switch operation {
            case .put(let type, let key, let value):
                pendingBytes += value.count + 16
                pendingKeys?[type, default: []].insert(key)
            case .setSchema(_, let bytes), .setMetadata(_, let bytes): pendingBytes += bytes.count + 16
            case .delete, .deleteAll:
                pendingBytes += 16
                pendingDeletes = true
            case .reserveCapacity: pendingBytes += 16
            }
        }
        if pendingBytes >= chunkSize {
            try flush(force: false, into: &index)
        }
    }

    /// Whether a put of `key` waits in the current unit. The first question in a unit gathers
    /// the unit's keys, which later puts then keep up to date: writers that never ask (a
    /// compaction) pay nothing.
    mutating func pendingContains(type: String, key: StorageKey) -> Bool {
        if pendingKeys == nil {
            var keys: [String: Set<StorageKey>] = [:]
            for case .put(let type, let key, _) in pending { keys[type, default: []].insert(key) }
            pendingKeys = keys
        }
        return pendingKeys?[type]?.contains(key) ?? false
    }

    /// Writes the pending operations as one unit; with `force`, even when there are none, so
    /// that an empty store still records its last sequence number.
    mutating func flush(force: Bool, into index: inout KeyIndex) throws {
        guard !pending.isEmpty || force else { return }
        // The target is always of the current format.
        let (payload, decoded) = OperationCodec.encode(
            pending, types: &types, fileOffset: offset + UInt64(LogFrame.headerSize), packing: .current)
        let frame = LogFrame.encode(sequence: sequence, payload: payload)
        try target.write(frame, at: offset)
        offset += UInt64(frame.count)
        // Capacity hints reserve no more than the keys a type holds before they are written out.
        try index.apply(decoded, capacityLimit: keyRuns?.bound ?? Int(Int32.max))
        for objects in index.types.values { held.keys = max(held.keys, objects.memoryCount) }
        if let end = try keyRuns?.spill(&index, at: offset) { offset = end }
        pending.removeAll(keepingCapacity: true)
        pendingKeys = nil
        pendingBytes = 0
        pendingDeletes = false
    }

    /// Writes the pending operations when the key table streams, so that the keys of a window
    /// that filled a type's memory go to its run now, before any key of the next window.
    mutating func endWindow(into index: inout KeyIndex) throws {
        guard keyRuns != nil else { return }
        try flush(force: false, into: &index)
    }

    /// Writes the last unit, then, when the key table streams, the keys left in memory of each
    /// type that has runs and each type's runs merged into one.
    mutating func finish(force: Bool, into index: inout KeyIndex) throws {
        try flush(force: force, into: &index)
        if let end = try keyRuns?.finish(&index, at: offset) { offset = end }
    }
}
