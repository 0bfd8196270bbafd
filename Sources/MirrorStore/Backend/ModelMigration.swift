/// The migration steps every store can take, handed to a migration block when a store opens
/// with a raised schema version: ``Migration`` in the file store, `PostgresMigration` in the
/// PostgreSQL backend. Code that migrates either store is written against it.
///
/// ```swift
/// func migrate(_ migration: any ModelMigration, oldSchemaVersion: Int) throws {
///     if oldSchemaVersion < 2 {
///         try migration.renameType(from: "Contact", to: "Friend")
///         try migration.enumerateObjects(ofType: "Friend") { old, new in
///             let first: String = try old.value(forProperty: "firstName")
///             let last: String = try old.value(forProperty: "lastName")
///             try new.setValue("\(first) \(last)", forProperty: "fullName")
///         }
///     }
/// }
/// ```
///
/// Added properties take the value the model's `init()` gives them and removed ones are dropped
/// by every store without a step. Each store throws its own typed error for a step it cannot
/// take (`MigrationError` in the file store), and a block that throws leaves the store unchanged.
public protocol ModelMigration: AnyObject {
    /// The schema version the store was last written with.
    var oldSchemaVersion: Int { get }
    /// The schema version the store is opening with.
    var newSchemaVersion: Int { get }
    /// The schema a type was stored with, or `nil` when the store has no such type.
    func oldSchema(ofType typeName: String) -> ObjectSchema?
    /// The schema the models give a type, or `nil` when no model has that name.
    func newSchema(ofType typeName: String) -> ObjectSchema?
    /// Gives the objects of the stored type `oldName` to the model type `newName`.
    func renameType(from oldName: String, to newName: String) throws
    /// Keeps the values of `oldName` of `typeName` under `newName`.
    func renameProperty(onType typeName: String, from oldName: String, to newName: String) throws
    /// Registers `body` to run for every stored object of `typeName`, with `old`, the object as
    /// it was stored, and `new`, the object in the model's schema, whose changes are kept; call
    /// ``delete(_:)`` with `new` to drop the object.
    func enumerateObjects(
        ofType typeName: String, _ body: @escaping (_ old: ManagedObject, _ new: ManagedObject) throws -> Void
    ) throws
    /// Deletes every stored object of `typeName` before the type changes, without the delete
    /// rules: links to them read `nil`.
    func deleteAllObjects(ofType typeName: String) throws
    /// A new object of `typeName` with its model's `init()` values, stored with the migrated
    /// objects once the block's enumerations have run.
    func create(ofType typeName: String) throws -> ManagedObject
    /// Deletes `object`: the `new` object being enumerated, or one ``create(ofType:)`` made.
    /// Every store deletes the enumerated objects deleted this way once all enumerations have
    /// run, as one delete under the models' ``DeleteRule``s (`.cascade` follows the links as the
    /// blocks left them, `.deny` from an object that stays refuses the migration with
    /// ``StoreError`` `.deleteDenied`, links to them read `nil`), before the created objects.
    func delete(_ object: ManagedObject) throws
}
