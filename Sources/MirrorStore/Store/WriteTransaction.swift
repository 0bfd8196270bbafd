import MirrorStoreEngine

/// The changes of one `Store.write(_:)` block, committed together or not at all.
///
/// ```swift
/// try store.write { transaction in
///     try transaction.add(hero)                                  // insert or replace by primary key
///     try transaction.update(Hero.self, primaryKey: 1455) { $0.realName = "Anthony Edward Stark" }
///     try transaction.update(Hero.self, primaryKey: 1455, set: \.name, to: "Iron Man")
///     try transaction.delete(Hero.self, primaryKey: 7)
/// }
/// ```
///
/// Reads inside the block see the block's own writes. The transaction must not be used after the
/// block returns.
public final class WriteTransaction {
    let registry: ModelRegistry
    let pending: PendingWrites
    private var nextIdentities: [String: Int64]
    /// The registered type last saved: a transaction saves long runs of one type, whose name is
    /// then compared instead of looked up.
    private var lastSavedType: String?
    /// The registered plan with direct steps of the model last saved directly (`saveDirectly`).
    private var lastDirectPlan: TypePlan?
    let snapshot: EngineSnapshot
    private var isOpen = true
    private let enumValues: StoredEnumValues
    /// The enum raw values the file does not record yet, recorded with the transaction's objects.
    private(set) var newEnumValues = Set<StoredEnumValues.Value>()

    /// `beneath`: the writes of earlier transactions not yet in `snapshot`, oldest first.
    init(
        snapshot: EngineSnapshot, registry: ModelRegistry, enumValues: StoredEnumValues, nextIdentities: [String: Int64],
        beneath: [PendingWrites] = [], streaming: PendingWrites.Streaming? = nil
    ) {
        self.snapshot = snapshot
        self.registry = registry
        self.enumValues = enumValues
        self.nextIdentities = nextIdentities
        let pending = PendingWrites(beneath: beneath, streaming: streaming)
        self.pending = pending
    }

    /// What the transaction wrote, as one engine batch.
    func makeBatch() -> WriteBatch {
        var batch = pending.makeBatch()
        guard !batch.isEmpty else { return batch }
        for key in newEnumValues.map(enumValues.key(of:)).sorted() { batch.setMetadata(key: key, value: []) }
        return batch
    }

    /// Ends the transaction; returns the identity counters it advanced.
    func finish() -> [String: Int64] {
        isOpen = false
        return nextIdentities
    }

    func checkOpen() throws(StoreError) {
        guard isOpen else { throw StoreError(.transactionEnded) }
    }

    /// Inserts the model, or replaces the stored one with the same primary key. Linked models that
    /// have a primary key are saved under their own keys too, unless `linkedObjects` is
    /// ``LinkedObjects/referenceOnly``; models without one are embedded. A model without a
    /// primary key is always inserted, under a generated identity.
    ///
    /// - Throws: ``MappingError`` for a value that cannot be stored; ``StoreError`` for a model
    ///   the store was not opened with, or a link by key to an object that is not stored.
    public func add<Model: Persistable>(_ model: Model, linkedObjects: LinkedObjects = .save) throws {
        try checkOpen()
        if try saveDirectly(model) { return }
        let record = try model.managedObject()
        defer { record.releaseGraph() }
        try save(record, linkedObjects: linkedObjects)
    }

    /// Adds each model of a sequence, as ``add(_:linkedObjects:)`` does.
    public func add<S: Sequence>(contentsOf models: S, linkedObjects: LinkedObjects = .save) throws where S.Element: Persistable {
        for model in models {
            try add(model, linkedObjects: linkedObjects)
        }
    }

    /// Saves `model` from bytes written straight from its fields (`ModelMapping.writeDirectly`),
    /// the bytes and key the general path would make from its record; returns `false`, having
    /// saved nothing, when its type is not registered or its plan or a value needs that path.
    /// The store reads and writes models by their plans alike: the fill from bytes does not call
    /// `modelInstance(managedObject:)` either.
    private func saveDirectly<Model: Persistable>(_ model: Model) throws -> Bool {
        let identifier = ObjectIdentifier(type(of: model))
        let plan: TypePlan
        if let last = lastDirectPlan, last.typeIdentifier == identifier {
            plan = last
        } else {
            guard let registered = registry.plan(ofType: type(of: model)), registered.directSteps != nil else { return false }
            plan = registered
            lastDirectPlan = registered
        }
        guard let record = ModelMapping.writeDirectly(model, plan: plan, tagless: snapshot.allowsNewerValueForms) else { return false }
        let key = try record.key ?? generatedKey(for: plan.typeName)
        try pending.put(type: plan.typeName, key: key, value: record.bytes)
        return true
    }

    private func save(_ root: ManagedObject, linkedObjects: LinkedObjects) throws {
        var encoder = RecordEncoder(writesTagless: snapshot.allowsNewerValueForms)
        var queue = [root]
        var index = 0
        while index < queue.count {
            let record = queue[index]
            index += 1
            let typeName = record.objectSchema.typeName
            if typeName != lastSavedType {
                guard registry.plan(named: typeName) != nil else { throw StoreError(.unknownModel(typeName: typeName)) }
                lastSavedType = typeName
            }
            let linkedBefore = encoder.linkedRecords.count
            let key = try PrimaryKey.storageKey(of: record) ?? generatedKey(for: typeName)
            let bytes = try encoder.encode(record)
            enumValues.unrecordedValues(in: record, into: &newEnumValues)
            let linked = encoder.linkedRecords[linkedBefore...]
            if linkedObjects == .referenceOnly {
                // Checked before anything is put, so a refused model leaves the transaction as it was.
                for target in linked {
                    // The encoder lists only linked records that have a primary key.
                    guard let targetKey = try PrimaryKey.storageKey(of: target) else { continue }
                    let targetType = target.objectSchema.typeName
                    let isItself = targetType == typeName && targetKey == key
                    guard try isItself || isStored(type: targetType, key: targetKey) else {
                        throw StoreError(.missingLinkTarget(typeName: targetType, key: PrimaryKey.text(targetKey, of: target.objectSchema), linkedFrom: typeName))
                    }
                }
            } else {
                queue.append(contentsOf: linked)
            }
            try pending.put(type: typeName, key: key, value: bytes)
        }
    }

    /// Whether the object exists as this transaction has left it.
    private func isStored(type typeName: String, key: StorageKey) throws -> Bool {
        try StoredView(snapshot: snapshot, pending: pending).contains(type: typeName, key: key)
    }

    private func generatedKey(for typeName: String) throws -> StorageKey {
        let next = try nextIdentities[typeName] ?? snapshot.keys(type: typeName).reduce(Int64(0)) { highest, key in
            if case .integer(let value) = key { max(highest, value) } else { highest }
        } + 1
        nextIdentities[typeName] = next + 1
        return .integer(next)
    }

    /// The model stored under `primaryKey`, as this transaction has left it, or `nil`.
    public func object<Model: Persistable>(_ type: Model.Type, primaryKey: some RecordPrimitive) throws -> Model? {
        try checkOpen()
        let entry = try registry.entry(for: type)
        let key = try registry.key(primaryKey, for: entry)
        return try ModelReader(entry: entry, snapshot: snapshot, registry: registry, pending: pending).model(type, key: key)
    }

    /// Changes some properties of the stored model with `primaryKey` and stores it again.
    ///
    /// - Returns: The updated model, or `nil` when no model has that key (nothing is written).
    @discardableResult
    public func update<Model: Persistable>(
        _ type: Model.Type, primaryKey: some RecordPrimitive, _ changes: (inout Model) throws -> Void
    ) throws -> Model? {
        guard var model = try object(type, primaryKey: primaryKey) else { return nil }
        try changes(&model)
        try add(model)
        return model
    }

    /// Sets one property of the stored model with `primaryKey`, by writing its stored record: the
    /// property may be a `let` of an immutable struct, since no instance is changed.
    ///
    /// ```swift
    /// try transaction.update(Character.self, primaryKey: 1455, set: \.realName, to: "Anthony Edward Stark")
    /// ```
    ///
    /// - Returns: The updated model, or `nil` when no model has that key (nothing is written).
    /// - Throws: ``StoreError`` when the key path does not name a stored property of the model
    ///   (a computed or ignored property, or a path through another value); ``MappingError`` for a
    ///   value that cannot be stored.
    @discardableResult
    public func update<Model: Persistable, Value>(
        _ type: Model.Type, primaryKey: some RecordPrimitive, set property: KeyPath<Model, Value>, to value: Value
    ) throws -> Model? {
        try checkOpen()
        let entry = try registry.entry(for: type)
        let plan = entry.plan
        guard let name = KeyPathNames.propertyName(of: property, rootType: Model.self),
              let position = plan.schema.index(ofProperty: name) else {
            throw StoreError(.notAStoredProperty(typeName: plan.typeName, keyPath: "\(property)"))
        }
        let key = try registry.key(primaryKey, for: entry)
        let reader = RecordReader(snapshot: snapshot, schemas: registry, pending: pending)
        guard let record = try reader.record(type: plan.typeName, key: key) else { return nil }
        let stored = ManagedObject(objectSchema: record.objectSchema, values: record.values)
        do throws(MappingError) {
            stored.values[position] = try plan.fields[position].recordValue(of: value)
        } catch {
            throw error.nested(under: name).reported(from: plan.typeName)
        }
        try save(stored, linkedObjects: .save)
        return try object(type, primaryKey: primaryKey)
    }

    /// Deletes the model stored under `primaryKey`, if any. Models linking to it read the link as
    /// `nil` (to-one) or without it (to-many).
    ///
    /// - Returns: Whether a model had that key, as this transaction sees the store.
    @discardableResult
    public func delete<Model: Persistable>(_ type: Model.Type, primaryKey: some RecordPrimitive) throws -> Bool {
        try checkOpen()
        let entry = try registry.entry(for: type)
        return try delete(type: entry.plan.typeName, key: try registry.key(primaryKey, for: entry))
    }

    /// Deletes the stored model with the same primary key as `model`.
    ///
    /// - Returns: Whether a model had that key, as this transaction sees the store.
    @discardableResult
    public func delete<Model: Persistable>(_ model: Model) throws -> Bool {
        try checkOpen()
        let plan = try registry.plan(for: Model.self)
        guard plan.schema.primaryKey != nil else { throw StoreError(.noPrimaryKey(typeName: plan.typeName)) }
        let record = try model.managedObject()
        defer { record.releaseGraph() }
        guard let key = try PrimaryKey.storageKey(of: record) else { return false }
        return try delete(type: plan.typeName, key: key)
    }

    /// Deletes the object under `key` of `typeName` if this transaction sees one, and what the
    /// models' ``DeleteRule``s delete with it; returns whether it did. Throws, deleting nothing,
    /// when a rule denies it.
    func delete(type typeName: String, key: StorageKey) throws -> Bool {
        try delete(type: typeName, keys: [key]) == 1
    }

    /// Deletes the objects under `keys` of `typeName` this transaction sees, and what the
    /// models' ``DeleteRule``s delete with them, all or (when a rule denies one) none; returns how
    /// many of `keys` it deleted.
    func delete(type typeName: String, keys: [StorageKey]) throws -> Int {
        let view = StoredView(snapshot: snapshot, pending: pending)
        let stored = try keys.filter { try view.contains(type: typeName, key: $0) }
        guard registry.deleteRules.apply(toDeleting: typeName) else {
            for key in stored { pending.delete(type: typeName, key: key) }
            return stored.count
        }
        let deleted = try registry.deleteRules.objects(
            deleting: stored.map { (typeName, $0) }, view: view, snapshot: snapshot, pending: pending, schemas: registry)
        for object in deleted { pending.delete(type: object.type, key: object.key) }
        return stored.count
    }

    /// Deletes every stored model of a type, and what the models' ``DeleteRule``s delete with
    /// them.
    ///
    /// - Throws: ``StoreError`` when a rule denies deleting one of them; nothing is deleted then.
    public func deleteAll<Model: Persistable>(_ type: Model.Type) throws {
        try checkOpen()
        let typeName = try registry.plan(for: type).typeName
        guard registry.deleteRules.apply(toDeleting: typeName) else {
            pending.deleteAll(type: typeName)
            return
        }
        _ = try delete(type: typeName, keys: StoredView(snapshot: snapshot, pending: pending).keys(type: typeName))
    }
}
