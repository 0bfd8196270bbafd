#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over the system calls the engine needs, each turning `errno` into a `StorageError`.
enum FileSystem {
    static func ioError(_ operation: String, _ path: String, _ code: Int32 = errno) -> StorageError {
        if code == ENOSPC || code == EDQUOT { return StorageError(.diskFull(path: path)) }
        return StorageError(.io(operation: operation, path: path, errno: code))
    }

    /// `open` that retries on EINTR.
    static func open(_ path: String, flags: Int32, mode: mode_t = 0o644) -> Int32 {
        while true {
            #if canImport(Glibc)
            let descriptor = Glibc.open(path, flags | O_CLOEXEC, mode)
            #else
            let descriptor = Darwin.open(path, flags | O_CLOEXEC, mode)
            #endif
            if descriptor >= 0 || errno != EINTR { return descriptor }
        }
    }

    /// `open` for a file that must be a regular one: anything else (a FIFO, a device, a
    /// directory, a socket) throws `notARegularFile`, checked before it is opened and again on
    /// what was opened, with `O_NONBLOCK`, so that a FIFO never blocks the open. Returns -1 with
    /// `errno` set when the open itself fails.
    static func openRegularFile(_ path: String, flags: Int32, mode: mode_t = 0o644) throws -> Int32 {
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
            throw StorageError(.notARegularFile(path: path, fileType: fileType(info.st_mode)))
        }
        let descriptor = open(path, flags: flags | O_NONBLOCK, mode: mode)
        guard descriptor >= 0 else { return descriptor }
        guard fstat(descriptor, &info) == 0 else {
            let error = ioError("read the status of", path)
            close(descriptor)
            throw error
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw StorageError(.notARegularFile(path: path, fileType: fileType(info.st_mode)))
        }
        // Nothing blocks on a regular file anyway; the flag is cleared so that nothing depends on it.
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        return descriptor
    }

    /// What a file that is not a regular one is, in words.
    private static func fileType(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFDIR: "a directory"
        case S_IFSOCK: "a socket"
        default: "a file of an unknown type"
        }
    }

    static func fileSize(_ descriptor: Int32, path: String) throws -> UInt64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw ioError("read the size of", path) }
        return UInt64(info.st_size)
    }

    /// `fdatasync` where the platform has it; `F_FULLFSYNC` on Apple platforms, whose `fsync`
    /// does not flush the drive's cache.
    static func syncData(_ descriptor: Int32) -> Bool {
        #if os(Linux)
        return fdatasync(descriptor) == 0
        #elseif canImport(Darwin)
        if fcntl(descriptor, F_FULLFSYNC) == 0 { return true }
        return fsync(descriptor) == 0
        #else
        return fsync(descriptor) == 0
        #endif
    }

    /// The directory part of `path` (".") when it has none.
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    /// Makes a rename or a file creation in `path`'s directory durable.
    static func syncDirectory(containing path: String) throws {
        let directory = directory(of: path)
        let descriptor = open(directory, flags: O_RDONLY | O_DIRECTORY)
        guard descriptor >= 0 else { throw ioError("open the directory", directory) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw StorageError(.syncFailed(path: directory)) }
    }

    /// The absolute, symlink-free form of `path`; the file itself need not exist yet.
    static func canonicalPath(_ path: String) -> String {
        let directory = directory(of: path)
        let name = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        guard let resolved = realpath(directory, nil) else { return path }
        defer { free(resolved) }
        let base = String(cString: resolved)
        return base == "/" ? "/" + name : base + "/" + name
    }

    /// The names of the entries of `directory` (none when it cannot be read).
    static func names(in directory: String) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: $0.pointee)) { String(cString: $0) }
            }
            names.append(name)
        }
        return names
    }

    static func remove(_ path: String) -> Bool {
        unlink(path) == 0
    }
}
