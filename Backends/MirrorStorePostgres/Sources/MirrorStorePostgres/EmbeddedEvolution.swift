import MirrorStore
import PostgresNIO

/// How a table's `jsonb` values change when the embedded models in them changed their own
/// properties since it was written, as the file store's migration evolves embedded records
/// (`TypeEvolution`): a property takes the stored values of the one of its name or of the one
/// a `renameProperty(onType:from:to:)` of the embedded type names, an added property takes the
/// value of its model's `init()` (as does `null` in one that is no longer optional), a removed
/// one is dropped, and a changed kind follows ``JSONKindChange``'s automatic rules, every value
/// checked to fit. A change no rule makes is refused before anything is read, unless the
/// migration enumerates the embedded type, as in the file store: the property then takes the
/// value of its model's `init()` (an embedded model has no objects of its own for the block to
/// run on), for its parents' enumerations to convert from `old`. An embedded model the migration renames
/// (`renameType(from:to:)`) takes its stored layout from its old name: its values, which do not
/// spell the name, change only as its properties do.
struct EmbeddedEvolution {
    /// Per embedded type whose layout changed: its stored and its model's schema.
    private let changed: [String: (old: ObjectSchema, new: ObjectSchema)]
    /// Per changed type, per new property: the stored property it takes its values from.
    private let sources: [String: [String: String]]
    /// Per changed type, per property: the `jsonb` of its `init()` value.
    private let defaults: [String: [String: JSONValue]]
    /// Every embedded model's layout, as the models declare it.
    private let layouts: [String: ObjectSchema]
    /// Stored type names (of embedded models and of linked tables) to the names the migration
    /// gives them.
    private let renamedTypes: [String: String]

    /// The evolution from the layouts a table was `stored` with to the `model`'s, or `nil` when
    /// they do not differ. `renamedTypes`: stored type names to the names the migration gives
    /// them; `converted`: the embedded types the migration enumerates.
    ///
    /// - Throws: ``PostgresStoreError`` (`.migrationFailed`) for a kind no automatic rule
    ///   converts, or a rename of a property the stored model lacks.
    init?(
        stored: EmbeddedLayouts, model: EmbeddedLayouts, renames: [String: [String: String]], renamedTypes: [String: String], converted: Set<String>,
        models: BackendModels
    ) throws {
        guard stored != model else { return nil }
        var changed: [String: (old: ObjectSchema, new: ObjectSchema)] = [:]
        var sources: [String: [String: String]] = [:]
        var defaults: [String: [String: JSONValue]] = [:]
        let storedNames = Dictionary(renamedTypes.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        for (typeName, new) in model.schemas {
            // A model the table did not embed before (under its old name) holds no stored value.
            let storedName = storedNames[typeName] ?? (renamedTypes[typeName] == nil ? typeName : nil)
            guard let storedName, let old = stored.schemas[storedName] else { continue }
            let typeRenames = renames[typeName] ?? [:]
            guard EmbeddedLayouts.text(of: old) != EmbeddedLayouts.text(of: new) || !typeRenames.isEmpty else { continue }
            func failed(_ reason: String) -> PostgresStoreError {
                PostgresStoreError(.migrationFailed(typeName: typeName, reason: reason))
            }
            let movedAway = Set(typeRenames.values)
            var typeSources: [String: String] = [:]
            for property in new.properties {
                let source = typeRenames[property.name] ?? (movedAway.contains(property.name) ? nil : property.name)
                guard let source, let stored = old.property(named: source) else {
                    if let renamed = typeRenames[property.name] {
                        throw failed("its stored properties have no \(renamed) to rename to \(property.name)")
                    }
                    continue
                }
                guard JSONKindChange(from: stored.kind, to: property.kind, renamedTypes: renamedTypes) != nil else {
                    // Enumerated: the model's `init()` value, for the parents' blocks to set.
                    if converted.contains(typeName) { continue }
                    if let renamed = BackendModels.renamedModel(
                        from: stored.kind, to: property.kind, isModel: { models.type(named: $0) != nil || renamedTypes[$0] != nil }) {
                        throw failed("""
                            \(property.name) is stored as \(stored.kind) and the model needs \(property.kind), which no automatic rule converts: \
                            \(BackendModels.renameTypeAdvice(from: renamed.stored, to: renamed.model)); otherwise enumerate \(typeName) (the \
                            property then takes its init() value) and convert it in its parents' enumerations
                            """)
                    }
                    throw failed("""
                        \(property.name) is stored as \(stored.kind) and the model needs \(property.kind), which no automatic rule converts inside an \
                        embedded model; enumerate \(typeName) (the property then takes its init() value) and convert it in its parents' enumerations
                        """)
                }
                typeSources[property.name] = source
            }
            let initial = try models.initialRecord(named: typeName)
            defer { initial?.releaseGraph() }
            var values: [String: JSONValue] = [:]
            for (index, property) in new.properties.enumerated() {
                let coding = JSONCoding(models: models, typeName: typeName, property: property.name)
                values[property.name] = try initial.map { try coding.encode($0[propertyAt: index], kind: property.kind) } ?? .null
            }
            changed[typeName] = (old, new)
            sources[typeName] = typeSources
            defaults[typeName] = values
        }
        guard !changed.isEmpty else { return nil }
        self.changed = changed
        self.sources = sources
        self.defaults = defaults
        layouts = model.schemas
        self.renamedTypes = renamedTypes
    }

    /// The embedded types whose layout changed (or whose properties a migration renames).
    var changedTypes: Set<String> { Set(changed.keys) }

    /// Whether a value of `kind` may hold an embedded model whose layout changed.
    func reaches(_ kind: PropertyKind) -> Bool {
        var pending = [kind]
        var seen: Set<String> = []
        while let next = pending.popLast() {
            switch next {
            case .optional(let inner), .list(let inner), .set(let inner), .dictionary(let inner):
                pending.append(inner)
            case .object(let typeName):
                if changed[typeName] != nil { return true }
                // An unchanged embedded model may hold a changed one.
                if seen.insert(typeName).inserted, let schema = layouts[typeName] { pending += schema.properties.map(\.kind) }
            default:
                continue
            }
        }
        return false
    }

    /// A value that does not fit its new kind, or (`isDamage`) is not a value of its stored
    /// kind: its text, and where it is.
    struct Misfit: Error {
        let value: String
        let path: String
        var isDamage = false
    }

    /// `json`, a value of kind `old` with the stored layouts, as a value of kind `new` with the
    /// models'.
    ///
    /// - Throws: ``Misfit`` for the first value the new kind cannot hold.
    func evolve(_ json: JSONValue, from old: PropertyKind, to new: PropertyKind, path: String, depth: Int = 0) throws(Misfit) -> JSONValue {
        guard depth < KindSpelling.maximumDepth else { throw Misfit(value: "a value nested deeper than \(KindSpelling.maximumDepth) levels", path: path) }
        if case .null = json {
            guard Self.isOptional(new) else { throw Misfit(value: "nil", path: path) }
            return .null
        }
        switch (Self.unwrapped(old), Self.unwrapped(new), json) {
        case (.object(let oldType), .object(let newType), _) where changed[newType] != nil && (renamedTypes[oldType] ?? oldType) == newType:
            guard case .object(let entries) = json else { throw Misfit(value: "\(json), not an embedded \(newType)", path: path, isDamage: true) }
            return try evolve(entries, of: newType, path: path, depth: depth)
        case (.object(let oldType), .object(let newType), .object(let entries)) where oldType == newType && layouts[newType] != nil:
            // An unchanged embedded model may hold a changed one.
            guard let schema = layouts[newType] else { return json }
            var evolved = entries
            for property in schema.properties {
                guard let value = entries[property.name] else { continue }
                evolved[property.name] = try evolve(value, from: property.kind, to: property.kind, path: "\(path).\(property.name)", depth: depth + 1)
            }
            return .object(evolved)
        case (.list(let a), .list(let b), .array(let items)), (.list(let a), .set(let b), .array(let items)),
             (.set(let a), .list(let b), .array(let items)), (.set(let a), .set(let b), .array(let items)):
            var evolved: [JSONValue] = []
            evolved.reserveCapacity(items.count)
            for item in items { evolved.append(try evolve(item, from: a, to: b, path: path + "[]", depth: depth + 1)) }
            return .array(evolved)
        case (.dictionary(let a), .dictionary(let b), .object(let entries)):
            var evolved: [String: JSONValue] = [:]
            for key in entries.keys.sorted() {
                guard let item = entries[key] else { continue }
                evolved[key] = try evolve(item, from: a, to: b, path: "\(path)[\(key)]", depth: depth + 1)
            }
            return .object(evolved)
        default:
            // A single value (or a link's key): the same text under every kind the rules allow,
            // checked to fit.
            if let misfit = JSONKindChange(from: old, to: new, renamedTypes: renamedTypes)?.firstMisfit(in: json) {
                throw Misfit(value: misfit, path: path)
            }
            return json
        }
    }

    /// The stored entries of an embedded `typeName` in its model's layout.
    private func evolve(_ entries: [String: JSONValue], of typeName: String, path: String, depth: Int) throws(Misfit) -> JSONValue {
        guard let layouts = changed[typeName] else { return .object(entries) }
        let old = layouts.old, new = layouts.new
        var evolved: [String: JSONValue] = [:]
        for property in new.properties {
            let initial = defaults[typeName]?[property.name] ?? .null
            guard let source = sources[typeName]?[property.name], let stored = old.property(named: source) else {
                evolved[property.name] = initial
                continue
            }
            // Every stored property was written: one that is missing is damage, not a default.
            guard let value = entries[source] else { throw Misfit(value: "no \(source)", path: path, isDamage: true) }
            // `nil` in a property that is no longer optional takes the model's `init()` value.
            if case .null = value, !Self.isOptional(property.kind) {
                evolved[property.name] = initial
                continue
            }
            evolved[property.name] = try evolve(value, from: stored.kind, to: property.kind, path: "\(path).\(property.name)", depth: depth + 1)
        }
        return .object(evolved)
    }

    private static func unwrapped(_ kind: PropertyKind) -> PropertyKind {
        if case .optional(let wrapped) = kind { return unwrapped(wrapped) }
        return kind
    }

    private static func isOptional(_ kind: PropertyKind) -> Bool {
        if case .optional = kind { return true }
        return false
    }
}

extension EmbeddedEvolution {
    /// Brings every value of `column` of `table` (stored as kind `old`, under the column's new
    /// name) to the models' layouts: read through a cursor in key order, a batch at a time, the
    /// rows whose value changes updated a batch per statement, in the migration's transaction.
    ///
    /// - Throws: ``PostgresStoreError`` (`.migrationFailed`) naming the first value, in key
    ///   order, that its new kind cannot hold; nothing is kept then, as the whole open rolls back.
    func rewrite(
        _ column: ColumnMapping, storedKind old: PropertyKind, of table: TableMapping, mapping: DatabaseMapping,
        on connection: PostgresConnection, isolation: isolated (any Actor)? = #isolation
    ) async throws {
        let key = table.primaryKey.quotedName, value = column.quotedName
        try await JSONColumnWalk(table: table, key: key, value: value, property: column.property).forEachBatch(mapping: mapping, on: connection) { batch in
            var keys: [String] = [], values: [String] = []
            for (keyText, json) in batch {
                let evolved: JSONValue
                do throws(Misfit) {
                    evolved = try evolve(json, from: old, to: column.kind, path: column.property)
                } catch where error.isDamage {
                    throw PostgresStoreError(.corruptedRow(typeName: table.typeName, key: keyText, reason: "\(error.path) holds \(error.value)"))
                } catch {
                    throw PostgresStoreError(.migrationFailed(
                        typeName: table.typeName, reason: "\(error.path) holds \(error.value) in the object with key \(keyText), which the model's kind there cannot hold"))
                }
                guard evolved != json else { continue }
                keys.append(keyText)
                values.append(try JSONCoding.text(of: evolved))
            }
            guard !keys.isEmpty else { return true }
            var parameters = SQLParameters()
            let keyList = parameters.add(keys), valueList = parameters.add(values)
            try await Failures.translating(mapping) {
                try await connection.query(PostgresQuery(unsafeSQL: """
                    UPDATE \(table.table) SET \(value) = v.value::jsonb FROM unnest(\(keyList)::text[], \(valueList)::text[]) AS v(key, value)
                    WHERE \(table.table).\(key) = v.key::\(table.primaryKey.sqlType)
                    """, binds: parameters.bindings), logger: PostgresStore.logger)
            }
            return true
        }
    }
}
