import MirrorStoreEngine

/// The deterministic transactions the crash child commits, shared with the tests so they can
/// compute the exact state the first `n` transactions produce.
enum CrashWorkload {
    /// The metadata key holding the number of the last committed transaction.
    static let counterKey = "counter"
    /// The raw keys the encrypted modes use; "rekey" changes from one to the other after each commit.
    static let encryptionKeys: [[UInt8]] = [Array(repeating: 0xA1, count: 32), Array(repeating: 0xB2, count: 32)]

    /// Opens the store at `path`, plain or encrypted with the first of `encryptionKeys`, as it
    /// is; says whether it was encrypted.
    static func openPlainOrEncrypted(path: String, configuration: EngineConfiguration) throws -> (StorageEngine, encrypted: Bool) {
        do {
            return (try StorageEngine(path: path, configuration: configuration), false)
        } catch let error as StorageError where error.kind == .encryptionRequired(path: path) {
            var encrypted = configuration
            encrypted.encryption = .key(encryptionKeys[0])
            return (try StorageEngine(path: path, configuration: encrypted), true)
        }
    }

    /// Opens the encrypted store at `path` with whichever of `encryptionKeys` opens it, and says which.
    static func openEncrypted(path: String, configuration: EngineConfiguration) throws -> (StorageEngine, key: Int) {
        var configuration = configuration
        for (number, key) in encryptionKeys.enumerated() {
            configuration.encryption = .key(key)
            do {
                return (try StorageEngine(path: path, configuration: configuration), number)
            } catch let error as StorageError {
                guard case .wrongKey = error.kind, number + 1 < encryptionKeys.count else { throw error }
            }
        }
        throw StorageError(.wrongKey(path: path))
    }

    /// How many recent items stay live: each transaction deletes the item this many before it,
    /// so the state, and the cost of checking it, stays bounded however long the child runs.
    static let liveItems = 50

    /// The value transaction `n` stores under item `n`. Every tenth one spans several pages, so
    /// kills land in the middle of multi-page writes as well as between commits.
    static func itemValue(_ n: Int) -> [UInt8] {
        let length = n % 10 == 0 ? 12_000 + n % 997 : 1 + (n * 37) % 300
        return (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ n) }
    }

    /// The secondary indexes the checkpoint mode defines, and so persists: items by length
    /// modulo 13 (many objects per key), labels by their value (a schema change empties them).
    static let indexes: [IndexDefinition] = [
        IndexDefinition(name: "Item.size", typeName: "Item", isUnique: false, fingerprint: "size v1") { [.integer(Int64($0.count % 13))] },
        IndexDefinition(name: "Label.value", typeName: "Label", isUnique: true, fingerprint: "value v1") { [.bytes($0)] },
    ]

    /// The entries `objects` give `definition`'s index, in index order.
    static func entries(_ definition: IndexDefinition, _ objects: [String: [StorageKey: [UInt8]]]) throws -> [IndexEntry] {
        var entries: [IndexEntry] = []
        for (key, value) in objects[definition.typeName] ?? [:] {
            for indexKey in try definition.keys(value) { entries.append(IndexEntry(key: indexKey, object: key)) }
        }
        return entries.sorted { $0.key != $1.key ? $0.key < $1.key : StorageKey.precedes($0.object, $1.object) }
    }

    /// How the published indexes of `snapshot` disagree with the objects it holds, or nil when
    /// they agree: the stream-spill mode checks it after each commit, while some of the index
    /// entries lie in a scratch file's runs.
    static func indexDisagreement(_ snapshot: EngineSnapshot) throws -> String? {
        var objects: [String: [StorageKey: [UInt8]]] = [:]
        for type in ["Item", "Label"] {
            for key in try snapshot.keys(type: type) { objects[type, default: [:]][key] = try snapshot.value(type: type, key: key) }
        }
        for definition in indexes {
            guard let index = snapshot.index(named: definition.name) else { return "\(definition.name) is not defined" }
            let expected = try entries(definition, objects).map(\.object)
            let found = try index.objects(from: nil, to: nil)
            if found != expected { return "\(definition.name) lists \(found), its objects give \(expected)" }
        }
        return nil
    }

    static func encode(_ n: Int) -> [UInt8] {
        withUnsafeBytes(of: Int64(n).littleEndian) { Array($0) }
    }

    static func decode(_ bytes: [UInt8]?) -> Int {
        guard let bytes, bytes.count == 8 else { return 0 }
        return Int(bytes.enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << UInt64(8 * $1.offset) })
    }

    /// Transaction `n`: a put, a delete, a label overwrite, sometimes another delete or a
    /// delete-all, and the counter.
    static func batch(_ n: Int) -> WriteBatch {
        var batch = WriteBatch()
        batch.put(type: "Item", key: .integer(Int64(n)), value: itemValue(n))
        batch.delete(type: "Item", key: .integer(Int64(n - liveItems)))
        batch.put(type: "Label", key: .string("label-\(n % 20)"), value: encode(n))
        if n % 7 == 0 {
            batch.delete(type: "Item", key: .integer(Int64(n - 5)))
        }
        if n % 25 == 0 {
            batch.deleteAll(type: "Label")
            batch.setSchema(type: "Label", schema: encode(n))
        }
        batch.setMetadata(key: counterKey, value: encode(n))
        return batch
    }

    /// What a streamed transaction `n` writes before `batch(n)`, which overwrites all of it: a
    /// large item in the key `batch(n)` puts, and the label `batch(n)` puts with its value.
    static func overwrittenBatch(_ n: Int) -> WriteBatch {
        var batch = WriteBatch()
        batch.put(type: "Item", key: .integer(Int64(n)), value: Array(repeating: 0xEE, count: 20_000))
        batch.put(type: "Label", key: .string("label-\(n % 20)"), value: encode(n))
        return batch
    }

    /// A stream abandoned before transaction `n`: none of it is ever visible.
    static func abandonedBatch(_ n: Int) -> WriteBatch {
        var batch = WriteBatch()
        batch.put(type: "Item", key: .integer(-Int64(n)), value: itemValue(n))
        batch.put(type: "Ghost", key: .integer(Int64(n)), value: itemValue(n))
        batch.setMetadata(key: counterKey, value: encode(n + 1_000_000))
        return batch
    }

    /// Applies transaction `n` to a model of the objects, by type and key.
    static func apply(_ n: Int, to objects: inout [String: [StorageKey: [UInt8]]]) {
        objects["Item", default: [:]][.integer(Int64(n))] = itemValue(n)
        objects["Item", default: [:]][.integer(Int64(n - liveItems))] = nil
        objects["Label", default: [:]][.string("label-\(n % 20)")] = encode(n)
        if n % 7 == 0 {
            objects["Item", default: [:]][.integer(Int64(n - 5))] = nil
        }
        if n % 25 == 0 {
            objects["Label"] = [:]
        }
        objects = objects.filter { !$0.value.isEmpty }
    }

    /// The threads of the `group` mode.
    static let groupThreads = 8

    /// The `group` mode's commit `n` of `thread`: one object under its own key.
    static func groupBatch(thread: Int, _ n: Int) -> WriteBatch {
        var batch = WriteBatch()
        batch.put(type: "Thread\(thread)", key: .integer(Int64(n)), value: encode(n))
        return batch
    }

    /// How many commits of `thread` a snapshot holds: a thread commits its keys in order.
    static func committedCount(ofThread thread: Int, in snapshot: EngineSnapshot) -> Int {
        snapshot.count(type: "Thread\(thread)")
    }
}
