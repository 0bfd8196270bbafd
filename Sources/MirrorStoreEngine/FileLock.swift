#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The inter-process lock of a store: `flock` on the sidecar file `<store>.lock`, and on the
/// store file itself.
///
/// The sidecar is never renamed or replaced, so compaction's rename of the store file cannot
/// drop the lock, and `flock` locks belong to the open file description, so they do not vanish
/// when some other descriptor of the file closes (as classic `fcntl` locks do). A writer holds
/// `LOCK_EX` and writes its pid into the file so a second process can name it; a read-only
/// opener holds `LOCK_SH`. The lock is released when this object goes away.
///
/// The sidecar is found by name, so a store renamed while open, or whose sidecar was deleted,
/// would meet a new one. The store file's own lock follows the file whatever its name
/// (`lockStoreFile`): compaction takes it on its new file before renaming it over the store.
final class FileLock: Sendable {
    let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        guard descriptor >= 0 else { return }
        // Unlock explicitly: a child forked by this process (Foundation's Process, say) shares
        // the open file description until it execs, and would keep the lock alive past close.
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// Locks the sidecar of `storePath` (resolved by `FileSystem.resolvedPath`, so that every
    /// spelling of one store meets one lock), creating it if needed. Errors name `displayPath`.
    static func acquire(storePath: String, exclusive: Bool, waiting: Duration = .zero, as displayPath: String) throws -> FileLock {
        let lockPath = storePath + ".lock"
        var descriptor = try FileSystem.openRegularFile(lockPath, flags: O_RDWR | O_CREAT)
        if descriptor < 0, !exclusive, errno == EACCES || errno == EROFS {
            // A reader on a read-only directory may still find an existing lock file to share.
            descriptor = try FileSystem.openRegularFile(lockPath, flags: O_RDONLY)
            if descriptor < 0, errno == ENOENT {
                return FileLock(path: lockPath, descriptor: -1)
            }
        }
        // Named by the store: the lock file is the store's business, not the user's.
        guard descriptor >= 0 else { throw FileSystem.ioError("create the lock file of the store", displayPath) }
        let operation = (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB
        var wait = LockWait(limit: waiting)
        while flock(descriptor, operation) != 0 {
            let code = errno
            if code == EINTR { continue }
            if code == EWOULDBLOCK || code == EAGAIN, wait.pause() { continue }
            let owner = readOwner(descriptor)
            close(descriptor)
            if code == EWOULDBLOCK || code == EAGAIN {
                throw StorageError(.lockedElsewhere(path: displayPath, pid: owner))
            }
            throw FileSystem.ioError("lock", lockPath, code)
        }
        let lock = FileLock(path: lockPath, descriptor: descriptor)
        if exclusive {
            // The pid is a courtesy for error messages; failing to record it is not fatal.
            let text = Array("\(getpid())\n".utf8)
            if ftruncate(descriptor, 0) == 0 {
                _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
            }
        }
        return lock
    }

    /// Takes `flock` on an open store file, `LOCK_EX` for a writer and `LOCK_SH` for a reader.
    /// Throws `storeFileLocked` when another open of the file holds it, in this process or
    /// another (`flock` treats two opens of one file in one process as two owners).
    static func lockStoreFile(_ descriptor: Int32, exclusive: Bool, waiting: Duration = .zero, path: String) throws {
        var wait = LockWait(limit: waiting)
        while flock(descriptor, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            if code == EWOULDBLOCK || code == EAGAIN, wait.pause() { continue }
            if code == EWOULDBLOCK || code == EAGAIN { throw StorageError(.storeFileLocked(path: path)) }
            throw FileSystem.ioError("lock", path, code)
        }
    }

    private static func readOwner(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[0..<count], as: UTF8.self).trimmingNewlines()
        return Int32(text)
    }
}

/// Waiting for a lock another process holds: pauses of 2 ms doubling to 50 ms (`flock` cannot
/// block with a time limit), until `limit` has passed since the first.
struct LockWait {
    let limit: Duration
    private var deadline: ContinuousClock.Instant?
    private var pauseLength = Duration.milliseconds(2)

    init(limit: Duration) {
        self.limit = limit
    }

    /// Sleeps and returns true while time is left; false once the limit has passed (at once for
    /// a limit of zero).
    mutating func pause() -> Bool {
        guard limit > .zero else { return false }
        let now = ContinuousClock.now
        let deadline = self.deadline ?? now.advanced(by: limit)
        self.deadline = deadline
        guard now < deadline else { return false }
        let pause = min(pauseLength, deadline - now)
        let (seconds, attoseconds) = pause.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        _ = nanosleep(&request, nil)
        pauseLength = min(pauseLength * 2, .milliseconds(50))
        return true
    }
}

/// The resolved paths this process has open, so a second open of the same store in one process,
/// however its path is spelled, fails with `alreadyOpenInProcess` instead of silently sharing (and
/// corrupting) one file from two engines whose in-memory indexes would disagree. Keyed like the
/// lock, by `FileSystem.resolvedPath`.
final class OpenPathRegistration: Sendable {
    private static let openPaths = Lock<Set<String>>([])

    let resolvedPath: String

    private init(resolvedPath: String) {
        self.resolvedPath = resolvedPath
    }

    deinit {
        _ = Self.openPaths.withLock { $0.remove(resolvedPath) }
    }

    static func register(_ resolvedPath: String, as displayPath: String) throws -> OpenPathRegistration {
        let inserted = openPaths.withLock { $0.insert(resolvedPath).inserted }
        guard inserted else { throw StorageError(.alreadyOpenInProcess(path: displayPath)) }
        return OpenPathRegistration(resolvedPath: resolvedPath)
    }
}

private extension String {
    func trimmingNewlines() -> String {
        var text = Substring(self)
        while let last = text.last, last == "\n" || last == "\r" || last == "\0" || last == " " {
            text.removeLast()
        }
        return String(text)
    }
}
