import Foundation
import MirrorStoreEngine

/// An embedded, append-only, crash-safe store of ``Persistable`` models.
///
/// ```swift
/// let store = try Store(path: "heroes.store", models: [Hero.self])
/// try store.write { transaction in
///     try transaction.add(hero)
/// }
/// let hero = try store.object(Hero.self, primaryKey: 1455)
/// let all = try store.objects(Hero.self).all()
/// ```
///
/// A store is `Sendable`: use it from any thread or task. Write blocks run one at a time; reads
/// run beside them on a consistent snapshot and never see part of a transaction. Models read out
/// are detached copies.
///
/// One process may open a file once for writing: a second `Store` on the same path throws until
/// the first is closed (the engine's `StorageError` says so), and another writing process gets a
/// `StorageError` saying the store is open elsewhere. Any number of stores opened with
/// ``Configuration/Access/readOnly`` read beside the writer, in its process or others, and see
/// its newer commits after ``refresh()``.
public final class Store: Sendable {
    private let engine: StorageEngine
    private let registry: ModelRegistry
    /// Serializes write blocks; guards the next identity of each type with generated keys.
    private let writeLock = Lock<[String: Int64]>([:])
    /// Committed transactions not yet durable, which the next one reads through.
    private let inFlight = InFlightWrites()
    /// The thread inside this store's write block, refused when it calls back into the store.
    private let activeWrites = ActiveWrites()
    /// Whether the store reads beside a writer (``Configuration/Access/readOnly``).
    private let isReader: Bool
    /// Bytes of records a transaction holds before it streams them to the log.
    private let streamingThreshold: Int
    /// Keys per type a streamed transaction holds in memory before it writes them to a scratch file.
    private let streamKeysInMemory: Int
    /// The raw values the file holds for each enum property, checked when it is opened.
    private let enumValues: StoredEnumValues
    /// The observers of results and objects, woken after the commits that concern them.
    let observation: StoreObservation
    /// The newest query source of each type, reused until the store changes.
    private let sources: QuerySources
    /// Where async write blocks wait for the write lock and run, off the cooperative threads.
    let writeQueue = DispatchQueue(label: "MirrorStore.writes")
    /// Where async writes wait for their commit's sync, so that the next block can run meanwhile.
    let commitQueue = DispatchQueue(label: "MirrorStore.commits")

    static let schemaVersionKey = "mirrorstore.schemaVersion"

    /// Opens the store at `path`, creating it if missing, for the given models (and every model
    /// they link to).
    ///
    /// - Throws: `StorageError` for file problems (not a store, damaged, open elsewhere, …),
    ///   ``StoreError`` when the stored schema differs from the models', ``MappingError`` when a
    ///   model cannot be mapped.
    public convenience init(path: String, models: [any Persistable.Type], configuration: Configuration = .init()) throws {
        if configuration.encryption != nil { AES256GCM.prepareInBackground() }
        let registry = try ModelRegistry(models: models)
        try self.init(engine: StorageEngine(path: path, configuration: configuration.engineConfiguration),
                      registry: registry, configuration: configuration)
    }

    /// A store that lives in memory only, with the same behaviour as a file store.
    public static func inMemory(models: [any Persistable.Type], configuration: Configuration = .init()) throws -> Store {
        let registry = try ModelRegistry(models: models)
        return try Store(engine: StorageEngine(inMemoryWith: configuration.engineConfiguration),
                         registry: registry, configuration: configuration)
    }

    private init(engine: StorageEngine, registry: ModelRegistry, configuration: Configuration) throws {
        self.engine = engine
        self.registry = registry
        enumValues = StoredEnumValues(registry: registry)
        let sources = QuerySources(engine: engine)
        self.sources = sources
        isReader = configuration.access == .readOnly
        streamingThreshold = configuration.transactionStreamingThreshold
        streamKeysInMemory = engine.streamKeysInMemory
        observation = StoreObservation(
            engine: engine, registry: registry, refreshInterval: isReader ? configuration.refreshInterval : nil,
            beforeRefresh: { [weak sources] in sources?.removeAll() })
        do {
            if isReader {
                try checkSchemasForReading(version: configuration.schemaVersion)
            } else {
                try prepareSchemas(version: configuration.schemaVersion, migration: configuration.migration)
            }
            try Self.translatingUniqueViolations {
                try engine.defineIndexes(IndexKeys.definitions(for: registry))
            }
        } catch {
            try? engine.close()
            throw error
        }
    }

    /// Checks, for a store that reads beside a writer and writes nothing, that the file's
    /// schemas and version are the models': a file of a higher version, or whose schema of a
    /// model differs, is refused as a writing store would refuse it (a writer migrates; a reader
    /// cannot). Types the file does not hold yet read as empty.
    private func checkSchemasForReading(version: Int) throws {
        let snapshot = engine.snapshot()
        let storedVersion = snapshot.metadata(key: Self.schemaVersionKey).flatMap(Self.decodeVersion) ?? 0
        guard storedVersion <= version else {
            throw StoreError(.newerSchemaVersion(stored: storedVersion, configured: version))
        }
        let differences = registry.differences(stored: try StoredSchemas(snapshot: snapshot))
        guard differences.isEmpty else { throw StoreError(.schemaChanged(version: storedVersion, differences: differences)) }
    }

    /// Runs `body`, reporting the engine's unique-index refusal as the models' rule it breaks.
    @discardableResult
    static func translatingUniqueViolations<Result>(_ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as StorageError {
            guard case .uniqueConstraint(let index, let value) = error.kind, let dot = index.firstIndex(of: ".") else { throw error }
            throw StoreError(.uniqueViolation(
                typeName: String(index[..<dot]), property: String(index[index.index(after: dot)...]), value: value))
        }
    }

    /// Checks the file's schemas against the models, migrates a file of a lower schema version,
    /// records the models' schemas and version, and checks the enum raw values the file holds
    /// (recording them first for a file that lacks their record).
    private func prepareSchemas(version: Int, migration: Configuration.MigrationBlock?) throws {
        let snapshot = engine.snapshot()
        let versionBytes = snapshot.metadata(key: Self.schemaVersionKey)
        let storedVersion = versionBytes.flatMap(Self.decodeVersion) ?? 0
        guard storedVersion <= version else {
            throw StoreError(.newerSchemaVersion(stored: storedVersion, configured: version))
        }
        let stored = try StoredSchemas(snapshot: snapshot)
        let differences = registry.differences(stored: stored)
        // A new file has nothing to migrate; an existing one migrates when its version is raised
        // and its schemas changed or the app migrates data itself.
        if versionBytes != nil, storedVersion < version, !differences.isEmpty || migration != nil {
            try MigrationRun(
                engine: engine, registry: registry, stored: stored, fromVersion: storedVersion, toVersion: version,
                block: migration
            ).run()
            var batch = WriteBatch()
            try enumValues.open(engine.snapshot(), registry: registry, into: &batch)
            if !batch.isEmpty { try engine.commit(batch) }
            return
        }
        guard differences.isEmpty else { throw StoreError(.schemaChanged(version: storedVersion, differences: differences)) }
        var batch = WriteBatch()
        // New types, and types whose indexed properties changed: indexes are built on open, so
        // the stored schema only records what the models now ask for.
        for typeName in registry.typeNames where stored.schema(named: typeName) != registry.schema(named: typeName) {
            if let schema = registry.schema(named: typeName) {
                batch.setSchema(type: typeName, schema: SchemaCoding.encode(schema))
            }
        }
        if storedVersion != version || snapshot.metadata(key: Self.schemaVersionKey) == nil {
            batch.setMetadata(key: Self.schemaVersionKey, value: Self.encodeVersion(version))
        }
        try enumValues.open(snapshot, registry: registry, into: &batch)
        if !batch.isEmpty { try engine.commit(batch) }
    }

    static func encodeVersion(_ version: Int) -> [UInt8] {
        withUnsafeBytes(of: Int64(version).littleEndian) { Array($0) }
    }

    static func decodeVersion(_ bytes: [UInt8]) -> Int? {
        guard bytes.count == 8 else { return nil }
        return Int(bytes.reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) })
    }

    /// Runs `body` as one transaction: everything it does is committed together when it returns,
    /// or nothing is when it throws.
    ///
    /// Write blocks run one at a time: a write from another thread or task waits for this one.
    /// Inside `body`, use its transaction: calling `write`, ``compact()`` or ``close()`` on the
    /// same store there throws a ``StoreError`` at once, since it would wait for `body` forever.
    ///
    /// The next write block may start while this one's commit is still syncing: it reads this
    /// one's changes, and the two are synced together (group commit). Neither returns before its
    /// own commit is durable. Should the earlier commit fail, the later one fails too
    /// (`StorageError.Kind.precedingCommitFailed`) and writes nothing.
    ///
    /// - Returns: What `body` returns.
    @discardableResult
    public func write<Result>(_ body: (WriteTransaction) throws -> Result) throws -> Result {
        let staged = try stage(body)
        try waitForCommit(staged.commit)
        return staged.result
    }

    /// A write block that has run and whose commit may still be on its way to the disk.
    struct StagedWrite<Result> {
        let result: Result
        let commit: PendingCommit?
    }

    /// What a write block must wait for before it returns.
    enum PendingCommit {
        /// Its own batch.
        case own(CommitTicket)
        /// Nothing of its own, but it read the changes of this commit still in flight.
        case readFrom(CommitTicket)
    }

    /// Runs `body` under the write lock and submits its batch, without waiting for the sync.
    func stage<Result>(_ body: (WriteTransaction) throws -> Result) throws -> StagedWrite<Result> {
        try refuseInsideWrite("write(_:)")
        // Before `body` runs: nothing it does could be kept.
        if isReader { throw StorageError(.readOnly) }
        return try writeLock.withLock { nextIdentities in
            // The commits in flight before the snapshot: one that finishes in between is published
            // before the snapshot is taken, or still listed here; the other order could miss it.
            let earlier = inFlight.current()
            let snapshot = engine.snapshot()
            // A closed store keeps nothing: refused before the block runs, as a read-only one is.
            try snapshot.checkOpen()
            let transaction = WriteTransaction(
                snapshot: snapshot, registry: registry, enumValues: enumValues, nextIdentities: nextIdentities,
                beneath: earlier.writes, streaming: PendingWrites.Streaming(
                    engine: engine, threshold: streamingThreshold, keysInMemory: streamKeysInMemory,
                    sealsScratch: engine.sealsScratchFiles))
            let result: Result
            do {
                result = try activeWrites.run { try body(transaction) }
            } catch {
                _ = transaction.finish()
                // Whatever the transaction streamed stays dead bytes in the log.
                transaction.pending.abandon()
                throw error
            }
            nextIdentities = transaction.finish()
            let batch = transaction.makeBatch()
            let stream = transaction.pending.stream
            guard !batch.isEmpty || stream != nil else {
                return StagedWrite(result: result, commit: earlier.newest.map(PendingCommit.readFrom))
            }
            let written = batch.writtenTypes.union(transaction.pending.streamedTypes)
            let observers = observation.observers
            let enumValues = enumValues
            let newEnumValues = transaction.newEnumValues
            sources.removeAll()
            let inFlight = inFlight
            let writes = ObjectIdentifier(transaction.pending)
            let onPublish: @Sendable () -> Void = {
                if !newEnumValues.isEmpty { enumValues.published(newEnumValues) }
                // The identity only: holding the writes here would keep them until the commit ends.
                inFlight.published(writes)
                observers.notify(written: written)
            }
            let ticket = if let stream {
                engine.submit(batch, completing: stream, after: earlier.newest, onPublish: onPublish)
            } else {
                engine.submit(batch, after: earlier.newest, onPublish: onPublish)
            }
            inFlight.add(ticket, writes: transaction.pending)
            return StagedWrite(result: result, commit: .own(ticket))
        }
    }

    /// Waits until a staged write's commit is durable, or throws why it failed.
    func waitForCommit(_ commit: PendingCommit?) throws {
        switch commit {
        case nil:
            return
        case .own(let ticket):
            try Self.translatingUniqueViolations { try engine.wait(for: ticket) }
        case .readFrom(let ticket):
            do {
                try engine.wait(for: ticket)
            } catch {
                throw StorageError(.precedingCommitFailed)
            }
        }
    }

    /// The model stored under `primaryKey`, or `nil`.
    public func object<Model: Persistable>(_ type: Model.Type, primaryKey: some RecordPrimitive) throws -> Model? {
        let entry = try registry.entry(for: type)
        let key = try registry.key(primaryKey, for: entry)
        let snapshot = engine.snapshot()
        // A closed store holds no index to miss in: a key it never held is refused too.
        try snapshot.checkOpen()
        return try ModelReader.model(type, entry: entry, key: key, snapshot: snapshot, registry: registry)
    }

    /// All stored models of a type, as lazy ``Results`` to filter and sort. Making them reads no
    /// object: see ``Results`` for what a read can meet.
    ///
    /// - Throws: ``StoreError`` when the type is not one of the store's models, `StorageError`
    ///   when the store is closed.
    public func objects<Model: Persistable>(_ type: Model.Type) throws -> Results<Model> {
        let source = try sources.source(of: ObjectIdentifier(type), entry: { () throws(StoreError) in try registry.entry(for: type) },
                                        observation: observation)
        try source.checkOpen()
        return Results(source: source)
    }

    /// Throws when the current thread is inside a write block of this store, where taking the
    /// write lock again would never return.
    private func refuseInsideWrite(_ operation: String) throws(StoreError) {
        if activeWrites.containsCurrentThread { throw StoreError(.calledInsideWrite(operation: operation)) }
    }

    /// Rewrites the file with live records only, crash-safely.
    ///
    /// - Throws: ``StoreError`` when called inside a write block of this store.
    public func compact() throws {
        try refuseInsideWrite("compact()")
        try writeLock.withLock { _ in
            sources.removeAll()
            try engine.compact()
        }
    }

    /// Encrypts the file, changes its passphrase or key, or decrypts it (`nil`), crash-safely.
    /// Between two secrets only the key slot of the file's clear first page is rewritten; encrypting
    /// and decrypting rewrite the file as ``compact()`` does. Later opens need the new secret in
    /// ``Configuration/encryption``.
    ///
    /// ```swift
    /// try store.changeEncryption(to: .passphrase("a new passphrase"))
    /// ```
    ///
    /// - Throws: `StorageError` (`emptyPassphrase`, `invalidKeyLength`, or a failed rewrite,
    ///   which leaves the store as it was); ``StoreError`` when called inside a write block.
    public func changeEncryption(to encryption: Configuration.Encryption?) throws {
        try refuseInsideWrite("changeEncryption(to:)")
        try writeLock.withLock { _ in
            sources.removeAll()
            try engine.changeEncryption(to: encryption?.engineEncryption)
        }
    }

    /// Rewrites an encrypted file under a new random data key (as ``compact()`` does, which
    /// rotates it too), crash-safely; the passphrase or key stays the same. A plain file is
    /// compacted.
    ///
    /// ```swift
    /// try store.rotateEncryptionKey()
    /// ```
    ///
    /// - Throws: `StorageError` when the rewrite fails (the store is then as it was);
    ///   ``StoreError`` when called inside a write block of this store.
    public func rotateEncryptionKey() throws {
        try refuseInsideWrite("rotateEncryptionKey()")
        try compact()
    }

    /// Syncs and closes the file. Later calls throw.
    ///
    /// - Throws: ``StoreError`` when called inside a write block of this store.
    public func close() throws {
        try refuseInsideWrite("close()")
        try writeLock.withLock { _ in
            defer { observation.close() }
            sources.removeAll()
            try engine.close()
        }
    }

    /// Shows the commits a writer in another process made since this store was opened or last
    /// refreshed, for a store opened with ``Configuration/Access/readOnly``; reads and results
    /// made afterwards see them, and observers of the types they wrote are woken. Results and
    /// models read before keep what they showed. A writing store sees its own commits at once:
    /// there, this does nothing and returns `false`.
    ///
    /// A commit is seen whole or not at all, never older than one seen before; a compaction the
    /// writer made is followed to its new file. Never waits for the writer, nor makes it wait.
    ///
    /// ```swift
    /// var configuration = Store.Configuration()
    /// configuration.access = .readOnly
    /// let store = try Store(path: path, models: [Hero.self], configuration: configuration)
    /// if try store.refresh() {
    ///     heroes = try store.objects(Hero.self).all()
    /// }
    /// ```
    ///
    /// - Returns: Whether there were new commits.
    /// - Throws: `StorageError` when the store is closed or the file cannot be read.
    @discardableResult
    public func refresh() throws -> Bool {
        try observation.refresh()
    }

    /// Sizes, counts and the last sequence number, as the engine reports them.
    public var statistics: EngineStatistics { engine.statistics }
    /// What recovery left out when the store was opened and where it kept those bytes; nil when the file was intact.
    public var recoveryReport: RecoveryReport? { engine.recoveryReport }
}
