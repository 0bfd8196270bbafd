import MirrorStore
import PostgresNIO

/// What a migration block can do when a ``PostgresStore`` opens with a raised `schemaVersion`,
/// in the shape of MirrorStore's `configuration.migration` block:
///
/// ```swift
/// let store = try await PostgresStore.open(settings, models: [Friend.self], schemaVersion: 2) { migration, oldSchemaVersion in
///     if oldSchemaVersion < 2 {
///         try migration.renameType(from: "Contact", to: "Friend")                       // ALTER TABLE RENAME
///         try migration.renameProperty(onType: "Friend", from: "mail", to: "email")     // RENAME COLUMN
///         try migration.enumerateObjects(ofType: "Friend") { old, new in
///             let first: String = try old.value(forProperty: "firstName")
///             let last: String = try old.value(forProperty: "lastName")
///             try new.setValue("\(first) \(last)", forProperty: "fullName")          // UPDATE … WHERE key
///         }
///     }
/// }
/// ```
///
/// The block registers the steps; they are carried out once it returns, in this order: type
/// renames, ``deleteAllObjects(ofType:)``, the `ALTER TABLE`s bringing each table to its model
/// (renamed columns, added ones filled with the model's `init()` value, removed ones dropped),
/// the enumerations, the deletes they asked for (under the delete rules), then the objects
/// ``create(ofType:)`` made. The whole migration is one SQL
/// transaction (PostgreSQL's DDL is transactional): a thrown error, from the block, an
/// enumeration or the server, leaves the database as it was.
///
/// An enumeration's `old` object holds the row as it was stored before the migration, under
/// the old column names and with the columns the model dropped, from a copy of the table the
/// server keeps for the transaction; rows are read in batches through a cursor, so the
/// process holds a batch at a time, not the table. A column whose kind changed is refused
/// unless its type is enumerated: then it is recreated with the model's `init()` value, for the
/// enumeration to convert from `old`.
///
/// Types are named as they are stored (`persistedTypeName`); after ``renameType(from:to:)``,
/// by their new name.
public final class PostgresMigration {
    /// The schema version the tables were written with (the lowest, if they differ).
    public let oldSchemaVersion: Int
    /// The schema version the store is being opened with.
    public let newSchemaVersion: Int

    let mapping: DatabaseMapping
    /// The tables the database holds, by stored type name.
    let storedTables: [String: StoredTable]
    /// Each model type's record from its `init()`, the values new objects and columns take.
    let defaults: [String: ManagedObject]
    /// New type name to the stored type name it takes its table from.
    private(set) var typeRenames: [String: String] = [:]
    /// New embedded model type name to the stored one whose layout it takes.
    private(set) var embeddedTypeRenames: [String: String] = [:]
    /// Per type name: new property name to the stored column it takes its values from.
    private(set) var renames: [String: [String: String]] = [:]
    /// Type names whose stored objects are deleted before their tables change.
    private(set) var emptiedTypes: Set<String> = []
    /// Per type name, the blocks to run on each stored object, in the order registered.
    private(set) var enumerations: [String: [(ManagedObject, ManagedObject) throws -> Void]] = [:]
    /// The objects ``create(ofType:)`` made and ``delete(_:)`` did not take back.
    private(set) var created: [ManagedObject] = []
    /// The `new` record being enumerated, and whether a block deleted it.
    var current: ManagedObject?
    var currentDeleted = false

    init(
        oldSchemaVersion: Int, newSchemaVersion: Int, mapping: DatabaseMapping, storedTables: [String: StoredTable],
        defaults: [String: ManagedObject]
    ) {
        self.oldSchemaVersion = oldSchemaVersion
        self.newSchemaVersion = newSchemaVersion
        self.mapping = mapping
        self.storedTables = storedTables
        self.defaults = defaults
    }

    private func failed(_ typeName: String, _ reason: String) -> PostgresStoreError {
        PostgresStoreError(.migrationFailed(typeName: typeName, reason: reason))
    }

    /// The stored type whose table becomes `typeName`'s, if any.
    func storedName(of typeName: String) -> String? {
        if let source = typeRenames[typeName] { return source }
        let renamedAway = typeRenames.values.contains(typeName)
        return storedTables[typeName] != nil && !renamedAway ? typeName : nil
    }

    /// The schema a type's table was written from, or `nil` when the database has no such table.
    ///
    /// Kinds come from the schema the metadata table keeps; a column whose kind cannot be read
    /// back from it reads as its SQL type says (a `jsonb` column as its JSON text).
    public func oldSchema(ofType typeName: String) -> ObjectSchema? {
        storedName(of: typeName).flatMap { storedTables[$0]?.schema }
    }

    /// The schema the models give a type, or `nil` when no model has that name.
    public func newSchema(ofType typeName: String) -> ObjectSchema? {
        mapping.tables[typeName]?.schema
    }

    /// Gives the table of the stored type `oldName` to the model type `newName`
    /// (`ALTER TABLE … RENAME TO`, with its metadata, primary key and foreign keys renamed;
    /// links from other tables follow it).
    ///
    /// ```swift
    /// try migration.renameType(from: "Contact", to: "Friend")
    /// ```
    ///
    /// An embedded model (one without a primary key) has no table: its values live in its
    /// parents' `jsonb`, which does not spell type names, so renaming it rewrites no value. Its
    /// stored layout (``EmbeddedLayouts``) is found under `oldName` and recorded under `newName`,
    /// and its property renames and changes are made as for any embedded model
    /// (``EmbeddedEvolution``), named by `newName`.
    ///
    /// - Throws: ``PostgresStoreError`` (`.migrationFailed`) when the database has no table
    ///   `oldName` (for an embedded model: no stored layout `oldName`, nor a table whose
    ///   metadata predates recorded layouts and whose own properties hold `oldName`), no model
    ///   is called `newName`, or the database has a table (a stored embedded model) `newName`
    ///   already.
    public func renameType(from oldName: String, to newName: String) throws {
        if mapping.tables[newName] == nil, let model = mapping.models.type(named: newName), model.schema.primaryKey == nil {
            return try renameEmbeddedType(from: oldName, to: newName)
        }
        guard let source = storedName(of: oldName) else { throw failed(oldName, "the database has no such type to rename to \(newName)") }
        guard mapping.tables[newName] != nil else { throw failed(newName, "no model has that name, so \(oldName) cannot be renamed to it") }
        guard storedName(of: newName) == nil else { throw failed(newName, "the database has that type already, so \(oldName) cannot take its name") }
        typeRenames[oldName] = nil
        typeRenames[newName] = source
        renames[newName] = renames.removeValue(forKey: oldName)
        enumerations[newName] = enumerations.removeValue(forKey: oldName)
        if emptiedTypes.remove(oldName) != nil { emptiedTypes.insert(newName) }
    }

    /// ``renameType(from:to:)`` for an embedded model `newName`.
    ///
    /// The stored embedded models are those the metadata names: every model of a recorded layout,
    /// and for a table whose metadata predates embedded layouts (`NULL`), the models its schema
    /// description spells, those of its own properties. As in the file store, which refuses a
    /// rename from a type it does not hold, a rename from any other name is refused: for such a
    /// table, a model embedded deeper may be stored, but under a name nothing records, so the
    /// refusal says how to proceed (the table is taken to hold the models' layouts, so the
    /// rename can be left out; or an open with the models it was written with records them).
    private func renameEmbeddedType(from oldName: String, to newName: String) throws {
        guard let source = storedEmbeddedName(of: oldName) else {
            let unrecorded = storedTables.values.filter { !$0.knowsEmbeddedLayouts }.map(\.typeName).sorted()
            guard !unrecorded.isEmpty else {
                throw failed(oldName, "no table of the database holds an embedded model of that name to rename to \(newName)")
            }
            throw failed(oldName, """
                no table of the database holds an embedded model of that name to rename to \(newName), as far as its metadata says: \
                that of \(unrecorded.joined(separator: ", ")) predates recorded embedded layouts and names only the embedded models of \
                its own properties, so a model embedded deeper is not known by its stored name; leave the rename out (such a table \
                is taken to hold the models' layouts) or first open the database with the models it was written with, which records them
                """)
        }
        guard storedEmbeddedName(of: newName) == nil else {
            throw failed(newName, "the database holds an embedded model of that name already, so \(oldName) cannot take its name")
        }
        embeddedTypeRenames[oldName] = nil
        embeddedTypeRenames[newName] = source
        renames[newName] = renames.removeValue(forKey: oldName)
    }

    /// The stored embedded model whose values become the embedded `typeName`'s, if any.
    private func storedEmbeddedName(of typeName: String) -> String? {
        if let source = embeddedTypeRenames[typeName] { return source }
        let renamedAway = embeddedTypeRenames.values.contains(typeName)
        let stored = storedTables.values.contains { $0.embeddedSchemas[typeName] != nil || $0.describedEmbeddedTypes.contains(typeName) }
        return stored && !renamedAway ? typeName : nil
    }

    /// Stored type names, of tables and of embedded models, to the names the migration gives
    /// them: for the kinds of links and embedded models inside `jsonb`.
    var renamedTypes: [String: String] {
        Dictionary((typeRenames.merging(embeddedTypeRenames) { table, _ in table }).map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
    }

    /// Gives the model's property `newName` the stored values of `oldName`
    /// (`ALTER TABLE … RENAME COLUMN`). On an embedded model (one without a primary key), the
    /// `jsonb` values of every table that holds it are rewritten (``EmbeddedEvolution``), as
    /// for its other changes.
    ///
    /// - Throws: ``PostgresStoreError`` (`.migrationFailed`) when `typeName` is not one of the
    ///   store's types, the model has no property `newName`, or it is renamed twice; for an
    ///   embedded model, when opening finds no table whose stored layout of it differs (a table
    ///   whose metadata predates embedded layouts is taken to hold the models').
    public func renameProperty(onType typeName: String, from oldName: String, to newName: String) throws {
        // An embedded model's properties live in its parents' `jsonb`, renamed there.
        let embedded = mapping.models.type(named: typeName).map(\.schema).flatMap { $0.primaryKey == nil ? $0 : nil }
        guard let properties = mapping.tables[typeName]?.columns.map(\.property) ?? embedded?.properties.map(\.name) else {
            throw failed(typeName, "it is not one of the store's types")
        }
        guard properties.contains(newName) else {
            throw failed(typeName, "the model has no property \(newName) to rename \(oldName) to")
        }
        guard oldName != newName, renames[typeName]?[newName] == nil, renames[typeName]?.values.contains(oldName) != true else {
            throw failed(typeName, "\(oldName) → \(newName) repeats or undoes a rename")
        }
        renames[typeName, default: [:]][newName] = oldName
    }

    /// Registers `body` to run for every stored object of `typeName` once its table has the
    /// model's schema, in primary-key order, with `old`, the row as stored before the
    /// migration (links read as records holding only their primary key), and `new`, the
    /// record in the model's schema as the renames and added columns left it. The properties
    /// `body` changes on `new` are written back (`UPDATE … WHERE key`, bound parameters);
    /// ``delete(_:)`` deletes it once every enumeration has run, under the delete rules.
    ///
    /// An embedded model (one without a primary key) has no objects of its own, so `body`
    /// never runs for it; enumerating it, as in the file store, lets its properties change kind
    /// beyond the automatic rules: they take the model's `init()` value, for its parents'
    /// enumerations to convert from `old` (``EmbeddedEvolution``).
    ///
    /// - Throws: ``PostgresStoreError`` (`.migrationFailed`) when no model is called `typeName`.
    public func enumerateObjects(
        ofType typeName: String, _ body: @escaping (_ old: ManagedObject, _ new: ManagedObject) throws -> Void
    ) throws {
        let embedded = mapping.models.type(named: typeName).map { $0.schema.primaryKey == nil } ?? false
        guard mapping.tables[typeName] != nil || embedded else {
            throw failed(typeName, "it is not one of the store's types")
        }
        enumerations[typeName, default: []].append(body)
    }

    /// Deletes every stored object of `typeName` (`DELETE FROM`), before its table changes,
    /// without the delete rules (as the file store drops them): links to them become `NULL`.
    ///
    /// ```swift
    /// try migration.deleteAllObjects(ofType: "Session")
    /// ```
    ///
    /// - Throws: ``PostgresStoreError`` (`.migrationFailed`) when `typeName` is not one of the
    ///   store's types.
    public func deleteAllObjects(ofType typeName: String) throws {
        guard mapping.tables[typeName] != nil else {
            throw failed(typeName, "it is not one of the store's types")
        }
        emptiedTypes.insert(typeName)
    }

    /// A new object of `typeName`, filled with the values its model's `init()` gives; set its
    /// properties, and it is inserted once the enumerations have run.
    ///
    /// ```swift
    /// let admin = try migration.create(ofType: "Friend")
    /// try admin.setValue(0, forProperty: "id")
    /// ```
    ///
    /// - Throws: ``PostgresStoreError`` (`.migrationFailed`) when no model the store opens with
    ///   is called `typeName`.
    public func create(ofType typeName: String) throws -> ManagedObject {
        guard let schema = mapping.tables[typeName]?.schema, let defaults = defaults[typeName] else {
            throw failed(typeName, "no model the store opens with has that name")
        }
        let object = ManagedObject(objectSchema: schema)
        for index in schema.properties.indices { try object.setValue(defaults[propertyAt: index], forPropertyAt: index) }
        created.append(object)
        return object
    }

    /// Deletes `object`: the `new` record being enumerated, or one ``create(ofType:)`` made.
    ///
    /// As in the file store, enumerated objects deleted this way stay until every enumeration
    /// has run, then go as one delete under the models' `DeleteRule`s: `.cascade` links (as the
    /// blocks left them: the row is updated first) delete their targets, at any depth; a
    /// `.deny` link from a row that stays refuses the migration with `StoreError`
    /// (`.deleteDenied`), rolling it back; links to a deleted row become `NULL` (foreign keys)
    /// or are left out on read (arrays of links). Created objects are inserted after.
    ///
    /// - Throws: ``PostgresStoreError`` (`.migrationFailed`) for any other record.
    public func delete(_ object: ManagedObject) throws {
        if object === current {
            currentDeleted = true
        } else if let index = created.firstIndex(where: { $0 === object }) {
            created.remove(at: index)
        } else {
            throw failed(object.objectSchema.typeName, "the object given to delete(_:) is neither being enumerated nor created by the migration")
        }
    }

    /// Lets go of the registered blocks, which may hold this migration.
    func releaseBlocks() {
        enumerations = [:]
        created = []
        current = nil
    }
}

/// The block a ``PostgresStore`` runs when it opens tables written with a lower schema version:
/// the ``PostgresMigration`` and the old version.
public typealias PostgresMigrationBlock = (PostgresMigration, Int) throws -> Void
