#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An error thrown by the storage engine: the file is missing, not a store, damaged, open
/// elsewhere, or a system call failed. Its `description` is one readable sentence.
///
/// `import MirrorStore` alone is enough to catch it: MirrorStore re-exports this type.
///
/// ```swift
/// do {
///     _ = try StorageEngine(path: "heroes.store")
/// } catch let error as StorageError {
///     if case .lockedElsewhere(_, let pid) = error.kind { print("held by \(pid ?? -1)") }
/// }
/// ```
public struct StorageError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What went wrong.
    public enum Kind: Equatable, Sendable {
        /// The file does not start with a MirrorStore header.
        case notAStore(path: String)
        /// The file was written by a newer MirrorStore whose format this version cannot read.
        case newerFormat(path: String, found: UInt32, supported: UInt32)
        /// The file is damaged before its last unit (or its header is); `offset` is the first bad byte range.
        case corrupted(path: String, offset: UInt64, reason: String)
        /// The units compaction wrote, which end at `compactedEnd`, are damaged at `offset`. They
        /// form a state only together, so no recovery mode opens the file: the compacted state and
        /// every commit after it (up to `fileSize`) are out of reach until it is repaired.
        case compactionDamaged(path: String, offset: UInt64, compactedEnd: UInt64, fileSize: UInt64, reason: String)
        /// The store file has more than one hard link. A lock cannot tell its names apart, so two
        /// engines could write it at once through different names; give it a single name.
        case hardLinked(path: String, links: Int)
        /// Another process holds the store's lock.
        case lockedElsewhere(path: String, pid: Int32?)
        /// Another open of the store file holds its lock, in this process or another, perhaps
        /// under the name the file had when it was opened (it was renamed since, or its lock file
        /// deleted).
        case storeFileLocked(path: String)
        /// The store file is no longer at the path it was opened under (renamed or replaced while
        /// open), so compaction or a rewrite did not rename its new file over whatever is there.
        case storeFileMoved(path: String)
        /// The path names something other than a regular file (a FIFO, a device, a directory), which
        /// is never a store; `fileType` says what it is.
        case notARegularFile(path: String, fileType: String)
        /// The store has used every sequence number a commit can take, so it takes no more commits.
        case sequenceExhausted(path: String, last: UInt64)
        /// This process already has the store open; share that `StorageEngine` instead.
        case alreadyOpenInProcess(path: String)
        /// A system call failed.
        case io(operation: String, path: String, errno: Int32)
        /// The disk is full. The write that needed the space was undone: a failed commit is not
        /// visible, a failed compaction keeps the previous file.
        case diskFull(path: String)
        /// Flushing to disk failed. The engine refuses all further writes: reopen the store.
        case syncFailed(path: String)
        /// The engine was closed.
        case closed
        /// The engine was opened read-only.
        case readOnly
        /// One commit encodes to more bytes than a single log unit can hold.
        case batchTooLarge(size: Int, limit: Int)
        /// The log would grow past the largest offset the index can address.
        case fileTooLarge(path: String, limit: UInt64)
        /// A streamed commit (the engine's `WriteStream`) can no longer be written: it was committed or
        /// abandoned already, or the log was compacted or rewritten under it. None of it is visible.
        case streamEnded(path: String)
        /// A commit, or the data an index is built from, would give two objects the same key in a
        /// unique index; nothing was written.
        case uniqueConstraint(index: String, value: String)
        /// A stored value's keys for an index cannot be read.
        case unindexable(index: String, object: String, reason: String)
        /// The commit was computed from an earlier one that was still being written, and that
        /// one failed; nothing of this commit was written.
        case precedingCommitFailed
        /// The store was given an empty path.
        case emptyPath
        /// The passphrase or key given does not open the store's key envelope: the envelope is
        /// intact, but it was not made with this passphrase or key.
        case wrongKey(path: String)
        /// An encryption passphrase is empty.
        case emptyPassphrase
        /// An encryption key is `found` bytes long instead of `expected`.
        case invalidKeyLength(found: Int, expected: Int)
        /// The cryptography library failed, or was asked for something it cannot do.
        case encryptionFailed(reason: String)
        /// Encrypted bytes did not authenticate: they were changed, or sealed with another key,
        /// nonce or associated data. Nothing of them was decrypted.
        case authenticationFailed
        /// The store file is encrypted, and was opened without a passphrase or key
        /// (`EngineConfiguration.encryption`).
        case encryptionRequired(path: String)
        /// The configuration gives a passphrase or key, but the store file is not encrypted.
        case notEncrypted(path: String)
        /// A data key has sealed `limit` chunks, the most random nonces allow under one key
        /// (NIST SP 800-38D); a new data key is needed.
        case nonceLimitReached(limit: UInt64)
    }

    /// What went wrong.
    public let kind: Kind

    /// Wraps a kind.
    public init(_ kind: Kind) {
        self.kind = kind
    }

    /// One sentence explaining the error.
    public var description: String {
        switch kind {
        case .notAStore(let path):
            return "The file at '\(path)' is not a MirrorStore store: it does not start with the MirrorStore header."
        case .newerFormat(let path, let found, let supported):
            return "The store at '\(path)' uses format version \(found), but this MirrorStore reads only versions up to \(supported)."
        case .corrupted(let path, let offset, let reason):
            return "The store at '\(path)' is corrupted at byte offset \(offset): \(reason)."
        case .compactionDamaged(let path, let offset, let compactedEnd, let fileSize, let reason):
            return "The store at '\(path)' is corrupted at byte offset \(offset), inside the units its last compaction wrote (which end at byte \(compactedEnd)): \(reason). Those units make a state only together and keeping the ones before the damage would make a state no commit made, so no recovery mode opens the file: the compacted objects and every commit after them (to the end of the file at byte \(fileSize)) are out of reach until the file is repaired or restored."
        case .hardLinked(let path, let links):
            return "The store file '\(path)' has \(links) hard links. Its lock is found through the file's name, so another name of the same file would get a lock of its own and two writers could corrupt it; remove the other links (a symbolic link is fine)."
        case .lockedElsewhere(let path, let pid):
            let owner = pid.map { "process \($0)" } ?? "another process"
            return "The store at '\(path)' is open in \(owner); close it there first."
        case .storeFileLocked(let path):
            return "The store file at '\(path)' is locked by another open of it, in this process or another, which may know it by the name it had before it was renamed; close that first."
        case .storeFileMoved(let path):
            return "The store file opened as '\(path)' is no longer at that path (it was renamed or replaced while open), so its new compacted file was not renamed over whatever is there now; the store is as it was. Reopen it under its new name to compact it."
        case .notARegularFile(let path, let fileType):
            return "The path '\(path)' names \(fileType), not a regular file, so it is not a store."
        case .sequenceExhausted(let path, let last):
            return "The store at '\(path)' has reached sequence number \(last), the highest a commit can take, so it takes no more commits."
        case .alreadyOpenInProcess(let path):
            return "The store at '\(path)' is already open in this process; share the instance that has it open instead of opening it twice."
        case .io(let operation, let path, let code):
            return "Could not \(operation) '\(path)': \(Self.systemMessage(code)) (errno \(code))\(Self.advice(code))."
        case .diskFull(let path):
            return "The disk holding '\(path)' is full, so the write that needed the space failed and left the store as it was."
        case .syncFailed(let path):
            return "Flushing '\(path)' to disk failed, so the engine refuses further writes; reopen the store to see what reached the disk."
        case .closed:
            return "The storage engine is closed."
        case .readOnly:
            return "The storage engine was opened read-only and cannot write."
        case .batchTooLarge(let size, let limit):
            return "The write batch encodes to \(size) bytes, more than the \(limit) bytes one commit can hold."
        case .streamEnded(let path):
            return "The streamed commit to '\(path)' was already committed or abandoned, or the store was compacted or rewritten under it, so it takes no more writes and none of it is visible."
        case .fileTooLarge(let path, let limit):
            return "The store at '\(path)' would grow past \(limit) bytes, the largest size this format addresses; compact it."
        case .uniqueConstraint(let index, let value):
            return "Two objects would share the value \(value) in the unique index \(index); nothing was written."
        case .unindexable(let index, let object, let reason):
            return "The keys of object \(object) for the index \(index) cannot be read: \(reason)."
        case .precedingCommitFailed:
            return "This transaction read the changes of an earlier one that was still being committed, and that commit failed, so nothing of this one was written; run it again."
        case .emptyPath:
            return "The store path is empty; give the store a file name, such as 'app.store'."
        case .wrongKey(let path):
            return "The passphrase or key given does not open the store at '\(path)': it is not the one the store was encrypted with."
        case .emptyPassphrase:
            return "The encryption passphrase is empty; give a passphrase of at least one character, or a 32-byte key."
        case .invalidKeyLength(let found, let expected):
            return "The encryption key is \(found) bytes long, but AES-256 needs a key of exactly \(expected) bytes."
        case .encryptionFailed(let reason):
            return "Encryption failed: \(reason)."
        case .authenticationFailed:
            return "The encrypted bytes did not authenticate: they were changed, or sealed with another key, nonce or associated data, so nothing of them was decrypted."
        case .encryptionRequired(let path):
            return "The store at '\(path)' is encrypted; open it with the passphrase or key it was encrypted with (configuration.encryption)."
        case .notEncrypted(let path):
            return "The store at '\(path)' is not encrypted, but a passphrase or key was given; open it without one, or encrypt it with changeEncryption(to:)."
        case .nonceLimitReached(let limit):
            return "The data key has sealed \(limit) chunks, the most one key may seal with random nonces (NIST SP 800-38D), so it seals no more; rotate the data key."
        }
    }

    /// What to do about a failed system call, for the errors a user can mend.
    private static func advice(_ code: Int32) -> String {
        switch code {
        case ENOENT: "; check the path: the file or its folder does not exist"
        case EACCES, EPERM: "; check the permissions of the file and of its folder"
        case EROFS: "; the volume is read-only: open the store read-only, or move it"
        case ENOTDIR: "; a part of the path that should be a folder is a file"
        case ENAMETOOLONG: "; use a shorter path"
        default: ""
        }
    }

    static func systemMessage(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "unknown error" }
        return String(cString: text)
    }
}
