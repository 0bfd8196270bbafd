import Foundation
import MirrorStore

/// The PostgreSQL write transaction as a ``MirrorStore/ModelWriteTransaction``: each call
/// forwards to the transaction's own, in the caller's isolation.
extension PostgresWriteTransaction: ModelWriteTransaction {
    /// Upserts `model` and the models it links to: ``add(_:linkedObjects:isolation:)``.
    public nonisolated(nonsending) func add<Model: Persistable>(_ model: Model) async throws {
        try await add(model, linkedObjects: .save, isolation: #isolation)
    }

    /// The object under `primaryKey` as this transaction sees it: ``object(_:primaryKey:isolation:)``.
    public nonisolated(nonsending) func object<Model: Persistable>(_ type: Model.Type, primaryKey: some RecordPrimitive) async throws -> Model? {
        try await object(type, primaryKey: primaryKey, isolation: #isolation)
    }

    /// Locks, changes and stores again the object under `primaryKey`: ``update(_:primaryKey:isolation:_:)``.
    @discardableResult
    public nonisolated(nonsending) func update<Model: Persistable>(
        _ type: Model.Type, primaryKey: some RecordPrimitive, _ changes: (inout Model) throws -> Void
    ) async throws -> Model? {
        try await update(type, primaryKey: primaryKey, isolation: #isolation, changes)
    }

    /// Locks the object under `primaryKey` and sets one property of its stored record:
    /// ``update(_:primaryKey:set:to:isolation:)``.
    @discardableResult
    public nonisolated(nonsending) func update<Model: Persistable, Value>(
        _ type: Model.Type, primaryKey: some RecordPrimitive, set property: KeyPath<Model, Value>, to value: Value
    ) async throws -> Model? {
        try await update(type, primaryKey: primaryKey, set: property, to: value, isolation: #isolation)
    }

    /// Deletes the object under `primaryKey`: ``delete(_:primaryKey:isolation:)``.
    @discardableResult
    public nonisolated(nonsending) func delete<Model: Persistable>(_ type: Model.Type, primaryKey: some RecordPrimitive) async throws -> Bool {
        try await delete(type, primaryKey: primaryKey, isolation: #isolation)
    }

    /// Deletes every object of `type`: ``deleteAll(_:isolation:)``.
    public nonisolated(nonsending) func deleteAll<Model: Persistable>(_ type: Model.Type) async throws {
        try await deleteAll(type, isolation: #isolation)
    }
}
