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
    private(set) var batch = WriteBatch()

    func state(type: String, key: StorageKey) -> State? {
        if let change = changes[type]?[key] {
            return change.map(State.written) ?? .deleted
        }
        return clearedTypes.contains(type) ? .deleted : nil
    }

    func put(type: String, key: StorageKey, value: [UInt8]) {
        changes[type, default: [:]][key] = .some(value)
        batch.put(type: type, key: key, value: value)
    }

    func delete(type: String, key: StorageKey) {
        changes[type, default: [:]][key] = .some(nil)
        batch.delete(type: type, key: key)
    }

    func deleteAll(type: String) {
        changes[type] = nil
        clearedTypes.insert(type)
        batch.deleteAll(type: type)
    }
}
