import MirrorStoreEngine

/// The one way from stored bytes to models of one type. Every read that makes a model goes
/// through here: `Store.object(_:primaryKey:)`, a transaction's reads, `Results` (subscript,
/// iteration, `all()`), sorts and the residual part of a predicate, and observation; inverses are
/// read by the ``RecordReader`` of the `.graph` route below, as part of the model they fill.
///
/// The route is decided once, when the reader is made, from what the registry knows of the type:
/// - `.standalone`: the type neither links to other models (the models it embeds included) nor is
///   linked to, so no other record can take part in reading one of its records: each becomes a
///   model on its own.
/// - `.linking`: the type links to others but nothing links to it: its records are read straight
///   into models, and the links through one ``RecordReader``, so that a target shared by several
///   models comes back as one instance.
/// - `.graph`: other models link to the type, so a record may be met again through a link (a cycle,
///   an inverse): records are decoded once each by one ``RecordReader``, then mapped to models.
///
/// The first two fill the model from the bytes: a plan with direct steps (``TypePlan/directSteps``:
/// single values, arrays and sets of them, embedded structs) straight into a fresh instance, and
/// otherwise (or when the bytes are not what the direct fill expects) the model's fields as the
/// ``RecordDecoder`` reads them (`fieldModel`).
/// The tests in `ReadRouteDifferentialTests` prove the routes and the fills give the same models.
struct ModelReader {
    /// The plan of the type read.
    let plan: TypePlan
    private let view: StoredView
    private let route: Route

    private enum Route {
        /// With the schemas of the models the type embeds.
        case standalone([String: ObjectSchema])
        case linking(RecordReader)
        case graph(RecordReader)
    }

    /// A reader of `entry`'s type in `snapshot`, as `pending` writes (if any) have left it. Models
    /// read through one reader share the instances made for the records they link to.
    ///
    /// The entry and the registry are borrowed: an initialiser's parameters are otherwise copied
    /// in, a retain and a release of each of their fields on every read by key.
    init(entry: borrowing ModelRegistry.Entry, snapshot: EngineSnapshot, registry: borrowing ModelRegistry, pending: PendingWrites? = nil) {
        plan = entry.plan
        view = StoredView(snapshot: snapshot, pending: pending)
        if entry.isStandalone {
            route = .standalone(entry.embeddedSchemas)
        } else {
            let records = RecordReader(snapshot: snapshot, schemas: copy registry, pending: pending)
            route = entry.isLinkTarget ? .graph(records) : .linking(records)
        }
    }

    /// A reader that takes the `.graph` route whatever the type: the general route, which any
    /// type can take and the others must agree with (`ReadRouteDifferentialTests`).
    static func general(entry: ModelRegistry.Entry, snapshot: EngineSnapshot, registry: ModelRegistry, pending: PendingWrites? = nil) -> ModelReader {
        ModelReader(plan: entry.plan, view: StoredView(snapshot: snapshot, pending: pending),
                    route: .graph(RecordReader(snapshot: snapshot, schemas: registry, pending: pending)))
    }

    private init(plan: TypePlan, view: StoredView, route: Route) {
        self.plan = plan
        self.view = view
        self.route = route
    }

    /// The model stored as `bytes` under `key` of `entry`'s type, read on its own (it shares no
    /// instances with other reads): for a standalone type no reader is made, which would cost a
    /// retain and a release of each of its parts per read. The route is the one ``init`` takes.
    static func model<Model: Persistable>(
        _ type: Model.Type, entry: borrowing ModelRegistry.Entry, key: StorageKey, bytes: [UInt8],
        snapshot: EngineSnapshot, registry: borrowing ModelRegistry
    ) throws -> Model {
        if entry.isStandalone { return try standaloneModel(type, plan: entry.plan, embedding: entry.embeddedSchemas, bytes: bytes, key: key) }
        return try ModelReader(entry: entry, snapshot: snapshot, registry: registry).model(type, key: key, bytes: bytes)
    }

    /// The model stored under `key` of `entry`'s type in `snapshot`, or `nil` when none is, read
    /// on its own as ``model(_:entry:key:bytes:snapshot:registry:)`` reads it; a standalone
    /// type's from its bytes where they lie in the file's mapping, not from a copy.
    ///
    /// The entry is passed on as it is: the plan and the schemas copied out of it for the read
    /// were a retain and a release each per read (the closure borrows the entry instead).
    static func model<Model: Persistable>(
        _ type: Model.Type, entry: ModelRegistry.Entry, key: StorageKey, snapshot: EngineSnapshot, registry: borrowing ModelRegistry
    ) throws -> Model? {
        if entry.isStandalone {
            return try snapshot.withValue(type: entry.plan.typeName, key: key) { bytes in
                try standaloneModel(type, plan: entry.plan, embedding: entry.embeddedSchemas, bytesInPlace: bytes, key: key)
            }
        }
        guard let bytes = try snapshot.value(type: entry.plan.typeName, key: key) else { return nil }
        return try ModelReader(entry: entry, snapshot: snapshot, registry: registry).model(type, key: key, bytes: bytes)
    }

    /// The model stored under `key`, or `nil` when none is.
    func model<Model: Persistable>(_ type: Model.Type, key: StorageKey) throws -> Model? {
        if case .graph(let records) = route {
            // The record may have been read already, through a link.
            guard let record = try records.record(type: plan.typeName, key: key) else { return nil }
            return try records.mapModel(type, plan: plan, record: record)
        }
        guard let bytes = try view.value(type: plan.typeName, key: key) else { return nil }
        return try model(type, key: key, bytes: bytes)
    }

    /// The model stored as `bytes` under `key`, for a caller that has read the bytes already.
    func model<Model: Persistable>(_ type: Model.Type, key: StorageKey, bytes: [UInt8]) throws -> Model {
        switch route {
        case .standalone(let embedded):
            return try Self.standaloneModel(type, plan: plan, embedding: embedded, bytes: bytes, key: key)
        case .linking(let records):
            // A type with links has no direct steps: no direct fill to try first.
            try PrimaryKey.checkStored(bytes, under: key, schema: plan.schema)
            let decoder = records.decoder
            return try records.mapping { context in
                try Self.fieldModel(type, plan: plan, key: key, bytes: bytes, decoder: decoder, context: &context)
            }
        case .graph(let records):
            return try records.mapModel(type, plan: plan, record: records.record(type: plan.typeName, key: key, bytes: bytes))
        }
    }

    /// A projection of the model stored as `bytes`: a new instance of `shape`'s type with the
    /// properties it shares with the model, read as a model's are (links through this reader), and
    /// the model's other properties skipped unread.
    func projection<Projection: Persistable>(
        _ type: Projection.Type, shape: ProjectionShape, key: StorageKey, bytes: [UInt8]
    ) throws -> Projection {
        try PrimaryKey.checkStored(bytes, under: key, schema: plan.schema)
        let schema = plan.schema
        func project(decoder: RecordDecoder, context: inout DecodingContext) throws -> Projection {
            do {
                return try ModelMapping.model(type, plan: shape.plan, context: &context) { sink in
                    var projecting = ProjectionSink(fields: sink, shape: shape)
                    try decoder.decode(bytes, schema: schema, into: &projecting)
                    sink = projecting.fields
                }
            } catch let failure as RecordCodingFailure {
                throw StoreError(failure, typeName: schema.typeName, key: PrimaryKey.text(key, of: schema))
            }
        }
        switch route {
        case .standalone(let embedded):
            var context = DecodingContext(holdsRecords: true)
            return try project(decoder: .withoutLinks(embedding: embedded), context: &context)
        case .linking(let records), .graph(let records):
            let decoder = records.decoder
            return try records.mapping { context in try project(decoder: decoder, context: &context) }
        }
    }

    /// Every model of the type, in key order.
    func allModels<Model: Persistable>(_ type: Model.Type) throws -> [Model] {
        if view.pending == nil, case .graph(let records) = route {
            return try records.allRecords(type: plan.typeName).map { try records.mapModel(type, plan: plan, record: $0) }
        }
        guard view.pending == nil else {
            return try view.keys(type: plan.typeName).compactMap { try model(type, key: $0) }
        }
        var models: [Model] = []
        models.reserveCapacity(view.snapshot.count(type: plan.typeName))
        try view.snapshot.forEachEntryInKeyOrder(type: plan.typeName) { key, bytes in
            models.append(try model(type, key: key, bytes: bytes))
        }
        return models
    }

    /// The `.standalone` route: the model stored as `bytes`, read with no other record involved;
    /// `embedded` holds the schemas of the models the type embeds (`ModelRegistry.Entry`).
    static func standaloneModel<Model: Persistable>(
        _ type: Model.Type, plan: TypePlan, embedding embedded: [String: ObjectSchema], bytes: [UInt8], key: StorageKey
    ) throws -> Model {
        // A direct plan's fields straight into a fresh instance, the key checked on the way. Only
        // a plan with direct steps: others may be structs that must not be made by `init()`. No
        // `Model?` on the way: this runs unspecialised, where one costs a metadata lookup per read.
        if plan.directSteps != nil {
            var instance = plan.newInstance(Model.self)
            if ModelMapping.fillDirectly(&instance, plan: plan, reading: bytes, key: key) { return instance }
        }
        return try generalStandaloneModel(type, plan: plan, embedding: embedded, bytes: bytes, key: key)
    }

    /// ``standaloneModel(_:plan:embedding:bytes:key:)`` of bytes where they lie (in the file's mapping),
    /// valid during the call: a direct plan's model is filled from them without copying them first.
    static func standaloneModel<Model: Persistable>(
        _ type: Model.Type, plan: TypePlan, embedding embedded: [String: ObjectSchema], bytesInPlace bytes: UnsafeRawBufferPointer, key: StorageKey
    ) throws -> Model {
        if plan.directSteps != nil {
            var instance = plan.newInstance(Model.self)
            if ModelMapping.fillDirectly(&instance, plan: plan, reading: bytes, key: key) { return instance }
        }
        return try generalStandaloneModel(type, plan: plan, embedding: embedded, bytes: Array(bytes), key: key)
    }

    /// The `.standalone` route without the direct fill: the key checked, then each field as the
    /// record decoder reads it.
    private static func generalStandaloneModel<Model: Persistable>(
        _ type: Model.Type, plan: TypePlan, embedding embedded: [String: ObjectSchema], bytes: [UInt8], key: StorageKey
    ) throws -> Model {
        try PrimaryKey.checkStored(bytes, under: key, schema: plan.schema)
        // Made only here: a context is large, and a direct fill needs none.
        var context = DecodingContext(holdsRecords: true)
        return try fieldModel(type, plan: plan, key: key, bytes: bytes, decoder: .withoutLinks(embedding: embedded), context: &context)
    }

    /// A new model with each field filled as `decoder` reads it from `bytes`, links resolved by
    /// `decoder`.
    private static func fieldModel<Model: Persistable>(
        _ type: Model.Type, plan: TypePlan, key: StorageKey, bytes: [UInt8], decoder: RecordDecoder, context: inout DecodingContext
    ) throws -> Model {
        do {
            return try ModelMapping.model(type, plan: plan, context: &context) { sink in
                try decoder.decode(bytes, schema: plan.schema, into: &sink)
            }
        } catch let failure as RecordCodingFailure {
            throw StoreError(failure, typeName: plan.typeName, key: PrimaryKey.text(key, of: plan.schema))
        }
    }
}
