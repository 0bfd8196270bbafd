#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One name for one store file, however the caller spells it.
///
/// The lock sidecar, the in-process registry, the compaction file and the rename all go through
/// the resolved path, so `alias.store` (a symbolic link to `real.store`), `./real.store` and
/// `dir/../real.store` meet the same lock. A hard link is a second name that no path resolution
/// can see through, so a store file with more than one link is refused.
extension FileSystem {
    /// The longest chain of symbolic links followed, as the kernel's `ELOOP` limit on Linux.
    static let maximumSymbolicLinks = 40

    /// The absolute path of the file `path` names, with every symbolic link resolved, in the
    /// directories and in the last component. The file need not exist: a dangling link resolves
    /// to the file that opening it would create. A path whose directory does not resolve is
    /// returned as given, so that opening it reports the missing directory.
    static func resolvedPath(_ path: String) throws -> String {
        var current = path
        for _ in 0..<maximumSymbolicLinks {
            let canonical = canonicalPath(current)
            var info = stat()
            guard lstat(canonical, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return canonical }
            guard let target = symbolicLinkTarget(canonical) else { throw ioError("read the symbolic link", canonical) }
            current = target.hasPrefix("/") ? target : directory(of: canonical) + "/" + target
        }
        throw ioError("resolve the symbolic links of", path, ELOOP)
    }

    private static func symbolicLinkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Throws `hardLinked` when the open store file has more than one name.
    static func requireSingleLink(_ descriptor: Int32, path: String) throws {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw ioError("read the status of", path) }
        guard info.st_nlink <= 1 else { throw StorageError(.hardLinked(path: path, links: Int(info.st_nlink))) }
    }
}

/// Which file an open descriptor or a path names (device and inode): a reader beside a writer
/// compares the two to notice that compaction renamed a new file over the store's path.
struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64

    /// The identity of the open file `descriptor`, nil when `fstat` fails.
    init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    /// The identity of the file `path` names now, nil when there is none (or `stat` fails).
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
