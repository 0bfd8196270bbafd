/// What the layer above asks the engine to index: which type, and how to find the keys in one
/// stored value. The engine calls `keys` on values as they are committed and when it builds the
/// index; it never interprets the value itself.
///
/// The index is persisted in the store's checkpoints. A definition with a `fingerprint` finds it
/// there at the next open when the fingerprint, the type's stored schema and the index's name,
/// type and uniqueness are the same, and then reads only what changed since the checkpoint;
/// otherwise, or without a fingerprint, it is built from every object of the type.
///
/// ```swift
/// let byName = IndexDefinition(name: "Hero.name", typeName: "Hero", isUnique: false, fingerprint: "name v1") { value in
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
    /// Says what `keys` computes: two definitions with one fingerprint must give the same keys
    /// for the same stored value. Empty: the persisted index is never reused.
    public let fingerprint: String
    /// The keys one stored value contributes (none, one, or one per element of a collection).
    public let keys: @Sendable ([UInt8]) throws -> [IndexKey]

    /// Creates a definition.
    public init(
        name: String, typeName: String, isUnique: Bool, fingerprint: String = "", keys: @escaping @Sendable ([UInt8]) throws -> [IndexKey]
    ) {
        self.name = name
        self.typeName = typeName
        self.isUnique = isUnique
        self.fingerprint = fingerprint
        self.keys = keys
    }

    /// Whether `other` computes the same keys for the same index, as far as the fingerprints tell.
    func isSame(as other: IndexDefinition) -> Bool {
        !fingerprint.isEmpty && fingerprint == other.fingerprint && name == other.name && typeName == other.typeName
            && isUnique == other.isUnique
    }
}

/// A secondary index as the checkpoint in force recorded it: kept from open until the layer above
/// defines its indexes, which then reuse it (`SecondaryIndexes.init(definitions:snapshot:reusing:)`).
struct PersistedIndex: Sendable {
    var typeName: String
    var isUnique: Bool
    var fingerprint: String
    /// CRC32C of the type's schema bytes when the runs were written (0 for none).
    var schemaCheck: UInt32
    /// Entries in the index.
    var count: Int
    var runs: [IndexRun]
    /// The first and last block of each of the type's key runs when these were written: while
    /// the type keeps those key runs, its objects changed since are exactly its in-memory entries.
    /// The last block too, since a run that lists an older one's blocks first (`KeyRunWriter.reuse`)
    /// starts where that one did.
    var basis: [UInt64]

    static func schemaCheck(_ schema: [UInt8]?) -> UInt32 {
        schema.map { CRC32C.checksum($0) } ?? 0
    }

    static func basis(of objects: TypeIndex?) -> [UInt64] {
        objects?.runs.flatMap { [$0.blockOffsets.first, $0.blockOffsets.last].compactMap { $0 } } ?? []
    }
}

/// The secondary indexes of one engine state, kept in step with its objects.
struct SecondaryIndexes: Sendable {
    private(set) var definitions: [String: IndexDefinition] = [:]
    /// The definitions in the order they were defined, and per indexed type the positions of its
    /// indexes in that order: what an `IndexUpdate` walks for each operation, kept here so that
    /// a commit does not derive them again.
    private(set) var ordered: [IndexDefinition] = []
    private(set) var positionsByType: [String: [Int]] = [:]
    /// The indexes by name; changed only through `IndexUpdate` and checkpoints.
    var indexes: [String: SecondaryIndex] = [:] {
        // A changed or added index may lack the memo every snapshot used to find in place.
        didSet { memosProvided = false }
    }
    /// Every index has its memo of first positions: taking a snapshot need not look.
    private var memosProvided = false

    /// Indexes for `definitions` as of `snapshot`: an index `current` already keeps for the same
    /// definition is taken as it is; one the snapshot's checkpoint persisted is its runs plus the
    /// objects changed since; any other is built from every object of its type.
    init(definitions: [IndexDefinition], snapshot: EngineSnapshot, reusing current: SecondaryIndexes? = nil) throws {
        for definition in definitions {
            note(definition)
            if let current, let kept = current.definitions[definition.name], kept.isSame(as: definition),
               let index = current.indexes[definition.name] {
                indexes[definition.name] = index
                continue
            }
            let objects = snapshot.index.types[definition.typeName]
            if let persisted = snapshot.index.persistedIndexes[definition.name], !definition.fingerprint.isEmpty,
               persisted.fingerprint == definition.fingerprint, persisted.typeName == definition.typeName,
               persisted.isUnique == definition.isUnique, persisted.schemaCheck == PersistedIndex.schemaCheck(objects?.schema),
               persisted.basis == PersistedIndex.basis(of: objects) {
                indexes[definition.name] = try Self.updated(persisted, objects: objects, definition: definition, snapshot: snapshot)
                continue
            }
            var entries: [IndexEntry] = []
            // One value at a time: the type's values are never all in memory at once.
            try snapshot.forEachEntry(type: definition.typeName) { object, value in
                for key in try Self.keys(of: value, object: object, definition: definition) {
                    entries.append(IndexEntry(key: key, object: object))
                }
            }
            let index = SecondaryIndex(entries: entries)
            if definition.isUnique, let duplicate = try index.firstDuplicate() {
                throw StorageError(.uniqueConstraint(index: definition.name, value: duplicate.description))
            }
            indexes[definition.name] = index
        }
    }

    /// `persisted` brought up to date with the objects of its type changed since it was written.
    private static func updated(
        _ persisted: PersistedIndex, objects: TypeIndex?, definition: IndexDefinition, snapshot: EngineSnapshot
    ) throws -> SecondaryIndex {
        var index = SecondaryIndex(runs: persisted.runs, count: persisted.count)
        guard let objects else { return index }
        var inserted: [IndexEntry] = []
        for (object, packed) in objects.sortedMemoryEntries() {
            if let old = try objects.persistedLocation(for: object) {
                for key in try keys(of: try snapshot.value(atPacked: old), object: object, definition: definition) {
                    index.remove(IndexEntry(key: key, object: object))
                }
            }
            guard packed != 0 else { continue }
            for key in try keys(of: try snapshot.value(atPacked: packed), object: object, definition: definition) {
                inserted.append(IndexEntry(key: key, object: object))
            }
        }
        index.insert(contentsOf: inserted)
        if definition.isUnique {
            // The smallest key shared, as a commit reports it (`IndexUpdate.finish`).
            var smallest: IndexKey?
            for entry in inserted where try smallest.map({ entry.key < $0 }) ?? true && entry.key.isUniquelyConstrained && index.holdsAnother(entry) {
                smallest = entry.key
            }
            if let smallest { throw StorageError(.uniqueConstraint(index: definition.name, value: smallest.description)) }
        }
        return index
    }

    init() {}

    var isEmpty: Bool { definitions.isEmpty }

    /// The keys `definition` gives the object `object` holding `value`, each once.
    static func keys(of value: [UInt8], object: StorageKey, definition: IndexDefinition) throws -> [IndexKey] {
        let keys: [IndexKey]
        do {
            keys = try definition.keys(value)
        } catch {
            throw StorageError(.unindexable(index: definition.name, object: object.description, reason: "\(error)"))
        }
        if keys.contains(.greatest) {
            throw StorageError(.unindexable(index: definition.name, object: object.description, reason: "`greatest` is only a bound, never a key"))
        }
        // An object holds each key once: a collection with a repeated element adds one entry.
        guard keys.count > 1 else { return keys }
        var seen = Set<IndexKey>()
        return keys.filter { seen.insert($0).inserted }
    }

    /// Applies one batch's operations, reading the values they replace through `oldValue`, and
    /// checks the unique indexes once the whole batch is in.
    ///
    /// - Throws: `StorageError` when the batch would give two objects one unique key, or when a
    ///   value's keys cannot be read. `self` is then unchanged.
    mutating func apply(
        _ operations: [WriteBatch.Operation], oldValue: (String, StorageKey) throws -> [UInt8]?
    ) throws {
        var update = IndexUpdate(self)
        var batchValues = GroupValues()
        try update.add(operations, values: &batchValues, stored: oldValue)
        self = try update.finish()
    }

    /// Whether an index in force that a later open could reuse (one with a fingerprint) is not
    /// what the checkpoint of `state` persisted for it: none persisted under its definition,
    /// changes since, or runs in an earlier file (`log` is the current one).
    func unpersisted(in state: KeyIndex, log: any LogStorage) -> Bool {
        definitions.contains { name, definition in
            guard !definition.fingerprint.isEmpty else { return false }
            guard let index = indexes[name], let persisted = state.persistedIndexes[name],
                  persisted.fingerprint == definition.fingerprint, persisted.typeName == definition.typeName,
                  persisted.isUnique == definition.isUnique else { return true }
            return index.hasChanges || index.runs.contains { $0.log !== log }
        }
    }

    /// Defines `definition` with `index` as its entries (built apart, as a rewrite builds runs).
    mutating func define(_ definition: IndexDefinition, as index: SecondaryIndex) {
        note(definition)
        indexes[definition.name] = index
    }

    private mutating func note(_ definition: IndexDefinition) {
        definitions[definition.name] = definition
        positionsByType[definition.typeName, default: []].append(ordered.count)
        ordered.append(definition)
    }

    /// Puts `index` in place of the index called `name` (the same entries, written to runs).
    mutating func replace(_ name: String, with index: SecondaryIndex) {
        indexes[name] = index
    }

    /// Gives each index a memo of its first positions, so that the snapshots taken from this
    /// state share one (a copy of a state without one would read the index for each query).
    mutating func providePositionsMemos() {
        guard !memosProvided else { return }
        let names = indexes.compactMap { $0.value.positionsMemo == nil ? $0.key : nil }
        for name in names { indexes[name]?.providePositionsMemo() }
        memosProvided = true
    }

    func snapshot(named name: String) -> IndexSnapshot? {
        guard let isUnique = isUnique(name), let index = indexes[name] else { return nil }
        return IndexSnapshot(storage: index, isUnique: isUnique)
    }

    /// Whether the index called `name` is unique, or nil when none is defined. Found in `ordered`
    /// when the indexes are few: a name the layer above asks for is mostly the very string it
    /// defined, which `==` finds equal from its bits alone, where hashing it cost as much as the
    /// lookup of the index itself.
    private func isUnique(_ name: String) -> Bool? {
        guard ordered.count <= Self.listedDefinitions else { return definitions[name]?.isUnique }
        // The last definition of a name is the one in force, as in `definitions`.
        var position = ordered.count
        while position > 0 {
            position -= 1
            if ordered[position].name == name { return ordered[position].isUnique }
        }
        return nil
    }

    /// The most definitions `isUnique(_:)` compares one by one.
    private static let listedDefinitions = 16
}
