import MirrorStoreEngine

/// What a write transaction has done so far, so that reads inside it see its own writes.
final class PendingWrites {
    enum State {
        case written([UInt8])
        case deleted
    }

    /// Per type, per key: the new bytes, or `nil` for a deletion.
    private var changes: [String: [StorageKey: [UInt8]?]] = [:]
    /// Types whose stored objects were all deleted; later writes to them are in `changes`.
    private var clearedTypes = Set<String>()

    func state(type: String, key: StorageKey) -> State? {
        if let change = changes[type]?[key] {
            return change.map(State.written) ?? .deleted
        }
        return clearedTypes.contains(type) ? .deleted : nil
    }

    func put(type: String, key: StorageKey, value: [UInt8]) {
        changes[type, default: [:]][key] = .some(value)
    }

    func delete(type: String, key: StorageKey) {
        changes[type, default: [:]][key] = .some(nil)
    }

    func deleteAll(type: String) {
        changes[type] = nil
        clearedTypes.insert(type)
    }

    /// The engine batch for these writes, built once at commit so the bytes are not kept twice
    /// while the transaction runs. Clearing a type comes before that type's later writes.
    func makeBatch() -> WriteBatch {
        var batch = WriteBatch()
        for type in clearedTypes {
            batch.deleteAll(type: type)
        }
        for (type, keys) in changes {
            for (key, value) in keys {
                if let value {
                    batch.put(type: type, key: key, value: value)
                } else {
                    batch.delete(type: type, key: key)
                }
            }
        }
        return batch
    }
}
