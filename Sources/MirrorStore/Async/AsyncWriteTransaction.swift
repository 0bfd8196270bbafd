/// A ``WriteTransaction`` used from an `async` block: the transaction of ``Store``'s
/// ``ModelStore`` write, whose block may `await` between its writes.
///
/// ```swift
/// try await store.write { (transaction: AsyncWriteTransaction) in
///     try await transaction.add(hero)
/// }
/// ```
///
/// Each call runs at once on the wrapped transaction, which the block has to itself: the
/// store's writer holds the write lock until the block ends.
public final class AsyncWriteTransaction: ModelWriteTransaction {
    /// The transaction the calls go to, for what only the file store offers.
    public let transaction: WriteTransaction

    init(_ transaction: WriteTransaction) {
        self.transaction = transaction
    }

    /// Inserts `model` or replaces the object with its primary key: ``WriteTransaction/add(_:linkedObjects:)``.
    public nonisolated(nonsending) func add<Model: Persistable>(_ model: Model) async throws {
        try transaction.add(model)
    }

    /// The object under `primaryKey` as this transaction sees it: ``WriteTransaction/object(_:primaryKey:)``.
    public nonisolated(nonsending) func object<Model: Persistable>(_ type: Model.Type, primaryKey: some RecordPrimitive) async throws -> Model? {
        try transaction.object(type, primaryKey: primaryKey)
    }

    /// Changes and stores again the object under `primaryKey`: ``WriteTransaction/update(_:primaryKey:_:)``.
    @discardableResult
    public nonisolated(nonsending) func update<Model: Persistable>(
        _ type: Model.Type, primaryKey: some RecordPrimitive, _ changes: (inout Model) throws -> Void
    ) async throws -> Model? {
        try transaction.update(type, primaryKey: primaryKey, changes)
    }

    /// Sets one property of the stored object under `primaryKey`:
    /// ``WriteTransaction/update(_:primaryKey:set:to:)``.
    @discardableResult
    public nonisolated(nonsending) func update<Model: Persistable, Value>(
        _ type: Model.Type, primaryKey: some RecordPrimitive, set property: KeyPath<Model, Value>, to value: Value
    ) async throws -> Model? {
        try transaction.update(type, primaryKey: primaryKey, set: property, to: value)
    }

    /// Deletes the object under `primaryKey`: ``WriteTransaction/delete(_:primaryKey:)``.
    @discardableResult
    public nonisolated(nonsending) func delete<Model: Persistable>(_ type: Model.Type, primaryKey: some RecordPrimitive) async throws -> Bool {
        try transaction.delete(type, primaryKey: primaryKey)
    }

    /// Deletes every object of `type`: ``WriteTransaction/deleteAll(_:)``.
    public nonisolated(nonsending) func deleteAll<Model: Persistable>(_ type: Model.Type) async throws {
        try transaction.deleteAll(type)
    }
}
