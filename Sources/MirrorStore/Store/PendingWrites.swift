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
    /// Keys in the order first written, so the batch, and the file, keep the transaction's order:
    /// records added in key order are read back without sorting or jumping around the file.
    private var order: [(type: String, key: StorageKey)] = []

    func state(type: String, key: StorageKey) -> State? {
        if let change = changes[type]?[key] {
            return change.map(State.written) ?? .deleted
        }
        return clearedTypes.contains(type) ? .deleted : nil
    }

    /// The keys of `type` this transaction wrote and has not deleted since.
    func writtenKeys(type: String) -> [StorageKey] {
        changes[type, default: [:]].compactMap { key, change in change == nil ? nil : key }
    }

    /// Whether the transaction deleted every stored object of `type`, and the keys of `type` it has
    /// written (new bytes) or deleted (`nil`) since.
    func changes(type: String) -> (cleared: Bool, keys: [StorageKey: [UInt8]?]) {
        (clearedTypes.contains(type), changes[type] ?? [:])
    }

    func put(type: String, key: StorageKey, value: [UInt8]) {
        remember(type: type, key: key)
        changes[type, default: [:]][key] = .some(value)
    }

    func delete(type: String, key: StorageKey) {
        remember(type: type, key: key)
        changes[type, default: [:]][key] = .some(nil)
    }

    func deleteAll(type: String) {
        changes[type] = nil
        order.removeAll { $0.type == type }
        clearedTypes.insert(type)
    }

    private func remember(type: String, key: StorageKey) {
        if changes[type]?.index(forKey: key) == nil { order.append((type, key)) }
    }

    /// The engine batch for these writes, built once at commit from their latest state, in the
    /// order first written. Clearing a type comes before that type's later writes.
    func makeBatch() -> WriteBatch {
        var batch = WriteBatch()
        for type in clearedTypes {
            batch.deleteAll(type: type)
        }
        for entry in order {
            guard let change = changes[entry.type]?[entry.key] else { continue }
            if let value = change {
                batch.put(type: entry.type, key: entry.key, value: value)
            } else {
                batch.delete(type: entry.type, key: entry.key)
            }
        }
        return batch
    }
}
