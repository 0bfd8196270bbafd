/// The migration steps every store can take, handed to a migration block when a store opens
/// with a raised schema version: ``Migration`` in the file store, `PostgresMigration` in the
/// PostgreSQL backend. Code that migrates either store is written against it.
///
/// ```swift
/// func migrate(_ migration: any ModelMigration, oldSchemaVersion: Int) throws {
///     if oldSchemaVersion < 2 {
///         try migration.renameProperty(onType: "Person", from: "name", to: "fullName")
///     }
/// }
/// ```
///
/// Added properties take the value the model's `init()` gives them and removed ones are dropped
/// by every store without a step.
public protocol ModelMigration: AnyObject {
    /// The schema version the store was last written with.
    var oldSchemaVersion: Int { get }
    /// The schema version the store is opening with.
    var newSchemaVersion: Int { get }
    /// Keeps the values of `oldName` of `typeName` under `newName`.
    func renameProperty(onType typeName: String, from oldName: String, to newName: String) throws
    /// Deletes every stored object of `typeName` before the type changes.
    func deleteAllObjects(ofType typeName: String) throws
}
