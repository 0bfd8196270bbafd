import MirrorStoreEngine

/// One migration of a store file, from the schemas and version stored in it to the models' and
/// the configured version: the block runs first and describes the changes, then one streaming
/// pass rewrites every object into a new file that replaces the old only once it is complete,
/// synced and checked (`StorageEngine.rewrite`).
final class MigrationRun {
    let engine: StorageEngine
    let registry: ModelRegistry
    let stored: StoredSchemas
    let fromVersion: Int
    let toVersion: Int
    let block: Store.Configuration.MigrationBlock?
    /// The highest integer key written per type.
    private var highestKeys: [String: Int64] = [:]
    /// The enum raw values of the objects written, recorded anew: the old record may hold values
    /// the migration replaced.
    private let enumValues: StoredEnumValues
    private var writtenEnumValues = Set<StoredEnumValues.Value>()

    init(engine: StorageEngine, registry: ModelRegistry, stored: StoredSchemas, fromVersion: Int, toVersion: Int,
         block: Store.Configuration.MigrationBlock?) {
        self.engine = engine
        self.registry = registry
        self.stored = stored
        self.fromVersion = fromVersion
        self.toVersion = toVersion
        self.block = block
        enumValues = StoredEnumValues(registry: registry)
    }

    func run() throws {
        let migration = Migration(
            oldSchemas: stored.all, newSchemas: registry.schemas, defaults: try defaultRecords(),
            oldSchemaVersion: fromVersion, newSchemaVersion: toVersion)
        // Blocks that delete or create capture the migration they are registered with.
        defer { migration.releaseBlocks() }
        try block?(migration, fromVersion)
        let renamedTypes = migration.renamedTypes
        let evolutions = try evolutions(for: migration, renamedTypes: renamedTypes)
        var references = LinkReferences()
        var createdReferences = LinkReferences()
        var deletes = MigrationDeletes()
        try Store.translatingUniqueViolations {
            try engine.rewrite(indexes: IndexKeys.definitions(for: registry)) { source, target in
                try write(
                    from: source, into: &target, migration: migration, renamedTypes: renamedTypes,
                    evolutions: evolutions, references: &references, createdReferences: &createdReferences, deletes: &deletes)
            } validate: { migrated in
                // A link from a migrated object to one the migration deleted reads `nil`, as
                // after any delete; the objects it created come after the deletes, and their
                // links must find their objects.
                try references.check(in: migrated, schemas: registry, skipping: deletes.contains(type:key:))
                try createdReferences.check(in: migrated, schemas: registry, skipping: { _, _ in false })
            }
        }
    }

    /// The record of each model's `init()` value: what a property the file lacks starts from.
    private func defaultRecords() throws -> [String: ManagedObject] {
        var records: [String: ManagedObject] = [:]
        for typeName in registry.typeNames {
            guard let plan = registry.plan(named: typeName) else { continue }
            records[typeName] = try plan.modelType.init().managedObject()
        }
        return records
    }

    /// Each model type's evolution from the stored type it takes its objects from, keyed by the
    /// stored name (embedded records carry it).
    private func evolutions(
        for migration: Migration, renamedTypes: [String: String]
    ) throws(MigrationError) -> [String: TypeEvolution] {
        var evolutions: [String: TypeEvolution] = [:]
        for typeName in registry.typeNames {
            guard let source = migration.storedName(of: typeName), !migration.emptiedTypes.contains(source),
                  let oldSchema = stored.schema(named: source), let newSchema = registry.schema(named: typeName) else { continue }
            evolutions[source] = try TypeEvolution(
                typeName: typeName, oldSchema: oldSchema, newSchema: newSchema,
                defaults: migration.defaults[typeName]?.values ?? [],
                renames: migration.propertySources[typeName] ?? [:], renamedTypes: renamedTypes,
                converted: migration.enumerations[typeName] != nil, isModel: { registry.schema(named: $0) != nil })
        }
        return evolutions
    }

    private func write(
        from source: EngineSnapshot, into target: inout LogRewriter, migration: Migration,
        renamedTypes: [String: String], evolutions: [String: TypeEvolution], references: inout LinkReferences,
        createdReferences: inout LinkReferences, deletes: inout MigrationDeletes
    ) throws {
        for key in source.metadataKeys.sorted() where key != Store.schemaVersionKey && !key.hasPrefix(StoredEnumValues.prefix) {
            if let value = source.metadata(key: key) { try target.setMetadata(key: key, value: value) }
        }
        try target.setMetadata(key: Store.schemaVersionKey, value: Store.encodeVersion(toVersion))
        for typeName in registry.typeNames {
            if let schema = registry.schema(named: typeName) {
                try target.setSchema(type: typeName, schema: SchemaCoding.encode(schema))
            }
        }
        // A link to an object the file did not hold was dangling before the migration: it stays so.
        let existedBefore = { (typeName: String, key: StorageKey) throws in
            try source.contains(type: migration.storedName(of: typeName) ?? typeName, key: key)
        }
        // Nor is one to an object deleteAllObjects(ofType:) dropped checked: it reads `nil`.
        let keptBefore = { (typeName: String, key: StorageKey) throws in
            let stored = migration.storedName(of: typeName) ?? typeName
            return try !migration.emptiedTypes.contains(stored) && source.contains(type: stored, key: key)
        }
        let decoder = RecordDecoder(
            schema: { [stored] in stored.schema(named: $0) },
            resolve: { [self] typeName, key in linkStub(typeName: typeName, key: key, renamedTypes: renamedTypes) })
        for storedName in source.typeNames.sorted() where !migration.emptiedTypes.contains(storedName) {
            guard let evolution = evolutions[storedName] else {
                // A type no model takes: kept as it is, for the app versions that still have it.
                guard registry.schema(named: storedName) == nil, renamedTypes[storedName] == nil else { continue }
                if let schema = source.schema(type: storedName) { try target.setSchema(type: storedName, schema: schema) }
                try source.forEachEntry(type: storedName) { key, value in
                    try target.put(type: storedName, key: key, value: value)
                }
                continue
            }
            let count = source.count(type: storedName)
            switch evolution.newSchema.primaryKey.flatMap({ evolution.newSchema.property(named: $0)?.kind.unwrapped }) {
            case .string?: try target.reserveCapacity(type: evolution.typeName, integers: 0, strings: count, byteStrings: 0)
            case .uuid?: try target.reserveCapacity(type: evolution.typeName, integers: 0, strings: 0, byteStrings: count)
            default: try target.reserveCapacity(type: evolution.typeName, integers: count, strings: 0, byteStrings: 0)
            }
            var nextKey: Int64 = 1
            // The old keys were unique within the type, so an object keeping its key can only
            // meet one whose key changed, and only those need looking up.
            var changedKeys = Set<StorageKey>()
            let blocks = migration.enumerations[evolution.typeName] ?? []
            try source.forEachEntry(type: storedName) { key, bytes in
                let old = ManagedObject(objectSchema: evolution.oldSchema, values: [])
                do {
                    try decoder.decode(bytes, into: old)
                } catch let failure as RecordCodingFailure {
                    throw StoreError(failure, typeName: storedName, key: PrimaryKey.text(key, of: evolution.oldSchema))
                }
                let new = try evolution.record(from: old) { embedded, depth in
                    try evolve(embedded, depth: depth, evolutions: evolutions)
                }
                migration.current = new
                migration.currentDeleted = false
                defer { migration.current = nil }
                for block in blocks { try block(old, new) }
                if migration.currentDeleted {
                    try deletes.drop(new, key: key, rules: registry.deleteRules)
                    return
                }
                let newKey: StorageKey
                if let primaryKey = try PrimaryKey.storageKey(of: new) {
                    newKey = primaryKey
                } else if evolution.oldSchema.primaryKey == nil {
                    newKey = key
                } else {
                    newKey = .integer(nextKey)
                    nextKey += 1
                }
                if newKey != key {
                    guard try !target.contains(type: evolution.typeName, key: newKey) else {
                        throw MigrationError(.duplicatePrimaryKey(typeName: evolution.typeName, key: PrimaryKey.text(newKey, of: evolution.newSchema)))
                    }
                    changedKeys.insert(newKey)
                } else if changedKeys.contains(newKey) {
                    throw MigrationError(.duplicatePrimaryKey(typeName: evolution.typeName, key: PrimaryKey.text(newKey, of: evolution.newSchema)))
                }
                try put(new, key: newKey, into: &target, references: &references, existedBefore: keptBefore)
            }
        }
        // Every migrated object is written: the deletes take what the delete rules take with
        // them, before the created objects join.
        try deletes.apply(to: &target, rules: registry.deleteRules, schemas: registry)
        for object in migration.created {
            let typeName = object.objectSchema.typeName
            let key = try PrimaryKey.storageKey(of: object) ?? .integer((highestKeys[typeName] ?? 0) + 1)
            guard try !target.contains(type: typeName, key: key) else {
                throw MigrationError(.duplicatePrimaryKey(typeName: typeName, key: PrimaryKey.text(key, of: object.objectSchema)))
            }
            try put(object, key: key, into: &target, references: &createdReferences, existedBefore: existedBefore)
        }
        // Checked here, before the new file replaces the old: a raw value the models' enums no
        // longer have would keep the migrated store from opening.
        try enumValues.check(writtenEnumValues)
        for key in (writtenEnumValues.map(enumValues.key(of:)) + enumValues.completeKeys).sorted() {
            try target.setMetadata(key: key, value: [])
        }
    }

    /// Writes `record` under `key`; the caller has made sure no other object has the key.
    private func put(
        _ record: ManagedObject, key: StorageKey, into target: inout LogRewriter, references: inout LinkReferences,
        existedBefore: (String, StorageKey) throws -> Bool
    ) throws {
        let typeName = record.objectSchema.typeName
        // A migration writes a new file of the current format, which reads tagless records.
        var encoder = RecordEncoder(writesTagless: true)
        try target.put(type: typeName, key: key, value: try encoder.encode(record))
        enumValues.values(in: record, into: &writtenEnumValues)
        try references.collect(from: record, existedBefore: existedBefore)
        // Objects without a primary key get the next integer key, as a transaction gives them.
        if case .integer(let number) = key, number > highestKeys[typeName] ?? 0 {
            highestKeys[typeName] = number
        }
    }

    /// An embedded record of a stored type, in its model's schema.
    private func evolve(_ record: ManagedObject, depth: Int, evolutions: [String: TypeEvolution]) throws -> ManagedObject {
        guard let evolution = evolutions[record.objectSchema.typeName] else { return record }
        return try evolution.record(from: record, depth: depth) { embedded, depth in
            try evolve(embedded, depth: depth, evolutions: evolutions)
        }
    }

    /// A linked record as the migration sees it: its primary key only, under the type's new name.
    private func linkStub(typeName: String, key: StorageKey, renamedTypes: [String: String]) -> ManagedObject? {
        guard let schema = stored.schema(named: typeName), let primaryKey = schema.primaryKey,
              let property = schema.property(named: primaryKey) else { return nil }
        let stubSchema = ObjectSchema(typeName: renamedTypes[typeName] ?? typeName, properties: [property])
        return ManagedObject(objectSchema: stubSchema, values: [PrimaryKey.recordValue(of: key)])
    }
}

/// The objects migrated records link to, checked to exist once the new state is complete.
///
/// Only links to objects that existed before the migration are checked: a link whose object was
/// already deleted reads as `nil` in the store, and the migration keeps it as the store does;
/// so does a link to an object the migration deleted. A migration that leaves a link to an
/// object it neither kept nor deleted (one whose primary key it changed) is refused.
struct LinkReferences {
    /// Per linked type, each key linked to and the type of one object linking to it.
    private var keys: [String: [StorageKey: String]] = [:]

    /// `existedBefore`: whether the stored file held the object of a (new) type name and key.
    mutating func collect(from record: ManagedObject, existedBefore: (String, StorageKey) throws -> Bool) throws {
        let source = record.objectSchema.typeName
        try PrimaryKey.forEachLink(in: record) { typeName, key in
            if try existedBefore(typeName, key) { keys[typeName, default: [:]][key] = source }
        }
    }

    /// Throws for the first key linked to that `snapshot` does not hold, passing over those
    /// `skipping` says the migration deleted; `schemas` spell the keys.
    func check(in snapshot: EngineSnapshot, schemas: ModelRegistry, skipping: (String, StorageKey) -> Bool) throws {
        for (typeName, linked) in keys.sorted(by: { $0.key < $1.key }) {
            for (key, source) in linked where try !skipping(typeName, key) && !snapshot.contains(type: typeName, key: key) {
                throw MigrationError(.missingLinkTarget(
                    typeName: typeName, key: PrimaryKey.text(key, of: schemas.schema(named: typeName)), linkedFrom: source))
            }
        }
    }
}
