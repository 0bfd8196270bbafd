/// What the layer above asks the engine to index: which type, and how to find the keys in one
/// stored value. The engine calls `keys` on values as they are committed and when it builds the
/// index; it never interprets the value itself.
///
/// ```swift
/// let byName = IndexDefinition(name: "Hero.name", typeName: "Hero", isUnique: false) { value in
///     [.string(decodeName(value))]
/// }
/// try engine.defineIndexes([byName])
/// ```
public struct IndexDefinition: Sendable {
    /// The index's name, unique within the store.
    public let name: String
    /// The type whose objects it indexes.
    public let typeName: String
    /// Whether a commit that gives two objects the same non-null key is refused.
    public let isUnique: Bool
    /// The keys one stored value contributes (none, one, or one per element of a collection).
    public let keys: @Sendable ([UInt8]) throws -> [IndexKey]

    /// Creates a definition.
    public init(name: String, typeName: String, isUnique: Bool, keys: @escaping @Sendable ([UInt8]) throws -> [IndexKey]) {
        self.name = name
        self.typeName = typeName
        self.isUnique = isUnique
        self.keys = keys
    }
}

/// The secondary indexes of one engine state, kept in step with its objects.
struct SecondaryIndexes: Sendable {
    private(set) var definitions: [String: IndexDefinition] = [:]
    /// Index names by the type they index.
    private var namesByType: [String: [String]] = [:]
    private(set) var indexes: [String: OrderedIndex] = [:] {
        // A changed index may lack the chunk starts every snapshot used to find in place.
        didSet { chunkStartsProvided = false }
    }
    /// Every index has its chunk starts' memo: taking a snapshot need not look.
    private var chunkStartsProvided = false

    /// Indexes for `definitions`, built from every object `snapshot` holds.
    init(definitions: [IndexDefinition], snapshot: EngineSnapshot) throws {
        for definition in definitions {
            self.definitions[definition.name] = definition
            namesByType[definition.typeName, default: []].append(definition.name)
            var entries: [IndexEntry] = []
            for (object, value) in try snapshot.entries(type: definition.typeName) {
                for key in try Self.keys(of: value, object: object, definition: definition) {
                    entries.append(IndexEntry(key: key, object: object))
                }
            }
            let index = OrderedIndex(entries: entries)
            if definition.isUnique, let duplicate = index.firstDuplicate() {
                throw StorageError(.uniqueConstraint(index: definition.name, value: duplicate.description))
            }
            indexes[definition.name] = index
        }
    }

    init() {}

    var isEmpty: Bool { definitions.isEmpty }

    private static func keys(of value: [UInt8], object: StorageKey, definition: IndexDefinition) throws -> [IndexKey] {
        do {
            return try definition.keys(value)
        } catch {
            throw StorageError(.unindexable(index: definition.name, object: object.description, reason: "\(error)"))
        }
    }

    /// Applies one batch's operations, reading the values they replace through `oldValue`, and
    /// checks the unique indexes once the whole batch is in.
    ///
    /// - Throws: `StorageError` when the batch would give two objects one unique key, or when a
    ///   value's keys cannot be read. `self` is then unchanged.
    mutating func apply(
        _ operations: [WriteBatch.Operation], oldValue: (String, StorageKey) throws -> [UInt8]?
    ) throws {
        var updated = self
        var inserted: [String: [IndexEntry]] = [:]
        // Entries to add, per index, held back until an entry must leave that index (which may
        // be one of them) or the batch ends: added together, many are merged in one pass.
        var waiting: [String: [IndexEntry]] = [:]
        func admitWaiting(_ name: String) {
            guard let entries = waiting.removeValue(forKey: name) else { return }
            updated.indexes[name]?.insert(contentsOf: entries)
        }
        // A batch may write one key twice: the second write replaces the first one's keys.
        var batchValues = GroupValues()
        func previous(_ type: String, _ key: StorageKey) throws -> [UInt8]? {
            if let written = batchValues.written(type: type, key: key) { return written }
            return try oldValue(type, key)
        }
        for operation in operations {
            defer { batchValues.record([operation]) }
            switch operation {
            case .put(let type, let key, let value):
                guard let names = namesByType[type] else { continue }
                let old = try previous(type, key)
                for name in names {
                    guard let definition = definitions[name] else { continue }
                    if let old {
                        admitWaiting(name)
                        for indexKey in try Self.keys(of: old, object: key, definition: definition) {
                            updated.indexes[name]?.remove(IndexEntry(key: indexKey, object: key))
                        }
                    }
                    for indexKey in try Self.keys(of: value, object: key, definition: definition) {
                        let entry = IndexEntry(key: indexKey, object: key)
                        waiting[name, default: []].append(entry)
                        if definition.isUnique { inserted[name, default: []].append(entry) }
                    }
                }
            case .delete(let type, let key):
                guard let names = namesByType[type], let old = try previous(type, key) else { continue }
                for name in names {
                    guard let definition = definitions[name] else { continue }
                    admitWaiting(name)
                    for indexKey in try Self.keys(of: old, object: key, definition: definition) {
                        updated.indexes[name]?.remove(IndexEntry(key: indexKey, object: key))
                    }
                }
            case .deleteAll(let type):
                for name in namesByType[type] ?? [] {
                    waiting[name] = nil
                    updated.indexes[name] = OrderedIndex()
                }
            case .setSchema, .setMetadata, .reserveCapacity:
                break
            }
        }
        for (name, entries) in waiting { updated.indexes[name]?.insert(contentsOf: entries) }
        for (name, entries) in inserted {
            guard let index = updated.indexes[name] else { continue }
            // Many new entries: one pass over the whole index finds any key two objects share.
            if index.takesInBulk(entries.count) {
                if let duplicate = index.firstDuplicate() {
                    throw StorageError(.uniqueConstraint(index: name, value: duplicate.description))
                }
                continue
            }
            // An entry the batch later replaced or deleted is gone from the index: not a clash.
            for entry in entries where entry.key.isUniquelyConstrained && index.holdsAnother(entry) {
                throw StorageError(.uniqueConstraint(index: name, value: entry.key.description))
            }
        }
        self = updated
    }

    /// Gives each index without one a place to keep its chunk starts (`OrderedIndex.chunkStarts`).
    mutating func provideChunkStarts() {
        guard !chunkStartsProvided else { return }
        let names = indexes.compactMap { $0.value.chunkStarts == nil ? $0.key : nil }
        for name in names { indexes[name]?.provideChunkStarts() }
        chunkStartsProvided = true
    }

    func snapshot(named name: String) -> IndexSnapshot? {
        guard let index = indexes[name], let definition = definitions[name] else { return nil }
        return IndexSnapshot(storage: index, isUnique: definition.isUnique)
    }
}

extension OrderedIndex {
    /// The first key two objects share that a unique index refuses, if any.
    func firstDuplicate() -> IndexKey? {
        var previous: IndexEntry?
        for chunk in chunks.indices {
            for entry in chunks[chunk] {
                if let previous, previous.key == entry.key, entry.key.isUniquelyConstrained, previous.object != entry.object {
                    return entry.key
                }
                previous = entry
            }
        }
        return nil
    }
}

/// The values a group commit's earlier units wrote, so a later unit in the same group replaces
/// the right index keys before any of it reaches the published state.
struct GroupValues {
    private var values: [String: [StorageKey: [UInt8]?]] = [:]
    private var emptiedTypes: Set<String> = []

    mutating func record(_ operations: [WriteBatch.Operation]) {
        for operation in operations {
            switch operation {
            case .put(let type, let key, let value): values[type, default: [:]][key] = .some(value)
            case .delete(let type, let key): values[type, default: [:]][key] = .some(nil)
            case .deleteAll(let type):
                values[type] = nil
                emptiedTypes.insert(type)
            case .setSchema, .setMetadata, .reserveCapacity: break
            }
        }
    }

    /// What the recorded operations left under `key`: `.some(nil)` when they deleted it, `nil`
    /// when they did not touch it.
    func written(type: String, key: StorageKey) -> [UInt8]?? {
        if let written = values[type]?[key] { return written }
        if emptiedTypes.contains(type) { return .some(nil) }
        return nil
    }

    /// The value under `key` as the group has left it, else as the published state has it.
    func value(type: String, key: StorageKey, base: KeyIndex, log: any LogStorage) throws -> [UInt8]? {
        if let written = written(type: type, key: key) { return written }
        guard let (offset, length) = try base.location(type: type, key: key) else { return nil }
        try base.verify(offset: offset, length: length, in: log)
        return try log.read(at: offset, count: length)
    }
}
