/// What a migration block can do to a store whose schema version was raised.
///
/// Given to ``Store/Configuration/migration`` with the version the file was written with:
///
/// ```swift
/// var configuration = Store.Configuration()
/// configuration.schemaVersion = 3
/// configuration.migration = { migration, oldSchemaVersion in
///     if oldSchemaVersion < 2 {
///         try migration.renameProperty(onType: "Person", from: "name", to: "fullName")
///     }
///     if oldSchemaVersion < 3 {
///         try migration.enumerateObjects(ofType: "Person") { old, new in
///             let first: String = try old.value(forProperty: "firstName")
///             let last: String = try old.value(forProperty: "lastName")
///             try new.setValue("\(first) \(last)", forProperty: "fullName")
///         }
///     }
/// }
/// ```
///
/// The block describes the migration; MirrorStore then carries it out in one pass over the
/// stored objects, streaming them into a new file that replaces the old one only once it is
/// complete and checked. Whatever the block registers with ``enumerateObjects(ofType:_:)`` runs
/// during that pass, for each object, in the order registered; the objects it deletes go once
/// the pass is done, under the models' ``DeleteRule``s (see ``delete(_:)``). A block that
/// throws, or a migrated state that breaks a rule (two objects with one primary key, a link to
/// a missing object, a unique index, a `.deny` delete rule), leaves the file unchanged.
///
/// Types are named as they are stored (``Persistable/persistedTypeName``); after
/// ``renameType(from:to:)``, by their new name.
public final class Migration {
    /// The schema version the file was written with.
    public let oldSchemaVersion: Int
    /// The schema version the store is being opened with.
    public let newSchemaVersion: Int

    let oldSchemas: [String: ObjectSchema]
    let newSchemas: [String: ObjectSchema]
    /// Each registered type's record from its model's `init()`, the values new properties take.
    let defaults: [String: ManagedObject]
    /// New type name to the stored name it takes its objects from.
    private var typeSources: [String: String] = [:]
    /// Per new type name: new property name to the stored property it takes its value from.
    private(set) var propertySources: [String: [String: String]] = [:]
    private(set) var enumerations: [String: [(ManagedObject, ManagedObject) throws -> Void]] = [:]
    /// Stored type names whose objects are dropped.
    private(set) var emptiedTypes: Set<String> = []
    private(set) var created: [ManagedObject] = []
    /// The new record being enumerated, and whether the block deleted it.
    var current: ManagedObject?
    var currentDeleted = false

    init(oldSchemas: [String: ObjectSchema], newSchemas: [String: ObjectSchema], defaults: [String: ManagedObject],
         oldSchemaVersion: Int, newSchemaVersion: Int) {
        self.oldSchemas = oldSchemas
        self.newSchemas = newSchemas
        self.defaults = defaults
        self.oldSchemaVersion = oldSchemaVersion
        self.newSchemaVersion = newSchemaVersion
    }

    /// The schema a type was stored with, or `nil` when the file has no such type.
    public func oldSchema(ofType typeName: String) -> ObjectSchema? {
        oldSchemas[storedName(of: typeName) ?? typeName]
    }

    /// The schema the models give a type, or `nil` when no model has that name.
    public func newSchema(ofType typeName: String) -> ObjectSchema? {
        newSchemas[typeName]
    }

    /// Stored type names whose objects go to a model of another name, to that name.
    var renamedTypes: [String: String] {
        Dictionary(typeSources.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
    }

    /// The stored type whose objects become `typeName`'s, if any.
    func storedName(of typeName: String) -> String? {
        if let source = typeSources[typeName] { return source }
        let renamedAway = typeSources.values.contains(typeName)
        return oldSchemas[typeName] != nil && !renamedAway ? typeName : nil
    }

    /// Gives the objects of the stored type `oldName` to the model type `newName`.
    ///
    /// - Throws: ``MigrationError`` when the store has no type `oldName`, no model is called
    ///   `newName`, or the store already has a type `newName`.
    public func renameType(from oldName: String, to newName: String) throws {
        guard let source = storedName(of: oldName) else { throw MigrationError(.unknownType(typeName: oldName)) }
        guard newSchemas[newName] != nil else { throw MigrationError(.unknownType(typeName: newName)) }
        guard storedName(of: newName) == nil else { throw MigrationError(.typeNameTaken(typeName: newName)) }
        typeSources[oldName] = nil
        typeSources[newName] = source
        propertySources[newName] = propertySources.removeValue(forKey: oldName)
        enumerations[newName] = enumerations.removeValue(forKey: oldName)
    }

    /// Moves the stored values of `oldName` to the model's property `newName`, keeping them as
    /// they are (the automatic rules convert kinds as for any property).
    ///
    /// - Throws: ``MigrationError`` when the stored type has no property `oldName` or the model
    ///   has no property `newName`.
    public func renameProperty(onType typeName: String, from oldName: String, to newName: String) throws {
        guard let stored = storedName(of: typeName), let oldSchema = oldSchemas[stored] else {
            throw MigrationError(.unknownType(typeName: typeName))
        }
        var sources = propertySources[typeName] ?? [:]
        let source: String
        if let renamed = sources.removeValue(forKey: oldName) {
            source = renamed
        } else if oldSchema.property(named: oldName) != nil, !sources.values.contains(oldName) {
            source = oldName
        } else {
            throw MigrationError(.missingProperty(typeName: typeName, property: oldName))
        }
        guard newSchemas[typeName]?.property(named: newName) != nil else {
            throw MigrationError(.unknownProperty(typeName: typeName, property: newName))
        }
        sources[newName] = source
        propertySources[typeName] = sources
    }

    /// Registers `body` to run for every stored object of `typeName` during the migration pass,
    /// with `old`, the record as stored (its `objectSchema` is the stored one; links read as
    /// records holding only their primary key), and `new`, the record in the model's schema,
    /// already filled as the automatic rules and earlier blocks left it. Change `new` with
    /// `setValue(_:forProperty:)`; delete it with ``delete(_:)``.
    ///
    /// - Throws: ``MigrationError`` when no model is called `typeName`.
    public func enumerateObjects(
        ofType typeName: String, _ body: @escaping (_ old: ManagedObject, _ new: ManagedObject) throws -> Void
    ) throws {
        guard newSchemas[typeName] != nil else { throw MigrationError(.unknownType(typeName: typeName)) }
        enumerations[typeName, default: []].append(body)
    }

    /// Drops every stored object of `typeName`. A type no model has any more disappears from the
    /// file; a model's type stays, empty. The delete rules are not applied: links to the dropped
    /// objects read `nil`, as PostgreSQL's `DELETE FROM` leaves them.
    ///
    /// - Throws: ``MigrationError`` when neither the store nor the models have the type.
    public func deleteAllObjects(ofType typeName: String) throws {
        if let stored = storedName(of: typeName) {
            emptiedTypes.insert(stored)
        } else if newSchemas[typeName] == nil {
            throw MigrationError(.unknownType(typeName: typeName))
        }
    }

    /// A new object of `typeName`, filled with the values its model's `init()` gives; set its
    /// properties, and it is stored with the migrated objects.
    ///
    /// - Throws: ``MigrationError`` when no model is called `typeName`.
    public func create(ofType typeName: String) throws -> ManagedObject {
        guard let schema = newSchemas[typeName], let defaults = defaults[typeName] else {
            throw MigrationError(.unknownType(typeName: typeName))
        }
        let object = ManagedObject(objectSchema: schema, values: defaults.values)
        created.append(object)
        return object
    }

    /// Lets go of the registered blocks, which may hold this migration.
    func releaseBlocks() {
        enumerations = [:]
        created = []
        current = nil
    }

    /// Deletes `object`: the `new` record being enumerated, or one ``create(ofType:)`` made.
    ///
    /// Enumerated objects deleted this way go as one delete of a write transaction once every
    /// enumeration has run, under the models' ``DeleteRule``s: a `.cascade` link (as the blocks
    /// left it) deletes its targets, at any depth, from the migrated objects; a link to a deleted
    /// object reads `nil`; a `.deny` link from an object that stays refuses the migration with
    /// ``StoreError`` (`.deleteDenied`), the file left as it was. Objects ``create(ofType:)``
    /// made are stored after these deletes.
    ///
    /// ```swift
    /// try migration.enumerateObjects(ofType: "Team") { old, new in
    ///     if try old.value(forProperty: "disbanded", as: Bool.self) { try migration.delete(new) }  // its members too
    /// }
    /// ```
    ///
    /// - Throws: ``MigrationError`` for any other record.
    public func delete(_ object: ManagedObject) throws {
        if object === current {
            currentDeleted = true
        } else if let index = created.firstIndex(where: { $0 === object }) {
            created.remove(at: index)
        } else {
            throw MigrationError(.notMigrating(typeName: object.objectSchema.typeName))
        }
    }
}
