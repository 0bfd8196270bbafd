import MirrorStoreEngine

/// The objects a migration's ``Migration/delete(_:)`` dropped during the pass, and what the
/// models' ``DeleteRule``s take with them, applied once every object is written, as one delete
/// of a write transaction: `.cascade` deletes what the dropped objects' links reach in the
/// migrated state, `.deny` refuses the migration, `.nullify` leaves links to them reading `nil`.
///
/// The pass cannot take back an object it has streamed into the new file, so the cascade's
/// deletes follow the objects in the same rewrite, which is accepted whole or not at all. Only
/// keys are kept: the dropped objects and the keys their cascading links hold.
struct MigrationDeletes {
    /// The objects dropped and, once applied, those the rules deleted with them.
    private(set) var gone = Set<DeletedObject>()
    /// The objects the dropped ones' cascading links hold.
    private var targets: [(type: String, key: StorageKey)] = []
    /// Whether a rule may do more than drop: a cascade or a denial on a dropped object's type.
    private var followsRules = false

    /// Notes that the migration dropped `record`, stored under `key` (as read), before writing it.
    mutating func drop(_ record: ManagedObject, key: StorageKey, rules: DeleteRules) throws {
        let typeName = record.objectSchema.typeName
        gone.insert(DeletedObject(type: typeName, key: key))
        targets += try rules.cascadeTargets(of: record)
        if rules.apply(toDeleting: typeName) { followsRules = true }
    }

    /// Deletes from `target`, which holds every migrated object, what the rules take with the
    /// dropped objects.
    ///
    /// - Throws: ``StoreError`` (`.deleteDenied`) when a denying link from an object that stays
    ///   points at one of them: the migration is refused and the file left as it was.
    mutating func apply(to target: inout LogRewriter, rules: DeleteRules, schemas: any SchemaSource) throws {
        guard followsRules else { return }
        let removed = try rules.migrationDeletes(dropped: gone, targets: targets, snapshot: try target.snapshot(), schemas: schemas)
        for object in removed {
            try target.delete(type: object.type, key: object.key)
            gone.insert(DeletedObject(type: object.type, key: object.key))
        }
        targets = []
        followsRules = false
    }

    /// Whether the migration deleted the object `key` of `typeName` (a new type name).
    func contains(type typeName: String, key: StorageKey) -> Bool {
        gone.contains(DeletedObject(type: typeName, key: key))
    }
}
