#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What recovery left out when a store was opened: the bytes after the last good unit, why,
/// and where they were kept. `StorageEngine.recoveryReport` is nil when the file was intact.
///
/// Recovery never deletes what it leaves out: a writable open copies the bytes into a sidecar
/// file next to the store, `<store>.dropped-<n>`, before it truncates the store. Read the
/// sidecars of a store with `keptRecoveries(ofStoreAt:)`.
///
/// ```swift
/// let engine = try StorageEngine(path: "heroes.store")
/// if let report = engine.recoveryReport {
///     print(report)   // Recovery dropped a torn final commit at byte offset 120 (...)
/// }
/// ```
public struct RecoveryReport: Sendable, Equatable, CustomStringConvertible {
    /// Why recovery left the bytes out.
    public enum Cause: Sendable, Equatable {
        /// The final unit was torn, as a crash during its append leaves it. Dropped in every mode.
        case tornFinalCommit
        /// The file was damaged; only `.recoverValidPrefix` opens such a file, keeping the units before the damage.
        case damage
    }

    /// Why recovery left the bytes out.
    public var cause: Cause
    /// The byte offset in the store where the left-out bytes began.
    public var offset: UInt64
    /// How many bytes were left out: everything from `offset` to the end of the file.
    public var droppedBytes: UInt64
    /// How many commits those bytes held, at least: the bad unit plus every sequence number up
    /// to the highest one found intact after it. Damage that erased whole units may hide more.
    public var commitsDropped: Int
    /// The sequence number of the last commit kept.
    public var lastKeptSequence: UInt64
    /// What was wrong with the first left-out unit.
    public var reason: String
    /// The sidecar holding the left-out bytes, or nil when a read-only open left them in the store
    /// or the store is encrypted (which keeps no clear copy; `reason` says so).
    public var keptAt: String?

    /// Creates a report; the engine makes these, and tests compare against them.
    public init(
        cause: Cause, offset: UInt64, droppedBytes: UInt64, commitsDropped: Int, lastKeptSequence: UInt64,
        reason: String, keptAt: String?
    ) {
        self.cause = cause
        self.offset = offset
        self.droppedBytes = droppedBytes
        self.commitsDropped = commitsDropped
        self.lastKeptSequence = lastKeptSequence
        self.reason = reason
        self.keptAt = keptAt
    }

    /// One sentence: what was left out, why, and where it is.
    public var description: String {
        let what = cause == .tornFinalCommit ? "a torn final commit" : "damage"
        let commits = commitsDropped == 1 ? "1 commit" : "\(commitsDropped) commits"
        let kept = keptAt.map { "kept in '\($0)'" } ?? "left in the file (read-only open)"
        let verb = keptAt == nil ? "skipped" : "dropped"
        return "Recovery \(verb) \(droppedBytes) bytes (at least \(commits) after sequence \(lastKeptSequence)) for \(what) at byte offset \(offset) (\(reason)); they are \(kept)."
    }
}

/// The sidecar files that keep what recovery left out of a store.
///
/// Layout: magic `\x89MSDROP\n` (8) · offset (8) · last kept sequence (8) · commits dropped (8) ·
/// cause (1: 0 torn final commit, 1 damage) · reason (varint length + UTF-8) · masked CRC32C of
/// everything before it (4) · the left-out bytes exactly as they were (docs/FILE_FORMAT.md).
enum DroppedBytesFile {
    static let magic: [UInt8] = [0x89, 0x4D, 0x53, 0x44, 0x52, 0x4F, 0x50, 0x0A]
    static let copyChunk = 1 << 20

    static func prefix(for storePath: String) -> String {
        storePath + ".dropped-"
    }

    /// Copies `source[report.offset...]` into a new sidecar of `storePath` and syncs it and its
    /// directory, so the bytes are safe on disk before the store is truncated. An existing
    /// sidecar is never overwritten: the new one takes the next free number. Returns its path.
    static func keep(_ report: RecoveryReport, from source: any LogStorage, storePath: String) throws -> String {
        var number = (numbers(of: storePath).max() ?? 0) + 1
        var path = prefix(for: storePath) + String(number)
        var descriptor = FileSystem.open(path, flags: O_WRONLY | O_CREAT | O_EXCL)
        while descriptor < 0, errno == EEXIST {
            // Only the lock holder writes sidecars, but a file of that name may come from elsewhere.
            number += 1
            path = prefix(for: storePath) + String(number)
            descriptor = FileSystem.open(path, flags: O_WRONLY | O_CREAT | O_EXCL)
        }
        guard descriptor >= 0 else { throw FileSystem.ioError("create the file keeping dropped bytes", path) }
        let sidecar = FileLog(path: path, descriptor: descriptor, faults: nil)
        do {
            let header = encodeHeader(report)
            try sidecar.write(header, at: 0)
            // Holes in the source stay holes: a sidecar never holds bytes that were never written.
            let end = report.offset + report.droppedBytes
            var position = report.offset
            while position < end, let data = source.dataStart(from: position), data < end {
                let stop = min(end, data + UInt64(copyChunk), max(data + 1, source.holeStart(from: data)))
                try sidecar.write(try source.read(at: data, count: Int(stop - data)), at: UInt64(header.count) + data - report.offset)
                position = stop
            }
            try sidecar.truncate(to: UInt64(header.count) + report.droppedBytes)
            try sidecar.sync()
            try FileSystem.syncDirectory(containing: path)
        } catch {
            _ = FileSystem.remove(path)
            throw error
        }
        return path
    }

    static func encodeHeader(_ report: RecoveryReport) -> [UInt8] {
        var writer = ByteWriter()
        writer.bytes.append(contentsOf: magic)
        writer.uint64(report.offset)
        writer.uint64(report.lastKeptSequence)
        writer.uint64(UInt64(report.commitsDropped))
        writer.bytes.append(report.cause == .tornFinalCommit ? 0 : 1)
        let reason = Array(report.reason.utf8)
        writer.varint(UInt64(reason.count))
        writer.bytes.append(contentsOf: reason)
        writer.uint32(CRC32C.mask(CRC32C.checksum(writer.bytes)))
        return writer.bytes
    }

    /// The report a sidecar of `fileSize` bytes starting with `bytes` was written with, or nil
    /// when it does not read as one.
    static func decode(_ bytes: [UInt8], path: String, fileSize: UInt64) -> RecoveryReport? {
        guard bytes.count >= magic.count, Array(bytes[0..<magic.count]) == magic else { return nil }
        var reader = ByteReader(bytes, from: magic.count)
        guard let offset = try? reader.uint64(), let sequence = try? reader.uint64(), let commits = try? reader.uint64(),
              let cause = try? reader.byte(), cause <= 1,
              let reason = try? reader.lengthPrefixedString() else { return nil }
        let headerEnd = reader.position
        guard let stored = try? reader.uint32(),
              CRC32C.unmask(stored) == bytes.withUnsafeBytes({ CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<headerEnd])) })
        else { return nil }
        let kept = UInt64(reader.position)
        return RecoveryReport(
            cause: cause == 0 ? .tornFinalCommit : .damage, offset: offset,
            droppedBytes: fileSize > kept ? fileSize - kept : 0, commitsDropped: Int(clamping: commits),
            lastKeptSequence: sequence, reason: reason, keptAt: path)
    }

    /// The numbers `n` of the existing `<store>.dropped-<n>` files.
    static func numbers(of storePath: String) -> [Int] {
        let directory = FileSystem.directory(of: storePath)
        let prefix = prefix(for: storePath).split(separator: "/").last.map(String.init) ?? ""
        return FileSystem.names(in: directory).compactMap { name in
            guard name.hasPrefix(prefix) else { return nil }
            return Int(name.dropFirst(prefix.count))
        }
    }
}

/// The reports of every sidecar that keeps bytes recovery left out of the store at `path`, oldest
/// first. A file with the sidecar's name that does not read as one is left out of the list.
///
/// ```swift
/// for kept in try keptRecoveries(ofStoreAt: "heroes.store") {
///     print(kept)   // Recovery dropped 2400 bytes ... they are kept in 'heroes.store.dropped-1'.
/// }
/// ```
public func keptRecoveries(ofStoreAt path: String) throws -> [RecoveryReport] {
    let storePath = try FileSystem.resolvedPath(path)
    return DroppedBytesFile.numbers(of: storePath).sorted().compactMap { number in
        let sidecar = DroppedBytesFile.prefix(for: storePath) + String(number)
        // A FIFO of that name would block an open without O_NONBLOCK; it is no sidecar.
        guard let descriptor = try? FileSystem.openRegularFile(sidecar, flags: O_RDONLY), descriptor >= 0 else { return nil }
        let log = FileLog(path: sidecar, descriptor: descriptor, faults: nil)
        guard let size = try? log.size(),
              let head = try? log.read(at: 0, count: Int(min(size, 64 << 10))) else { return nil }
        return DroppedBytesFile.decode(head, path: sidecar, fileSize: size)
    }
}

extension Recovery {
    /// Applies the recovery mode to the problem a scan found in `recovered`: throws for damage
    /// the mode does not accept, and otherwise leaves out everything from the end of the last
    /// good unit on. A writable open first keeps those bytes in a new sidecar (synced), then cuts
    /// them off the store and syncs that, before anything can be appended behind them (LevelDB
    /// #1287); a read-only open leaves the file as it is.
    static func leaveOut(
        _ recovered: inout RecoveredLog, of log: any LogStorage, storePath: String, configuration: EngineConfiguration
    ) throws -> RecoveryReport? {
        guard let problem = recovered.problem else { return nil }
        let cause: RecoveryReport.Cause
        switch problem.kind {
        case .damagedCompaction(let compactedEnd):
            throw StorageError(.compactionDamaged(
                path: log.path, offset: problem.offset, compactedEnd: compactedEnd, fileSize: recovered.fileSize,
                reason: problem.reason))
        case .damage:
            guard configuration.recoveryMode == .recoverValidPrefix else {
                throw StorageError(.corrupted(path: log.path, offset: problem.offset, reason: problem.reason))
            }
            cause = .damage
        case .tornTail:
            cause = .tornFinalCommit
        }
        var report = RecoveryReport(
            cause: cause, offset: recovered.validEnd, droppedBytes: recovered.fileSize - recovered.validEnd,
            commitsDropped: problem.commitsDropped, lastKeptSequence: recovered.lastSequence, reason: problem.reason,
            keptAt: nil)
        guard !configuration.readOnly else { return report }
        // An encrypted store's dropped bytes would lie in the sidecar in clear: they are not kept.
        if log is FileLog {
            report.keptAt = try DroppedBytesFile.keep(report, from: log, storePath: storePath)
        } else {
            report.reason += "; the store is encrypted, so no clear copy of the dropped bytes was kept"
        }
        try log.truncate(to: recovered.validEnd)
        if configuration.durability == .full { try log.sync() }
        recovered.fileSize = recovered.validEnd
        return report
    }
}
