#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CMirrorStoreSupport
import Synchronization

/// A log generation backed by an open file. It owns the descriptor and closes it when the
/// last holder (the engine or a snapshot) lets go, which keeps reads of a compacted-away
/// generation valid for as long as someone can make them.
final class FileLog: LogStorage {
    let path: String
    let descriptor: Int32
    let faults: FaultInjection?
    private let mapping: LogMapping
    /// How many reads went to the file rather than through the mapping (`readOnce`), for tests
    /// that a cache in front of the file answers what it holds.
    private let fileReads = Atomic<Int>(0)

    /// How many reads have gone to the file itself (see `fileReads`).
    var fileReadCount: Int { fileReads.load(ordering: .relaxed) }

    /// A log over `descriptor`. `mappedSize` is how much of the file may be read through a
    /// mapping: the whole file (nil) for its writer; for a reader beside a writer, only what it
    /// has validated, which no writer ever truncates (see `LogMapping`).
    init(path: String, descriptor: Int32, faults: FaultInjection?, mappedSize: UInt64? = nil) {
        self.path = path
        self.descriptor = descriptor
        self.faults = faults
        // Without a size, nothing is read through a mapping: every read falls back to `pread`.
        mapping = LogMapping(
            descriptor: descriptor, fileSize: mappedSize ?? (try? FileSystem.fileSize(descriptor, path: path)) ?? 0)
    }

    var backingFile: FileLog? { self }

    /// Lets reads go through the mapping up to `end`, which a reader has validated.
    func extendMapping(to end: UInt64) {
        mapping.extend(to: end)
    }

    deinit {
        // Unlock explicitly (see `FileLock`): a forked child shares the description until it execs.
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// Takes the store file's own lock (see `FileLock.lockStoreFile`).
    func lock(exclusive: Bool, waiting: Duration = .zero) throws {
        try FileLock.lockStoreFile(descriptor, exclusive: exclusive, waiting: waiting, path: path)
    }

    /// Releases the store file's own lock, when the engine closes while snapshots still read.
    func unlock() {
        flock(descriptor, LOCK_UN)
    }

    func dataStart(from offset: UInt64) -> UInt64? {
        guard offset <= UInt64(Int64.max) else { return nil }
        let found = mirrorstore_next_data(descriptor, Int64(offset))
        if found >= 0 { return UInt64(found) }
        return errno == ENXIO ? nil : offset
    }

    func holeStart(from offset: UInt64) -> UInt64 {
        guard offset <= UInt64(Int64.max) else { return .max }
        let found = mirrorstore_next_hole(descriptor, Int64(offset))
        return found >= 0 ? UInt64(found) : .max
    }

    func size() throws -> UInt64 {
        try FileSystem.fileSize(descriptor, path: path)
    }

    func release(at offset: UInt64, count: Int) {
        mapping.release(at: offset, count: count)
    }

    func prefetch(at offset: UInt64, count: Int) {
        mapping.prefetch(at: offset, count: count)
    }

    func withBytesInPlace<Result>(_ body: (UnsafeRawBufferPointer?) throws -> Result) rethrows -> Result {
        try mapping.withFile(body)
    }

    func stableBytes(upTo end: UInt64) -> StableBytes? {
        mapping.stableBytes(upTo: end)
    }

    func read(at offset: UInt64, count: Int) throws -> [UInt8] {
        guard count > 0 else { return [] }
        guard offset <= UInt64(Int64.max) else {
            throw StorageError(.corrupted(path: path, offset: offset, reason: "an offset lies beyond any file"))
        }
        if let mapped = mapping.read(at: offset, count: count) { return mapped }
        return try readOnce(at: offset, count: count)
    }

    func withBytes<Result>(at offset: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result {
        if count > 0, offset <= UInt64(Int64.max), let mapped = mapping.bytes(at: offset, count: count) { return try body(mapped) }
        return try read(at: offset, count: count).withUnsafeBytes(body)
    }

    func readOnce(at offset: UInt64, count: Int) throws -> [UInt8] {
        guard count > 0 else { return [] }
        guard offset <= UInt64(Int64.max) else {
            throw StorageError(.corrupted(path: path, offset: offset, reason: "an offset lies beyond any file"))
        }
        fileReads.add(1, ordering: .relaxed)
        // Not filled with zeros first: `pread` writes every byte or the read throws, and a
        // region check reads 16 KiB this way.
        return try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let got = pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if got > 0 {
                    done += got
                } else if got == 0 {
                    throw StorageError(.corrupted(
                        path: path, offset: offset + UInt64(done),
                        reason: "the file ends before \(count) bytes at offset \(offset) could be read"))
                } else if errno != EINTR {
                    throw FileSystem.ioError("read from", path)
                }
            }
            initialized = count
        }
    }

    func write(_ bytes: [UInt8], at offset: UInt64) throws {
        if let code = faults?.take(.write) { throw FileSystem.ioError("write to", path, code) }
        var done = 0
        try bytes.withUnsafeBytes { buffer in
            while done < buffer.count {
                let wrote = pwrite(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
                if wrote >= 0 {
                    done += wrote
                } else if errno != EINTR {
                    throw FileSystem.ioError("write to", path)
                }
            }
        }
        mapping.extend(to: offset + UInt64(done))
    }

    func truncate(to size: UInt64) throws {
        if let code = faults?.take(.truncate) { throw FileSystem.ioError("truncate", path, code) }
        // Forget the old end first: no read may go through a mapping past the new end.
        mapping.truncate(to: size)
        while ftruncate(descriptor, off_t(size)) != 0 {
            if errno != EINTR { throw FileSystem.ioError("truncate", path) }
        }
    }

    func sync() throws {
        if faults?.take(.sync) != nil || !FileSystem.syncData(descriptor) {
            throw StorageError(.syncFailed(path: path))
        }
    }
}
