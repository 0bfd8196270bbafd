import Foundation
import Logging
import Synchronization
import MirrorStore
import PostgresNIO

/// MirrorStore's models on a PostgreSQL server: a table per model type, writes in one SQL
/// transaction, queries from `#Predicate`.
///
/// ```swift
/// let settings = PostgresSettings(host: "127.0.0.1", port: 5432, user: "app", database: "app")
/// let store = try await PostgresStore.open(settings, models: [Hero.self])
/// try await store.write { transaction in
///     try await transaction.add(hero)                  // INSERT … ON CONFLICT DO UPDATE
///     try await transaction.delete(Hero.self, primaryKey: 7)
/// }                                                    // one SQL transaction
/// let one = try await store.object(Hero.self, primaryKey: 1455)
/// let hulks = try await store.objects(Hero.self).filter(#Predicate { $0.name == "Hulk" }).all()
/// await store.close()
/// ```
///
/// The store is `Sendable`: writes and reads from many tasks run on a pool of connections.
/// Observation: ``PostgresResults/changes`` and ``changes(_:primaryKey:)``, from `LISTEN`/`NOTIFY`,
/// see commits made through any store on the same database.
/// Migrations: `open(_:models:schemaVersion:migration:)` (see ``PostgresMigration``).
/// What is not done yet is listed in the package README, under "Not yet".
public final class PostgresStore: Sendable {
    let client: PostgresClient
    let mapping: DatabaseMapping
    let listener: ChangeListener
    /// The read statements prepared on each connection of the pool.
    let preparedStatements = PreparedStatements()
    private let runner: Task<Void, Never>
    private let isClosed = Mutex(false)
    /// The settings the store was opened with.
    public let settings: PostgresSettings
    /// The application's schema version, kept in the `mirrorstore_metadata` table.
    public let schemaVersion: Int

    static let logger = Logger(label: "MirrorStorePostgres", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The channel every committed write block notifies (`pg_notify`) with the types and keys it
    /// wrote: `mirrorstore_changes_` and the schema the tables are in (`mirrorstore_changes_public`),
    /// or a hash of the schema's name when it is not lowercase ASCII letters, digits and `_`.
    /// Stores on the same database and schema share it, whatever process they are in.
    public var changeChannel: String { listener.channel }

    private init(
        client: PostgresClient, runner: Task<Void, Never>, mapping: DatabaseMapping, listener: ChangeListener, settings: PostgresSettings,
        schemaVersion: Int
    ) {
        self.client = client
        self.listener = listener
        self.runner = runner
        self.mapping = mapping
        self.settings = settings
        self.schemaVersion = schemaVersion
    }

    deinit { runner.cancel() }

    /// Connects to the server, creates the tables of `models` (and of the models they link to)
    /// that do not exist yet, and checks those that do against the models.
    ///
    /// When tables were written with a lower `schemaVersion`, their models may have changed:
    /// `migration` runs once (see ``PostgresMigration``), added properties become columns
    /// filled with the models' `init()` values, removed ones are dropped, all in the open's one
    /// transaction.
    ///
    /// ```swift
    /// let store = try await PostgresStore.open(settings, models: [Person.self], schemaVersion: 2) { migration, old in
    ///     if old < 2 { try migration.renameProperty(onType: "Person", from: "name", to: "fullName") }
    /// }
    /// ```
    ///
    /// - Throws: ``PostgresStoreError`` (`.connectionFailed`) within `settings.connectTimeout`
    ///   when the server cannot be reached; `.unsupportedProperty` for a kind this backend does
    ///   not store yet, naming the property; `.migrationFailed` for a change the migration
    ///   cannot make; `StoreError` (`.schemaChanged`, `.newerSchemaVersion`) when the stored
    ///   tables were made from other models without a raised version; `MappingError` for a
    ///   model that cannot be mapped; what `migration` throws (nothing is changed then).
    public static func open(
        _ settings: PostgresSettings, models: [any Persistable.Type], schemaVersion: Int = 0, migration: PostgresMigrationBlock? = nil
    ) async throws -> PostgresStore {
        let mapping = try DatabaseMapping(models: models)
        var connectionSettings = PostgresConnection.Configuration(
            host: settings.host, port: settings.port, username: settings.user, password: settings.password,
            database: settings.database, tls: .disable)
        connectionSettings.options.connectTimeout = .nanoseconds(Int64(settings.connectTimeout.components.seconds) * 1_000_000_000 + settings.connectTimeout.components.attoseconds / 1_000_000_000)
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: connectionSettings, id: 0, logger: logger)
        } catch {
            throw PostgresStoreError(.connectionFailed(host: settings.host, port: settings.port, reason: Failures.reason(error)))
        }
        let schema: String
        do {
            try await SchemaSetup(mapping: mapping, schemaVersion: schemaVersion, models: models, migration: migration).run(on: connection)
            let rows = try await Failures.translating(mapping) {
                try await connection.query("SELECT current_schema()", logger: logger).collect()
            }
            schema = try rows.first.flatMap { try $0.decode(String?.self) } ?? "public"
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
        let client = PostgresClient(
            configuration: PostgresClient.Configuration(
                host: settings.host, port: settings.port, username: settings.user, password: settings.password,
                database: settings.database, tls: .disable),
            backgroundLogger: logger)
        let runner = Task { await client.run() }
        let listener = ChangeListener(settings: settings, configuration: connectionSettings, channel: ChangeListener.channel(schema: schema))
        return PostgresStore(client: client, runner: runner, mapping: mapping, listener: listener, settings: settings, schemaVersion: schemaVersion)
    }

    /// Closes the store's connections. Calls made after it, or still waiting for a connection,
    /// throw ``PostgresStoreError/Kind/closed``; observations (``PostgresResults/changes``,
    /// ``changes(_:primaryKey:)``) end. Returns within ``PostgresSettings/callTimeout`` even
    /// when the server no longer answers (the connections then close on their own).
    public func close() async {
        isClosed.withLock { $0 = true }
        let listener = listener, runner = runner
        let closing = Task {
            await listener.close()
            runner.cancel()
            await runner.value
        }
        await BoundedWait.end(of: closing, atMost: settings.callTimeout)
    }

    /// Runs `body` in one SQL transaction: everything it writes is committed together when it
    /// returns, and nothing is when it throws (the error is rethrown as it was thrown) or when the
    /// server refused one of its statements, even if `body` caught that error (it is rethrown then).
    ///
    /// ```swift
    /// try await store.write { transaction in
    ///     try await transaction.add(hero)
    ///     try await transaction.deleteAll(Article.self)
    /// }
    /// ```
    ///
    /// - Throws: what `body` throws; `StoreError` (`.uniqueViolation`) when a write would give
    ///   two objects the same value of a unique property; ``PostgresStoreError`` when the server
    ///   refuses a statement.
    @discardableResult
    public func write<Result>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresWriteTransaction) async throws -> sending Result
    ) async throws -> sending Result {
        try await withConnection(isolation: isolation) { connection in
            // `BEGIN` goes with the block's first statement (see `beginIfNeeded()`).
            let transaction = PostgresWriteTransaction(connection: connection, mapping: self.mapping, channel: self.listener.channel)
            let result: Result
            do {
                result = try await body(transaction)
                transaction.end()
                // A call failed and the block caught it: the server has refused everything since.
                if let failure = transaction.failure { throw failure }
                // The changes whose statements did not announce them; delivered to listeners
                // only if the transaction commits.
                if !transaction.notice.isEmpty {
                    transaction.beginIfNeeded()
                    var parameters = SQLParameters()
                    let channel = parameters.add(self.listener.channel)
                    let payload = parameters.add(transaction.notice.payload)
                    try await Failures.translating(self.mapping) {
                        // Its rows are read: a statement with rows reports its failure through them.
                        try await connection.rows(of: PostgresQuery(unsafeSQL: "SELECT pg_notify(\(channel), \(payload))", binds: parameters.bindings))
                    }
                }
                try transaction.checkBegun()
                // Deferred to `COMMIT`, where a violation would take the values with it.
                if !transaction.uniqueValueTypes.isEmpty {
                    try await Failures.translating(self.mapping) {
                        try await UniqueClash.checking(
                            "SET CONSTRAINTS ALL IMMEDIATE", on: connection, mapping: self.mapping, writtenTypes: transaction.uniqueValueTypes)
                    }
                }
            } catch {
                transaction.end()
                if transaction.hasBegun { _ = try? await connection.rows(of: "ROLLBACK") }
                throw error
            }
            // A block that ran no statement has nothing to commit.
            guard transaction.hasBegun else { return result }
            try await Failures.translating(self.mapping) { try await connection.rows(of: "COMMIT") }
            return result
        }
    }

    /// The object of `type` stored under `primaryKey`, with the models it links to, or `nil`.
    ///
    /// - Throws: `StoreError` (`.noPrimaryKey`, `.primaryKeyMismatch`, `.unknownModel`);
    ///   ``PostgresStoreError`` when a row does not read back.
    public func object<Model: Persistable>(
        _ type: Model.Type, primaryKey: some RecordPrimitive, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Model? {
        let table = try mapping.table(for: Model.self)
        let key = try PrimaryKeys.check(primaryKey.recordValue, table: table)
        let found: Handoff<Model?> = try await object(table: table, key: Handoff(key))
        return found.value
    }

    /// ``object(_:primaryKey:isolation:)``, away from the caller's actor: every step awaits the
    /// connection, and each would otherwise come back to the actor; the caller's actor is met
    /// once, at the end. The key is a single value, which nothing else holds.
    private func object<Model: Persistable>(table: TableMapping, key: Handoff<RecordValue>) async throws -> Handoff<Model?> {
        try await withConnection(isolation: nil) { connection in
            let reader = RowReader(connection: connection, mapping: self.mapping, statements: self.preparedStatements)
            return Handoff(try await reader.model(Model.self, table: table, key: key.value))
        }
    }

    /// The objects of `type`, lazily: nothing is read until ``PostgresResults/all(isolation:)``
    /// or ``PostgresResults/count(isolation:)``.
    ///
    /// - Throws: `StoreError` (`.unknownModel`) for a type the store was not opened with.
    public func objects<Model: Persistable>(_ type: Model.Type) throws -> PostgresResults<Model> {
        let table = try mapping.table(for: Model.self)
        return PostgresResults(store: self, table: table)
    }

    func withConnection<Result>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> sending Result
    ) async throws -> sending Result {
        guard !isClosed.withLock({ $0 }) else { throw PostgresStoreError(.closed) }
        let settings = settings
        do {
            return try await TimedLease.run(on: client, timeout: settings.callTimeout, expiredError: {
                PostgresStoreError(.timedOut(host: settings.host, port: settings.port, timeout: settings.callTimeout, reason: "no connection to the server could be opened"))
            }) { connection, lease in
                do {
                    return try await body(connection)
                } catch where lease.hasExpired {
                    throw PostgresStoreError(.timedOut(
                        host: settings.host, port: settings.port, timeout: settings.callTimeout,
                        reason: "the server did not answer the call's statements, so its connection was closed (a write block's transaction rolls back unless its COMMIT had reached the server)"))
                }
            }
        } catch where isClosed.withLock({ $0 }) {
            // The pool refuses leases once it shuts down, with an error of its own module.
            throw PostgresStoreError(.closed)
        } catch let error as PSQLError where error.code != .server {
            throw PostgresStoreError(.connectionFailed(host: settings.host, port: settings.port, reason: Failures.reason(error)))
        } catch let failure as TimedLease.Failure {
            throw PostgresStoreError(.connectionFailed(host: settings.host, port: settings.port, reason: Failures.reason(failure.underlying)))
        } catch let closed as ConnectionClosed {
            throw PostgresStoreError(.connectionFailed(host: settings.host, port: settings.port, reason: closed.description))
        }
    }
}

/// Models made inside a connection's lease, handed to the caller. `@unchecked`: the models are
/// made from rows inside the closure and nothing else keeps them (the reader keeps only the
/// records, which it releases), so the caller is their only owner.
struct Handoff<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Turns the server's errors into MirrorStore's.
enum Failures {
    /// Runs `body`, turning a unique violation into `StoreError.uniqueViolation` and any other
    /// refusal into ``PostgresStoreError/Kind/server(sqlState:message:)``.
    @discardableResult
    static func translating<T>(
        _ mapping: DatabaseMapping, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> sending T
    ) async throws -> sending T {
        do {
            return try await body()
        } catch let error as PSQLError where error.code == .server {
            throw translate(error, mapping: mapping)
        }
    }

    /// The error `error` stands for. A unique violation whose value ``UniqueClash`` could not
    /// read again (a writer that committed it has let it go since) carries the server's detail
    /// as it is, since the server spells values its own way.
    static func translate(_ error: PSQLError, mapping: DatabaseMapping) -> any Error {
        let state = error.serverInfo?[.sqlState] ?? ""
        let message = error.serverInfo?[.message] ?? "\(error)"
        // 23P01: the exclusion constraints that keep unique properties.
        if state == "23505" || state == "23P01", let constraint = error.serverInfo?[.constraintName], let index = mapping.uniqueIndexes[constraint] {
            return StoreError(.uniqueViolation(typeName: index.typeName, property: index.property, value: error.serverInfo?[.detail] ?? message))
        }
        return PostgresStoreError(.server(sqlState: state, message: message))
    }

    /// A short reason for a connection failure.
    static func reason(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if let underlying = error.underlying { return "\(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }
}

/// Checks keys given to lookups and deletes against the model's primary key.
enum PrimaryKeys {
    /// A key as messages show it, spelled as the file store spells it (`StorageKey`'s
    /// description): `1455`, `"Hulk"` (a Swift literal, so `"1455"` reads apart from `1455`),
    /// `E621E1F8-C36C-495A-93FC-0C247A3E6E5F`.
    static func messageText(_ key: RecordValue) -> String {
        if case .string(let value) = key { return value.debugDescription }
        return text(key)
    }

    /// A key as change notices name it: `1455`, `Hulk`.
    static func text(_ key: RecordValue) -> String {
        switch key {
        case .int(let value): "\(value)"
        case .uint(let value): "\(value)"
        case .string(let value): value
        case .uuid(let value): value.uuidString
        default: key.description
        }
    }

    /// Whether key `a` comes before key `b` in the file store's key order, which
    /// `StoreError.deleteDenied` names objects by: integers numerically (unsigned ones by their
    /// bits as a signed integer, as the file store keeps them), strings by the code points of
    /// their NFC form, UUIDs by their bytes (the order of their hexadecimal text).
    static func precedes(_ a: RecordValue, _ b: RecordValue) -> Bool {
        switch (a, b) {
        case (.int(let a), .int(let b)): a < b
        case (.uint(let a), .uint(let b)): Int64(bitPattern: a) < Int64(bitPattern: b)
        case (.string(let a), .string(let b)):
            a.precomposedStringWithCanonicalMapping.utf8.lexicographicallyPrecedes(b.precomposedStringWithCanonicalMapping.utf8)
        case (.uuid(let a), .uuid(let b)): a.uuidString < b.uuidString
        default: false
        }
    }

    static func check(_ value: RecordValue, table: TableMapping) throws -> RecordValue {
        let kind = table.primaryKey.kind
        guard kind.accepts(value) else {
            throw StoreError(.primaryKeyMismatch(typeName: table.typeName, expected: kind.description, found: value.description))
        }
        return value
    }
}
