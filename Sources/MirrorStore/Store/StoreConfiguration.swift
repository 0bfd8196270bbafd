import Foundation
@_spi(Testing) import MirrorStoreEngine

extension Store {
    /// How a store keeps its data: durability, schema version, recovery and compaction.
    ///
    /// ```swift
    /// var configuration = Store.Configuration()
    /// configuration.durability = .none            // bulk import; sync happens on close
    /// configuration.schemaVersion = 2
    /// let store = try Store(path: path, models: [Hero.self], configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// When a commit reaches the disk.
        public enum Durability: Sendable {
            /// Each commit is synced (`fdatasync`) before `write` returns: it survives a crash or
            /// power loss. The default.
            case full
            /// Commits are written but not synced: fast bulk loads that a crash may cut short, at
            /// a transaction boundary. `close()` syncs.
            case none
        }

        /// What to do with damage found before the end of the file when opening it.
        public enum Recovery: Sendable {
            /// Refuse to open, with a `StorageError` naming the offset. The default.
            case strict
            /// Keep every transaction before the damage and drop the rest.
            case recoverValidPrefix
        }

        /// When the store rewrites its file without dead records.
        public enum Compaction: Sendable {
            /// Only when ``Store/compact()`` is called.
            case manual
            /// After a commit leaves more than `ratio` of a file of at least `minimumFileSize`
            /// bytes dead, or the key and index runs the store's own checkpoints merged into
            /// newer ones pass an eighth of it (keys added in random order, such as UUIDs, leave
            /// those behind with no update of yours).
            case whenDeadBytesExceed(ratio: Double, minimumFileSize: Int)
        }

        /// When a commit reaches the disk; `.full` by default.
        public var durability: Durability = .full
        /// The code that migrates a store from an older schema version: given the migration and
        /// the version the file was written with.
        public typealias MigrationBlock = @Sendable (_ migration: Migration, _ oldSchemaVersion: Int) throws -> Void

        /// The app's schema version, stored in the file. Raise it whenever the models change: a
        /// file with a lower version is migrated on open, a file with a higher one is refused,
        /// and a changed model without a raised version is a ``StoreError`` listing the changes.
        public var schemaVersion = 0
        /// Runs when a file with a lower ``schemaVersion`` is opened, before the automatic
        /// changes are applied; see ``Migration``. Without one, the automatic rules alone migrate.
        public var migration: MigrationBlock?
        /// What to do with damage before the end of the file; `.strict` by default.
        public var recovery: Recovery = .strict
        /// Automatic compaction; by default when half of a file of 4 MiB or more is dead.
        public var compaction: Compaction = .whenDeadBytesExceed(ratio: 0.5, minimumFileSize: 4 << 20)

        /// How long opening waits while another process has the store open (for writing, or when
        /// this opener writes) before it throws the `StorageError` `.lockedElsewhere`; zero, the
        /// default, throws at once. A helper process that opens a store its app also writes sets it.
        ///
        /// ```swift
        /// var configuration = Store.Configuration()
        /// configuration.lockTimeout = .seconds(2)
        /// ```
        public var lockTimeout: Duration = .zero

        /// Whether this process writes the store or reads it beside a writer in another process.
        public enum Access: Sendable, Equatable {
            /// Reads and writes; one process at a time holds the store's lock. The default.
            case readWrite
            /// Reads only, beside a writer that may be committing in another process (an app's
            /// widget or helper, an admin tool): takes no lock, so neither side ever waits for the
            /// other, and never writes, locks or creates a file, so the file and its folder may be
            /// read-only. The store shows the latest commit when it is opened, and newer ones after
            /// ``Store/refresh()``; observers are refreshed every ``refreshInterval``.
            case readOnly
        }

        /// Whether this process writes the store or reads it beside a writer; `.readWrite` by default.
        ///
        /// ```swift
        /// var configuration = Store.Configuration()
        /// configuration.access = .readOnly
        /// let store = try Store(path: appGroupPath, models: [Hero.self], configuration: configuration)
        /// let heroes = try store.objects(Hero.self).all()   // as of the open
        /// if try store.refresh() { /* the writer committed since */ }
        /// ```
        public var access: Access = .readWrite

        /// How often a ``Access/readOnly`` store looks for the writer's new commits while some
        /// observation (``Results/changes``, ``Store/changes(_:primaryKey:)``) runs: a check of the
        /// file's size and identity, and a read of the new commits when there are some. 50 ms by
        /// default; nothing runs while nothing observes.
        ///
        /// ```swift
        /// configuration.access = .readOnly
        /// configuration.refreshInterval = .milliseconds(10)   // quicker, at a little more work
        /// ```
        public var refreshInterval: Duration = .milliseconds(50)

        /// What encrypts the file at rest: every record, key, type name, schema, metadata entry
        /// and index run is sealed with AES-256-GCM; only what finds the key is in clear.
        ///
        /// ```swift
        /// var configuration = Store.Configuration()
        /// configuration.encryption = .passphrase("correct horse battery staple")
        /// let store = try Store(path: "diary.store", models: [Entry.self], configuration: configuration)
        /// ```
        ///
        /// Its description and mirror say which kind it is, never the secret.
        public enum Encryption: Sendable, CustomStringConvertible, CustomReflectable {
            /// A passphrase, stretched with PBKDF2-HMAC-SHA256 (600,000 iterations) into the key
            /// that wraps the file's data key. An empty one is the `StorageError` `.emptyPassphrase`.
            case passphrase(String)
            /// A raw 32-byte key, such as one kept in the keychain. Another length is the
            /// `StorageError` `.invalidKeyLength`.
            case key(Data)

            var engineEncryption: EngineConfiguration.Encryption {
                switch self {
                case .passphrase(let passphrase): .passphrase(passphrase)
                case .key(let key): .key(Array(key))
                }
            }

            /// "a passphrase" or "a 32-byte key": never the secret, so that logs do not leak it.
            public var description: String { engineEncryption.description }

            /// No children, so `dump` and debuggers show the description, not the secret.
            public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .enum) }
        }

        /// The passphrase or key the file is encrypted with; nil, the default, for a plain file.
        /// Opening an encrypted file without it, or a plain one with it, is a `StorageError`
        /// saying so (`.encryptionRequired`, `.notEncrypted`); another passphrase or key is
        /// `.wrongKey`. ``Store/changeEncryption(to:)`` encrypts, re-keys or decrypts a store.
        public var encryption: Encryption?

        /// Bytes of encoded records a write transaction holds before it streams them to the log
        /// (`PendingWrites`); tests lower it to run small transactions the streamed way.
        var transactionStreamingThreshold = 1 << 20

        /// Keys per type a migration or compaction holds in memory before it writes them to the new
        /// file as a run (`EngineConfiguration.rewriteKeysInMemory`); tests lower it to write many.
        var rewriteKeysInMemory: Int?

        /// Keys per type a streamed transaction, and then its commit, holds in memory before it
        /// writes them to a scratch file as runs (`EngineConfiguration.streamKeysInMemory`); tests
        /// lower it to write many.
        var streamKeysInMemory: Int?

        /// Bytes of commits after which the engine writes a checkpoint
        /// (`EngineConfiguration.checkpointInterval`); tests lower it to checkpoint often.
        var checkpointInterval: Int?

        /// The default configuration.
        public init() {}

        var engineConfiguration: EngineConfiguration {
            var configuration = EngineConfiguration()
            configuration.durability = durability == .full ? .full : .none
            configuration.recoveryMode = recovery == .strict ? .strict : .recoverValidPrefix
            configuration.lockTimeout = lockTimeout
            configuration.readsBesideWriter = access == .readOnly
            configuration.encryption = encryption?.engineEncryption
            if let rewriteKeysInMemory { configuration.rewriteKeysInMemory = rewriteKeysInMemory }
            if let streamKeysInMemory { configuration.streamKeysInMemory = streamKeysInMemory }
            if let checkpointInterval { configuration.checkpointInterval = checkpointInterval }
            switch compaction {
            case .manual:
                configuration.autoCompaction = .disabled
            case .whenDeadBytesExceed(let ratio, let minimumFileSize):
                configuration.autoCompaction = .whenDeadBytesExceed(ratio: ratio, minimumFileSize: minimumFileSize)
            }
            return configuration
        }
    }
}
