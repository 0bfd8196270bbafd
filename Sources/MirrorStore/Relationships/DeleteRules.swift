import MirrorStoreEngine

/// The models' delete rules, checked once when a store opens, and what one delete removes under
/// them.
struct DeleteRules: Sendable {
    /// One link property with a rule.
    struct Link: Sendable {
        let sourceType: String
        let property: String
        let position: Int
        let targetType: String
    }

    /// Per type, its links whose targets go with it.
    private let cascades: [String: [Link]]
    /// Per linked type, the links that forbid deleting it.
    private let denials: [String: [Link]]

    /// - Throws: ``StoreError/Kind-swift.enum/invalidDeleteRule(typeName:property:reason:)``
    ///   for a rule on a property that is not stored or is not a link to a model with a primary key.
    init(plans: [TypePlan], schemaNamed: (String) -> ObjectSchema?) throws {
        var cascades: [String: [Link]] = [:]
        var denials: [String: [Link]] = [:]
        for plan in plans {
            let schema = plan.schema
            for (property, rule) in plan.modelType.deleteRules.sorted(by: { $0.key < $1.key }) {
                func refuse(_ reason: String) -> StoreError {
                    StoreError(.invalidDeleteRule(typeName: plan.typeName, property: property, reason: reason))
                }
                guard let position = schema.index(ofProperty: property), let kind = schema.property(named: property)?.kind else {
                    throw refuse(schema.ignoredProperties.contains(property) ? "it is an ignored property" : "the model stores no property of that name")
                }
                guard let target = Self.linkedType(kind) else {
                    throw refuse("it holds \(kind) values, not links to models")
                }
                guard schemaNamed(target)?.primaryKey != nil else {
                    throw refuse("\(target) has no primary key, so it is embedded, not linked, and goes with its parent")
                }
                let link = Link(sourceType: plan.typeName, property: property, position: position, targetType: target)
                switch rule {
                case .nullify: continue
                case .cascade: cascades[plan.typeName, default: []].append(link)
                case .deny: denials[target, default: []].append(link)
                }
            }
        }
        self.cascades = cascades
        // In the order a refused delete names them by: source type name, then property.
        self.denials = denials.mapValues { links in
            links.sorted { ($0.sourceType, $0.property) < ($1.sourceType, $1.property) }
        }
    }

    private static func linkedType(_ kind: PropertyKind) -> String? {
        switch kind {
        case .object(let typeName): typeName
        case .optional(let wrapped), .list(let wrapped), .set(let wrapped): linkedType(wrapped)
        default: nil
        }
    }

    /// Whether deleting objects of `typeName` may do more than remove them.
    func apply(toDeleting typeName: String) -> Bool {
        cascades[typeName] != nil || denials[typeName] != nil
    }

    /// The objects deleting `roots` removes, roots first: the targets of cascading links, at any
    /// depth, each once, among those `view` holds.
    ///
    /// - Throws: ``StoreError/Kind-swift.enum/deleteDenied(typeName:key:linkedFrom:sourceKey:property:)``
    ///   when a denying link from an object that stays points at one of them, naming the first
    ///   such pair in the error's documented order; ``StoreError`` for a record that does not decode.
    func objects(
        deleting roots: [(type: String, key: StorageKey)], view: StoredView, snapshot: EngineSnapshot, pending: PendingWrites,
        schemas: any SchemaSource
    ) throws -> [(type: String, key: StorageKey)] {
        var seen = Set<DeletedObject>()
        let deleted = try cascade(from: roots, seen: &seen, view: view, schemas: schemas)
        let denied = deleted.filter { denials[$0.type] != nil }.sorted { a, b in
            a.type != b.type ? a.type < b.type : StorageKey.precedes(a.key, b.key)
        }
        for object in denied {
            for link in denials[object.type] ?? [] {
                let sources = try LinkingKeys.keys(
                    of: link.sourceType, property: link.property, linkingTo: object.key,
                    snapshot: snapshot, pending: pending, schemas: schemas)
                if let source = sources.filter({ !seen.contains(DeletedObject(type: link.sourceType, key: $0)) }).min(by: StorageKey.precedes) {
                    throw StoreError(.deleteDenied(
                        typeName: object.type, key: PrimaryKey.text(object.key, of: schemas.schema(named: object.type)),
                        linkedFrom: link.sourceType, sourceKey: PrimaryKey.text(source, of: schemas.schema(named: link.sourceType)),
                        property: link.property))
                }
            }
        }
        return deleted
    }

    /// The objects among `start` that `view` holds and those the cascading links reach from
    /// them, at any depth, in the order reached, each once: those in `seen` are passed over, and
    /// every object met joins it.
    private func cascade(
        from start: [(type: String, key: StorageKey)], seen: inout Set<DeletedObject>, view: StoredView, schemas: any SchemaSource
    ) throws -> [(type: String, key: StorageKey)] {
        var deleted: [(type: String, key: StorageKey)] = []
        var queue = Array(start.reversed())
        while let next = queue.popLast() {
            guard seen.insert(DeletedObject(type: next.type, key: next.key)).inserted, try view.contains(type: next.type, key: next.key) else { continue }
            deleted.append(next)
            guard let links = cascades[next.type], let bytes = try view.value(type: next.type, key: next.key),
                  let schema = schemas.schema(named: next.type) else { continue }
            let projection = RecordProjection(schema: schema, properties: Set(links.map(\.property)), schemas: schemas)
            let values: [QueryValue]
            do {
                values = try projection.values(of: bytes)
            } catch {
                throw StoreError(error, typeName: next.type, key: PrimaryKey.text(next.key, of: schema))
            }
            for link in links.reversed() {
                Self.forEachLink(in: values[link.position]) { queue.append(($0, $1)) }
            }
        }
        return deleted
    }

    /// The objects `record`'s cascading links hold, in the order of its properties: what
    /// deleting it takes with it, for an object a migration drops before it is stored.
    func cascadeTargets(of record: ManagedObject) throws -> [(type: String, key: StorageKey)] {
        var targets: [(type: String, key: StorageKey)] = []
        for link in cascades[record.objectSchema.typeName] ?? [] where link.position < record.values.count {
            var reached: [ManagedObject] = []
            record[propertyAt: link.position].appendLinkedRecords(to: &reached)
            for linked in reached {
                if let key = try PrimaryKey.storageKey(of: linked) { targets.append((link.targetType, key)) }
            }
        }
        return targets
    }

    /// What a migration's deletes remove from the migrated state under the rules, as one delete
    /// of a write transaction would: `dropped` are the objects it deleted before storing them,
    /// `targets` the objects their cascading links held; these go, and what cascading links
    /// reach from them in `snapshot`, at any depth, each once.
    ///
    /// A denying link is checked with one pass over its source type, whatever the number of
    /// objects deleted; the first pair in the error's documented order is named.
    ///
    /// - Returns: The objects of `snapshot` to delete, in the order reached.
    /// - Throws: ``StoreError/Kind-swift.enum/deleteDenied(typeName:key:linkedFrom:sourceKey:property:)``
    ///   when a denying link from an object that stays points at a dropped or removed object;
    ///   ``StoreError`` for a record that does not decode.
    func migrationDeletes(
        dropped: Set<DeletedObject>, targets: [(type: String, key: StorageKey)], snapshot: EngineSnapshot, schemas: any SchemaSource
    ) throws -> [(type: String, key: StorageKey)] {
        var seen = dropped
        let removed = try cascade(from: targets, seen: &seen, view: StoredView(snapshot: snapshot, pending: nil), schemas: schemas)
        var gone: [String: Set<StorageKey>] = [:]
        for object in dropped { gone[object.type, default: []].insert(object.key) }
        for object in removed { gone[object.type, default: []].insert(object.key) }
        for (targetType, keys) in gone.sorted(by: { $0.key < $1.key }) {
            // The first denied object by key, then by its links' order, then the source's key.
            var first: (target: StorageKey, link: Link, source: StorageKey)?
            for link in denials[targetType] ?? [] {
                guard let schema = schemas.schema(named: link.sourceType) else { continue }
                let projection = RecordProjection(schema: schema, properties: [link.property], schemas: schemas)
                try snapshot.forEachEntryInKeyOrder(type: link.sourceType) { sourceKey, bytes in
                    guard gone[link.sourceType]?.contains(sourceKey) != true else { return }
                    let values: [QueryValue]
                    do {
                        values = try projection.values(of: bytes)
                    } catch let failure as RecordCodingFailure {
                        throw StoreError(failure, typeName: link.sourceType, key: PrimaryKey.text(sourceKey, of: schema))
                    }
                    Self.forEachLink(in: values[link.position]) { typeName, key in
                        guard typeName == targetType, keys.contains(key) else { return }
                        // Sources come in key order, links in their order: only a smaller target wins.
                        if first.map({ StorageKey.precedes(key, $0.target) }) ?? true { first = (key, link, sourceKey) }
                    }
                }
            }
            if let first {
                throw StoreError(.deleteDenied(
                    typeName: targetType, key: PrimaryKey.text(first.target, of: schemas.schema(named: targetType)),
                    linkedFrom: first.link.sourceType, sourceKey: PrimaryKey.text(first.source, of: schemas.schema(named: first.link.sourceType)),
                    property: first.link.property))
            }
        }
        return removed
    }

    private static func forEachLink(in value: QueryValue, _ body: (String, StorageKey) -> Void) {
        switch value {
        case .link(let typeName, let key): body(typeName, key)
        case .list(let elements): for element in elements { forEachLink(in: element, body) }
        default: break
        }
    }
}

/// An object a delete removes, as a set member.
struct DeletedObject: Hashable {
    let type: String
    let key: StorageKey
}
