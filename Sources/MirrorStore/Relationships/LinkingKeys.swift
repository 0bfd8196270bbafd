import MirrorStoreEngine

/// The keys of the stored objects whose link property holds a given key: what an inverse
/// relationship lists.
enum LinkingKeys {
    /// The keys of the `sourceType` objects whose `property` links to `target`, in primary-key
    /// order, as the snapshot and the pending writes (if any) leave them.
    ///
    /// The snapshot's answer comes from the index the store keeps on every link to a model with
    /// a primary key, named `Type.property`, whose entries map the linked key to the linking
    /// object's key. Pending writes are not in it, so the objects they touch are looked at one by
    /// one, through the same key function the index uses.
    static func keys(
        of sourceType: String, property: String, linkingTo target: StorageKey,
        snapshot: EngineSnapshot, pending: PendingWrites?, schemas: any SchemaSource
    ) throws -> [StorageKey] {
        let wanted = IndexKeys.key(for: target)
        let links = try LinkReader(sourceType: sourceType, property: property, schemas: schemas)
        var keys: [StorageKey]
        if let index = snapshot.index(named: IndexKeys.indexName(typeName: sourceType, property: property)) {
            let bound = IndexBound(wanted, inclusive: true)
            keys = try index.objects(from: bound, to: bound)
        } else {
            // Only a schema source without the store's indexes gets here; the answer is the same.
            keys = try snapshot.entries(type: sourceType).compactMap { entry in
                try links.keys(in: entry.value, key: entry.key).contains(wanted) ? entry.key : nil
            }
        }
        guard let pending else { return keys }
        let changes = try pending.changes(type: sourceType)
        if changes.cleared { keys = [] }
        guard !changes.keys.isEmpty else { return keys }
        var found = Set(keys)
        for (key, bytes) in changes.keys {
            found.remove(key)
            if let bytes, try links.keys(in: bytes, key: key).contains(wanted) { found.insert(key) }
        }
        return found.sorted(by: StorageKey.precedes)
    }
}

/// The linked keys one property of a type's stored records holds, as the store indexes them.
private struct LinkReader {
    let sourceType: String
    /// The source type's schema, which spells its keys in errors.
    let schema: ObjectSchema
    let projection: RecordProjection
    let position: Int

    init(sourceType: String, property: String, schemas: any SchemaSource) throws {
        guard let schema = schemas.schema(named: sourceType), let position = schema.index(ofProperty: property) else {
            throw StoreError(.unknownModel(typeName: sourceType))
        }
        self.sourceType = sourceType
        self.schema = schema
        self.position = position
        projection = RecordProjection(schema: schema, properties: [property], schemas: schemas)
    }

    func keys(in bytes: [UInt8], key: StorageKey) throws -> [IndexKey] {
        do {
            return IndexKeys.keys(for: try projection.values(of: bytes)[position])
        } catch {
            throw StoreError(error, typeName: sourceType, key: PrimaryKey.text(key, of: schema))
        }
    }
}
