import Foundation
import MirrorStore
import PostgresNIO
import Synchronization

/// The writes of one ``PostgresStore/write(isolation:_:)`` block, all in one SQL transaction.
///
/// Each call runs its statements at once, so reads through the transaction see its own writes,
/// and the first error a call throws (a unique violation, say) leaves the block to throw it and
/// roll everything back.
///
/// ```swift
/// try await store.write { transaction in
///     try await transaction.add(hero)                          // saves its publisher too
///     let removed = try await transaction.delete(Hero.self, primaryKey: 7)
/// }
/// ```
public final class PostgresWriteTransaction {
    let connection: PostgresConnection
    let mapping: DatabaseMapping
    private var isOpen = true
    /// The first error a statement failed with. PostgreSQL refuses every statement after a failed
    /// one and answers `COMMIT` with a rollback, so the whole write fails with it, even when the
    /// block caught it. Errors found before a statement runs (a value that cannot be stored, a
    /// missing link target) leave the transaction as it was, and the block may go on.
    private(set) var failure: (any Error)?
    /// The channel the block's changes are announced on.
    let channel: String
    /// The types and keys the block wrote whose notice was not sent with their statement, sent
    /// with `pg_notify` before `COMMIT`.
    private(set) var notice = ChangeNotice()
    /// How many statements sent their own notice (see ``write(_:_:parameterCount:typeName:key:perRow:isolation:)``).
    private var inlineNotices = 0
    /// At most this many statements of a transaction send their own notice, so a large
    /// transaction sends a bounded number of notices, the rest together before `COMMIT`.
    static let inlineNoticeLimit = 32

    /// The types with unique properties or arrays the block wrote, whose constraints are then
    /// checked before `COMMIT` (see ``UniqueClash``): only their tables can hold a clash.
    private(set) var uniqueValueTypes: Set<String> = []

    /// Whether `BEGIN` was sent: with the transaction's first statement, not before, and without
    /// waiting for its answer (see ``beginIfNeeded()``). A block that runs no statement sends
    /// nothing, and has nothing to commit.
    private(set) var hasBegun = false
    /// The error `BEGIN` failed with, set as its answer arrives on the connection's event loop:
    /// before the answer to any statement sent after it.
    private let beginFailure = BeginFailure()

    private final class BeginFailure: Sendable {
        let error = Mutex<(any Error)?>(nil)
    }

    init(connection: PostgresConnection, mapping: DatabaseMapping, channel: String) {
        self.connection = connection
        self.mapping = mapping
        self.channel = channel
    }

    func end() { isOpen = false }

    /// Sends `BEGIN` before the transaction's first statement, without waiting for its answer: a
    /// connection runs its queries one after the other in the order they were sent, so the
    /// statement sent next starts as soon as `BEGIN` is done, with no turn through this task in
    /// between. Called right before a statement is sent.
    func beginIfNeeded() {
        guard !hasBegun else { return }
        hasBegun = true
        let failure = beginFailure
        connection.query(PostgresQuery(unsafeSQL: "BEGIN"), logger: PostgresStore.logger) { _ in }
            .whenFailure { error in failure.error.withLock { $0 = error } }
    }

    /// Throws what `BEGIN` failed with, once a statement sent after it has its answer. `BEGIN`
    /// fails only on a connection that fails every statement, so the statement after it fails
    /// too; should it not, the write fails all the same, before its next statement and `COMMIT`.
    func checkBegun() throws {
        guard let error = beginFailure.error.withLock({ $0 }) else { return }
        if let error = error as? PSQLError, error.code == .server { throw Failures.translate(error, mapping: mapping) }
        throw error
    }

    private func checkOpen() throws {
        guard isOpen else { throw StoreError(.transactionEnded) }
        if let failure { throw failure }
    }

    /// Runs one call's work, after checking the transaction is still usable.
    private func recording<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async throws -> T {
        try checkOpen()
        return try await body()
    }

    /// A reader on the transaction's connection, whose failed statements fail the transaction.
    private func reading<T>(isolation: isolated (any Actor)? = #isolation, _ body: (RowReader) async throws -> T) async throws -> T {
        beginIfNeeded()
        let reader = RowReader(connection: connection, mapping: mapping)
        defer { if failure == nil, let failed = reader.statementFailure { failure = failed } }
        return try await body(reader)
    }

    /// Inserts `model`, or replaces the stored object with its primary key
    /// (`INSERT … ON CONFLICT (key) DO UPDATE`), and saves the models it links to the same way,
    /// or, with `linkedObjects: .referenceOnly`, stores only their keys.
    ///
    /// Every value is checked before any statement runs: a call that throws for a value wrote
    /// nothing.
    ///
    /// - Throws: `StoreError` (`.uniqueViolation`; `.missingLinkTarget` for a target not stored
    ///   with `.referenceOnly`; `.unknownModel`); ``PostgresStoreError`` (`.unstorableValue`) for
    ///   a value PostgreSQL cannot keep exactly; `MappingError`.
    public func add<Model: Persistable>(
        _ model: Model, linkedObjects: LinkedObjects = .save, isolation: isolated (any Actor)? = #isolation
    ) async throws {
        try await recording {
            let record = try model.managedObject()
            defer { record.releaseGraph() }
            try await save(record, linkedObjects: linkedObjects)
        }
    }

    /// Upserts `record` and, as `linkedObjects` says, the records it links to; every value is
    /// checked before any statement runs.
    private func save(_ record: ManagedObject, linkedObjects: LinkedObjects, isolation: isolated (any Actor)? = #isolation) async throws {
        var saved = Set<ObjectIdentifier>()
        var statements: [Upsert] = []
        var references: [Reference] = []
        try collect(record, saved: &saved, statements: &statements, references: &references, linkedObjects: linkedObjects)
        for reference in references { try await check(reference) }
        for statement in statements {
            if statement.table.keepsUniqueValues { uniqueValueTypes.insert(statement.table.typeName) }
            _ = try await write(
                statement.table.upsertStatement, statement.bindings, parameterCount: statement.table.columns.count,
                typeName: statement.table.typeName, key: statement.key, perRow: false)
        }
    }

    /// Adds each model of `models`, as ``add(_:linkedObjects:isolation:)`` does.
    public func add<S: Sequence>(
        contentsOf models: S, linkedObjects: LinkedObjects = .save, isolation: isolated (any Actor)? = #isolation
    ) async throws where S.Element: Persistable {
        for model in models { try await add(model, linkedObjects: linkedObjects) }
    }

    /// The object of `type` under `primaryKey` as this transaction sees it, or `nil`.
    public func object<Model: Persistable>(
        _ type: Model.Type, primaryKey: some RecordPrimitive, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Model? {
        try await recording {
            let table = try mapping.table(for: Model.self)
            let key = try PrimaryKeys.check(primaryKey.recordValue, table: table)
            return try await reading { reader in try await reader.model(Model.self, table: table, key: key) }
        }
    }

    /// Deletes the object of `type` under `primaryKey`, and what the models' `DeleteRule`s delete
    /// with it; links to it read as `nil` afterwards (and arrays of links leave it out).
    ///
    /// - Returns: Whether an object was deleted.
    /// - Throws: `StoreError.deleteDenied` when a `.deny` link from an object that stays points
    ///   at it or at an object the rules delete; nothing is deleted then.
    @discardableResult
    public func delete<Model: Persistable>(
        _ type: Model.Type, primaryKey: some RecordPrimitive, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Bool {
        try await recording {
            let table = try mapping.table(for: Model.self)
            let key = try PrimaryKeys.check(primaryKey.recordValue, table: table)
            if mapping.deleteRules.apply(toDeleting: table.typeName) { return try await deleteFollowingRules(table, keys: [key]) == 1 }
            var parameters = SQLParameters()
            guard case .scalar(let keyType) = table.primaryKey.storage else { return false }
            let placeholder = try parameters.add(key, type: keyType)
            let rows = try await write(
                "DELETE FROM \(table.table) WHERE \(table.primaryKey.quotedName) = \(placeholder) RETURNING 1", parameters.bindings,
                parameterCount: parameters.count, typeName: table.typeName, key: key, perRow: true)
            return !rows.isEmpty
        }
    }

    /// Changes some properties of the stored model with `primaryKey` and stores it again.
    ///
    /// ```swift
    /// try await transaction.update(Hero.self, primaryKey: 1455) { $0.realName = "Anthony Edward Stark" }
    /// ```
    ///
    /// The row is locked first (`SELECT … FOR UPDATE`) until the transaction ends, so updates of
    /// one object by several processes at once run one after the other, each reading what the
    /// previous one committed: none is lost.
    ///
    /// - Returns: The updated model, or `nil` when no model has that key (nothing is written).
    @discardableResult
    public func update<Model: Persistable>(
        _ type: Model.Type, primaryKey: some RecordPrimitive, isolation: isolated (any Actor)? = #isolation,
        _ changes: (inout Model) throws -> Void
    ) async throws -> Model? {
        try await recording {
            let table = try mapping.table(for: Model.self)
            let key = try PrimaryKeys.check(primaryKey.recordValue, table: table)
            try await lockRow(of: table, key: key)
        }
        guard var model = try await object(type, primaryKey: primaryKey) else { return nil }
        try changes(&model)
        try await add(model)
        return model
    }

    /// Sets one property of the stored model with `primaryKey` by writing its stored record, so
    /// the property may be a `let` of an immutable struct; the row is locked first, as
    /// ``update(_:primaryKey:isolation:_:)`` locks it, and the models it links to are saved again
    /// as they are stored.
    ///
    /// ```swift
    /// try await transaction.update(Character.self, primaryKey: 1455, set: \.realName, to: "Anthony Edward Stark")
    /// ```
    ///
    /// - Returns: The updated model, or `nil` when no model has that key (nothing is written).
    /// - Throws: `StoreError` (`.notAStoredProperty`) when the key path names no stored property
    ///   of the model; `MappingError` for a value that cannot be stored.
    @discardableResult
    public func update<Model: Persistable, Value>(
        _ type: Model.Type, primaryKey: some RecordPrimitive, set property: KeyPath<Model, Value>, to value: Value,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> Model? {
        let (name, recordValue) = try mapping.models.recordValue(value, for: property)
        let found: Bool = try await recording {
            let table = try mapping.table(for: Model.self)
            let key = try PrimaryKeys.check(primaryKey.recordValue, table: table)
            try await lockRow(of: table, key: key)
            // Saved while the reader lives: it releases the graphs of the records it read.
            return try await reading { reader in
                guard let record = try await reader.record(table: table, key: key) else { return false }
                try record.setValue(recordValue, forProperty: name)
                try await save(record, linkedObjects: .save)
                return true
            }
        }
        guard found else { return nil }
        return try await object(type, primaryKey: primaryKey)
    }

    /// Locks the row of `key` (`SELECT … FOR UPDATE`) until the transaction ends. Under READ
    /// COMMITTED a read after it takes a new snapshot, which holds the last committed version once
    /// the lock is granted.
    private func lockRow(of table: TableMapping, key: RecordValue, isolation: isolated (any Actor)? = #isolation) async throws {
        guard case .scalar(let keyType) = table.primaryKey.storage else { return }
        var parameters = SQLParameters()
        let placeholder = try parameters.add(key, type: keyType)
        _ = try await run("SELECT 1 FROM \(table.table) WHERE \(table.primaryKey.quotedName) = \(placeholder) FOR UPDATE", parameters)
    }

    /// Deletes the objects of `type` that `predicate` holds for, as this transaction sees them:
    /// in one `DELETE … WHERE` when SQL decides the predicate exactly, otherwise by key after
    /// evaluating the predicate in Swift on the rows SQL narrows down, or when the models'
    /// `DeleteRule`s apply to `type` (then as ``delete(_:primaryKey:isolation:)`` deletes).
    ///
    /// - Returns: How many objects were deleted.
    @discardableResult
    public func delete<Model: Persistable>(
        _ type: Model.Type, where predicate: Predicate<Model>, isolation: isolated (any Actor)? = #isolation
    ) async throws -> Int {
        try await recording {
            let table = try mapping.table(for: Model.self)
            let tree = try mapping.models.queryTree(for: predicate)
            var parameters = SQLParameters()
            let condition = try SQLConditionTranslator(table: table, mapping: mapping).condition(tree.condition, &parameters)
            let followsRules = mapping.deleteRules.apply(toDeleting: table.typeName)
            if let condition, condition.isExact, !followsRules {
                return try await write(
                    "DELETE FROM \(table.table) WHERE \(condition.text) RETURNING 1", parameters.bindings,
                    parameterCount: parameters.count, typeName: table.typeName, key: nil, perRow: true).count
            }
            // Every object is decided before anything is deleted, so a predicate that throws
            // deletes nothing.
            let keys: [RecordValue] = try await reading { reader in
                let records = try await reader.records(
                    table: table, condition: condition?.text, parameters: parameters, orderBy: table.primaryKey.quotedName, limit: nil)
                return try records.filter { try predicate.evaluate(try reader.model(Model.self, from: $0)) }
                    .map { $0[propertyAt: table.primaryKey.position] }
            }
            guard !keys.isEmpty else { return 0 }
            if followsRules { return try await deleteFollowingRules(table, keys: keys) }
            var byKey = SQLParameters()
            let placeholder = try byKey.addKeys(keys, of: table)
            let deleted = try await run("DELETE FROM \(table.table) WHERE \(table.primaryKey.quotedName) = ANY(\(placeholder)) RETURNING 1", byKey).count
            for key in keys { noteChange(table.typeName, key: key) }
            return deleted
        }
    }

    /// Deletes every object of `type`, and what the models' `DeleteRule`s delete with them.
    ///
    /// - Throws: `StoreError.deleteDenied` when a `.deny` link refuses one; nothing is deleted then.
    public func deleteAll<Model: Persistable>(_ type: Model.Type, isolation: isolated (any Actor)? = #isolation) async throws {
        try await recording {
            let table = try mapping.table(for: Model.self)
            if mapping.deleteRules.apply(toDeleting: table.typeName) {
                let keys = try await run("SELECT \(table.primaryKey.selectExpression(table: table.table)) FROM \(table.table)", SQLParameters())
                let coding = ColumnCoding(models: mapping.models, typeName: table.typeName)
                let stored = try keys.compactMap { row in try row.first.map { try coding.read($0, column: table.primaryKey, key: { "?" }) } }
                if !stored.isEmpty { _ = try await deleteFollowingRules(table, keys: stored) }
                return
            }
            _ = try await write("DELETE FROM \(table.table)", PostgresBindings(), parameterCount: 0, typeName: table.typeName, key: nil, perRow: false)
        }
    }

    /// One upsert, ready to run: the table's statement and the object's values.
    private struct Upsert {
        let table: TableMapping
        let key: RecordValue
        let bindings: PostgresBindings
    }

    /// A link stored by key alone, whose target must exist.
    private struct Reference {
        let table: TableMapping
        let key: RecordValue
        let linkedFrom: String
    }

    /// The upserts of `record` and, with `.save`, of the records it links to; with
    /// `.referenceOnly`, the targets to check instead. Throws before anything runs.
    private func collect(
        _ record: ManagedObject, saved: inout Set<ObjectIdentifier>, statements: inout [Upsert], references: inout [Reference],
        linkedObjects: LinkedObjects
    ) throws {
        let table = try mapping.table(named: record.objectSchema.typeName)
        // A model is reached twice only through links: the model added needs no entry unless it
        // has links that may lead back to it; a linked model (statements already hold the
        // model added) always does.
        if table.hasLinks || !statements.isEmpty {
            guard saved.insert(ObjectIdentifier(record)).inserted else { return }
        }
        let coding = ColumnCoding(models: mapping.models, typeName: table.typeName)
        var bindings = PostgresBindings(capacity: table.columns.count)
        var targets: [ManagedObject] = []
        for column in table.columns {
            let value = record[propertyAt: column.position]
            try coding.bind(value, column: column, into: &bindings)
            guard table.hasLinks, !column.linkTargets.isEmpty else { continue }
            var linked: [ManagedObject] = []
            Self.linkedRecords(in: value, into: &linked)
            switch linkedObjects {
            case .save:
                targets.append(contentsOf: linked)
            case .referenceOnly:
                for linked in linked {
                    let targetTable = try mapping.table(named: linked.objectSchema.typeName)
                    references.append(Reference(table: targetTable, key: linked[propertyAt: targetTable.primaryKey.position], linkedFrom: table.typeName))
                }
            }
        }
        statements.append(Upsert(table: table, key: record[propertyAt: table.primaryKey.position], bindings: bindings))
        for target in targets {
            try collect(target, saved: &saved, statements: &statements, references: &references, linkedObjects: linkedObjects)
        }
    }

    /// Appends the records with a primary key that `value` links to: itself, its elements or
    /// entries, and those inside embedded models, at any depth, as the file store saves them.
    private static func linkedRecords(in value: RecordValue, into linked: inout [ManagedObject]) {
        switch value {
        case .object(let record):
            if record.objectSchema.primaryKey != nil {
                linked.append(record)
            } else {
                for index in record.objectSchema.properties.indices { linkedRecords(in: record[propertyAt: index], into: &linked) }
            }
        case .list(let elements):
            for element in elements { linkedRecords(in: element, into: &linked) }
        case .dictionary(let entries):
            for entry in entries.values { linkedRecords(in: entry, into: &linked) }
        default:
            return
        }
    }

    /// Throws `StoreError.missingLinkTarget` unless the target of `reference` is stored, as this
    /// transaction sees it.
    private func check(_ reference: Reference, isolation: isolated (any Actor)? = #isolation) async throws {
        guard case .scalar(let keyType) = reference.table.primaryKey.storage else { return }
        var parameters = SQLParameters()
        let placeholder = try parameters.add(reference.key, type: keyType)
        let rows = try await run("SELECT 1 FROM \(reference.table.table) WHERE \(reference.table.primaryKey.quotedName) = \(placeholder)", parameters)
        guard rows.isEmpty else { return }
        throw StoreError(.missingLinkTarget(typeName: reference.table.typeName, key: PrimaryKeys.messageText(reference.key), linkedFrom: reference.linkedFrom))
    }

    /// Runs the write `statement` (its `parameterCount` parameters in `bindings`) and announces
    /// that it changed the object of `typeName` under the primary key `key` (every object of it
    /// when `key` is `nil`). With `perRow`, `statement` returns a row per changed row (`RETURNING 1`), its rows
    /// are returned, and nothing is announced when it changed none.
    ///
    /// The first ``inlineNoticeLimit`` statements of a transaction run `pg_notify` in the same
    /// statement (`WITH "mirrorstore_changed" AS (statement) SELECT pg_notify(…)`), so the notice costs no
    /// round trip of its own; later ones note their change in ``notice``, sent before `COMMIT`.
    /// Either way PostgreSQL delivers a notice only when the transaction commits.
    private func write(
        _ statement: String, _ bindings: PostgresBindings, parameterCount: Int, typeName: String, key: RecordValue?, perRow: Bool,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> [PostgresRow] {
        guard inlineNotices < Self.inlineNoticeLimit else {
            let rows = try await run(statement, bindings)
            if (!perRow || !rows.isEmpty) && !notice.coversEvery(typeName) { notice.note(typeName, key: key.map(PrimaryKeys.text)) }
            return rows
        }
        var bindings = bindings
        bindings.append(channel)
        bindings.append(ChangeNotice.payload(of: typeName, key: key.map(PrimaryKeys.text)))
        let notify = "SELECT pg_notify($\(parameterCount + 1), $\(parameterCount + 2))"
        let rows = try await run(
            "WITH \"mirrorstore_changed\" AS (\(statement)) \(notify)\(perRow ? " FROM \"mirrorstore_changed\"" : "")", bindings)
        inlineNotices += 1
        return rows
    }

    /// Notes that the block changed the object of `typeName` under `key`, for the notice sent
    /// before `COMMIT`.
    func noteChange(_ typeName: String, key: RecordValue) {
        notice.note(typeName, key: PrimaryKeys.text(key))
    }

    func run(_ sql: String, _ parameters: SQLParameters, isolation: isolated (any Actor)? = #isolation) async throws -> [PostgresRow] {
        try await run(sql, parameters.bindings)
    }

    /// Runs one statement and returns its rows (a statement without `RETURNING` has none); a
    /// failure fails the transaction (see ``failure``).
    private func run(
        _ sql: String, _ bindings: PostgresBindings, isolation: isolated (any Actor)? = #isolation
    ) async throws -> [PostgresRow] {
        do {
            beginIfNeeded()
            return try await Failures.translating(mapping) {
                let rows = try await connection.rows(of: PostgresQuery(unsafeSQL: sql, binds: bindings))
                try checkBegun()
                return rows
            }
        } catch {
            if failure == nil { failure = error }
            throw error
        }
    }
}
