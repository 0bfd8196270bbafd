import Foundation

/// The writes of one ``ModelStore/write(isolation:_:)`` block, whatever store runs it.
///
/// ```swift
/// try await store.write { transaction in
///     try await transaction.add(hero)                       // insert or replace by primary key
///     try await transaction.update(Hero.self, primaryKey: 1455) { $0.realName = "Anthony Edward Stark" }
///     try await transaction.delete(Hero.self, primaryKey: 7)
/// }
/// ```
///
/// Reads through the transaction see its own writes. A transaction is used only inside its block.
public protocol ModelWriteTransaction: AnyObject {
    /// Inserts `model`, or replaces the stored object with its primary key, and saves the models
    /// it links to the same way.
    ///
    /// - Throws: ``StoreError`` (`.uniqueViolation` where the store checks at once,
    ///   `.unknownModel`), ``MappingError`` for a model that cannot be mapped.
    nonisolated(nonsending) func add<Model: Persistable>(_ model: Model) async throws

    /// The object of `type` under `primaryKey` as this transaction sees it, or `nil`.
    nonisolated(nonsending) func object<Model: Persistable>(_ type: Model.Type, primaryKey: some RecordPrimitive) async throws -> Model?

    /// Changes the stored object of `type` under `primaryKey` with `changes` and stores it again.
    ///
    /// - Returns: The updated model, or `nil` when no object has that key (nothing is written).
    @discardableResult
    nonisolated(nonsending) func update<Model: Persistable>(
        _ type: Model.Type, primaryKey: some RecordPrimitive, _ changes: (inout Model) throws -> Void
    ) async throws -> Model?

    /// Sets one property of the stored object of `type` under `primaryKey` by writing its stored
    /// record, so the property may be a `let` of an immutable struct.
    ///
    /// - Returns: The updated model, or `nil` when no object has that key (nothing is written).
    /// - Throws: ``StoreError`` (`.notAStoredProperty`) when the key path names no stored property.
    @discardableResult
    nonisolated(nonsending) func update<Model: Persistable, Value>(
        _ type: Model.Type, primaryKey: some RecordPrimitive, set property: KeyPath<Model, Value>, to value: Value
    ) async throws -> Model?

    /// Deletes the object of `type` under `primaryKey`.
    ///
    /// - Returns: Whether an object was deleted.
    @discardableResult
    nonisolated(nonsending) func delete<Model: Persistable>(_ type: Model.Type, primaryKey: some RecordPrimitive) async throws -> Bool

    /// Deletes every object of `type`.
    nonisolated(nonsending) func deleteAll<Model: Persistable>(_ type: Model.Type) async throws
}
