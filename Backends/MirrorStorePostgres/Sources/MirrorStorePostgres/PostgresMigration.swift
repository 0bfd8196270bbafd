import MirrorStore
import PostgresNIO

/// What a migration block can do when a ``PostgresStore`` opens with a raised `schemaVersion`,
/// in the shape of MirrorStore's `configuration.migration` block:
///
/// ```swift
/// let store = try await PostgresStore.open(settings, models: [Person.self], schemaVersion: 2) { migration, oldSchemaVersion in
///     if oldSchemaVersion < 2 {
///         try migration.renameProperty(onType: "Person", from: "name", to: "fullName")
///     }
/// }
/// ```
///
/// The block can rename properties and delete every object of a type; without any code, a
/// property added to a model becomes a column filled with the value the
/// model's `init()` gives it, and a removed one is dropped. The whole migration — the block's
/// renames, every `ALTER TABLE`, the metadata — is one SQL transaction (PostgreSQL's DDL is
/// transactional): a thrown error, from the block or the server, leaves the database as it was.
///
/// Types are named as they are stored (`persistedTypeName`).
public final class PostgresMigration {
    /// The schema version the tables were written with (the lowest, if they differ).
    public let oldSchemaVersion: Int
    /// The schema version the store is being opened with.
    public let newSchemaVersion: Int

    let mapping: DatabaseMapping
    /// Per type name: new property name to the stored column it takes its values from.
    private(set) var renames: [String: [String: String]] = [:]
    /// Type names whose stored objects are deleted before their tables change.
    private(set) var emptiedTypes: Set<String> = []

    init(oldSchemaVersion: Int, newSchemaVersion: Int, mapping: DatabaseMapping) {
        self.oldSchemaVersion = oldSchemaVersion
        self.newSchemaVersion = newSchemaVersion
        self.mapping = mapping
    }

    /// Gives the model's property `newName` the stored values of `oldName`
    /// (`ALTER TABLE … RENAME COLUMN`).
    ///
    /// - Throws: ``PostgresStoreError`` (`.migrationFailed`) when `typeName` is not one of the
    ///   store's types, the model has no property `newName`, or it is renamed twice.
    public func renameProperty(onType typeName: String, from oldName: String, to newName: String) throws {
        guard let table = mapping.tables[typeName] else {
            throw PostgresStoreError(.migrationFailed(typeName: typeName, reason: "it is not one of the store's types"))
        }
        guard table.columns.contains(where: { $0.property == newName }) else {
            throw PostgresStoreError(.migrationFailed(typeName: typeName, reason: "the model has no property \(newName) to rename \(oldName) to"))
        }
        guard oldName != newName, renames[typeName]?[newName] == nil, renames[typeName]?.values.contains(oldName) != true else {
            throw PostgresStoreError(.migrationFailed(typeName: typeName, reason: "\(oldName) → \(newName) repeats or undoes a rename"))
        }
        renames[typeName, default: [:]][newName] = oldName
    }

    /// Deletes every stored object of `typeName` (`DELETE FROM`), before its table changes.
    ///
    /// ```swift
    /// try migration.deleteAllObjects(ofType: "Session")
    /// ```
    ///
    /// - Throws: ``PostgresStoreError`` (`.migrationFailed`) when `typeName` is not one of the
    ///   store's types.
    public func deleteAllObjects(ofType typeName: String) throws {
        guard mapping.tables[typeName] != nil else {
            throw PostgresStoreError(.migrationFailed(typeName: typeName, reason: "it is not one of the store's types"))
        }
        emptiedTypes.insert(typeName)
    }
}

/// The block a ``PostgresStore`` runs when it opens tables written with a lower schema version:
/// the ``PostgresMigration`` and the old version.
public typealias PostgresMigrationBlock = (PostgresMigration, Int) throws -> Void
