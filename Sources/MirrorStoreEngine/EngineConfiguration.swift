/// How a `StorageEngine` syncs, recovers and compacts.
///
/// ```swift
/// var configuration = EngineConfiguration()
/// configuration.durability = .none        // bulk load
/// let engine = try StorageEngine(path: "bulk.store", configuration: configuration)
/// ```
public struct EngineConfiguration: Sendable {
    /// When a commit reaches the disk.
    public enum Durability: Sendable {
        /// `fdatasync` before `commit` returns: every acknowledged commit survives a power cut. The default.
        case full
        /// No syncs at all: commits survive a process crash but not a power cut. For bulk loads.
        case none
    }

    /// What opening does with a damaged file. In every mode a torn final commit is dropped, damage
    /// inside a compaction's output throws `.compactionDamaged`, and whatever is left out is kept
    /// in a sidecar file and described by `StorageEngine.recoveryReport` (docs/FILE_FORMAT.md).
    public enum RecoveryMode: Sendable {
        /// Opens the file as all its commits, or all but a torn last one; damage throws `.corrupted`.
        case strict
        /// Keeps every commit before the first damaged unit and leaves the rest out (point-in-time
        /// recovery): the state is always exactly the state after some prefix of the commits.
        case recoverValidPrefix
    }

    /// When the engine compacts by itself.
    public enum AutoCompaction: Sendable {
        /// Only `compact()` compacts.
        case disabled
        /// After a commit, compact when dead bytes exceed `ratio` of the file and the file is at least `minimumFileSize` bytes;
        /// also when the key and index runs that checkpoints merged into newer ones pass an eighth of the file.
        case whenDeadBytesExceed(ratio: Double, minimumFileSize: Int)
    }

    /// What encrypts a store file at rest (docs/FILE_FORMAT.md, "Encryption").
    ///
    /// ```swift
    /// var configuration = EngineConfiguration()
    /// configuration.encryption = .passphrase("correct horse battery staple")
    /// let engine = try StorageEngine(path: "diary.store", configuration: configuration)
    /// ```
    ///
    /// Its description and mirror say which kind it is, never the secret.
    public enum Encryption: Sendable, CustomStringConvertible, CustomReflectable {
        /// A passphrase, stretched with PBKDF2-HMAC-SHA256 (600,000 iterations) into the key that
        /// wraps the store's data key. Empty is `StorageError.Kind.emptyPassphrase`.
        case passphrase(String)
        /// A raw 32-byte key, such as one an app keeps in its keychain, which wraps the data key as
        /// it is. Another length is `StorageError.Kind.invalidKeyLength`.
        case key([UInt8])

        var secret: EncryptionSecret {
            switch self {
            case .passphrase(let passphrase): .passphrase(passphrase)
            case .key(let key): .key(key)
            }
        }

        /// "a passphrase" or "a 32-byte key": never the secret, so that logs do not leak it.
        public var description: String { secret.description }

        /// No children, so `dump` and debuggers show the description, not the secret.
        public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .enum) }
    }

    /// When a commit reaches the disk.
    public var durability: Durability = .full
    /// What opening does with a damaged file.
    public var recoveryMode: RecoveryMode = .strict
    /// When the engine compacts by itself.
    public var autoCompaction: AutoCompaction = .whenDeadBytesExceed(ratio: 0.5, minimumFileSize: 4 << 20)
    /// Open with a shared lock; never write, truncate or create anything but the lock file.
    /// A writer in another process is refused while this open lasts (and refuses it); see
    /// ``readsBesideWriter`` for a reader that shares the file with a writer.
    public var readOnly: Bool = false
    /// Open for reading beside a writer that may be committing in another process: take no lock
    /// at all, never write, truncate or create anything, and see the newest commits on
    /// `StorageEngine.refresh()`. Implies ``readOnly``'s refusal of writes, but not its lock.
    ///
    /// ```swift
    /// var configuration = EngineConfiguration()
    /// configuration.readsBesideWriter = true
    /// let reader = try StorageEngine(path: "app.store", configuration: configuration)
    /// if try reader.refresh().hasNewCommits { /* read reader.snapshot() again */ }
    /// ```
    public var readsBesideWriter: Bool = false
    /// Bytes of commits after the newest checkpoint past which a commit writes the next one
    /// (persisted key runs and a checkpoint unit; docs/FILE_FORMAT.md, "Checkpoints"), so that
    /// opening reads the checkpoint and replays at most about this much; a compaction writes one
    /// when its output is at least this large. 0 writes none. Tests set it low to checkpoint often.
    public var checkpointInterval: Int = 4 << 20
    /// Keys per type a compaction or a migration holds in memory before it writes them to the new
    /// file as a key run (`RewriteKeyRuns`), so that its memory does not grow with the store.
    /// Tests set it low to write many runs from few objects.
    @_spi(Testing) public var rewriteKeysInMemory = 1 << 16
    /// Keys per type the publication of a streamed commit (`WriteStream`) holds in memory before
    /// it writes them as a key run to an unnamed scratch file (`StreamSpill`), which the next
    /// checkpoint merges into the log, so that a commit's memory does not grow with its size; its
    /// check of the secondary indexes does the same with a quarter as many entries per index
    /// (`StreamIndexSpill`). Tests set it low to write many runs from few objects.
    @_spi(Testing) public var streamKeysInMemory = 1 << 17
    /// How long opening waits while another process holds the store's lock (a writer, or for a
    /// writer any opener) before it throws `lockedElsewhere`; zero, the default, throws at once.
    public var lockTimeout: Duration = .zero

    /// The passphrase or key the store file is encrypted with; nil, the default, for a plain file.
    /// Opening an encrypted file without it throws `encryptionRequired`, a plain one with it
    /// `notEncrypted`, and another passphrase or key `wrongKey`. An in-memory engine ignores it.
    public var encryption: Encryption?
    /// PBKDF2 iterations for a new passphrase envelope: tests lower it to run quickly.
    var keyDerivationIterations = KeyEnvelope.defaultIterations

    /// Creates a configuration; every argument has the default documented on its property.
    public init(
        durability: Durability = .full,
        recoveryMode: RecoveryMode = .strict,
        autoCompaction: AutoCompaction = .whenDeadBytesExceed(ratio: 0.5, minimumFileSize: 4 << 20),
        readOnly: Bool = false
    ) {
        self.durability = durability
        self.recoveryMode = recoveryMode
        self.autoCompaction = autoCompaction
        self.readOnly = readOnly
    }

    /// Whether this open never writes: ``readOnly`` or ``readsBesideWriter``.
    var refusesWrites: Bool { readOnly || readsBesideWriter }
}
