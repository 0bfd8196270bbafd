import MirrorStoreEngine

/// What a write transaction has done so far, so that reads inside it see its own writes, over
/// the writes of earlier transactions that are submitted but not yet durable.
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
    /// The writes of earlier transactions still being committed, oldest first: the snapshot this
    /// transaction reads does not have them yet. They are never changed again.
    private let beneath: [PendingWrites]

    init(beneath: [PendingWrites] = []) {
        self.beneath = beneath
    }

    func state(type: String, key: StorageKey) -> State? {
        if let state = ownState(type: type, key: key) { return state }
        for layer in beneath.reversed() {
            if let state = layer.ownState(type: type, key: key) { return state }
        }
        return nil
    }

    /// The key's state as this transaction alone left it.
    private func ownState(type: String, key: StorageKey) -> State? {
        if let change = changes[type]?[key] {
            return change.map(State.written) ?? .deleted
        }
        return clearedTypes.contains(type) ? .deleted : nil
    }

    /// The keys of `type` written (by this transaction or those beneath it) and not deleted since.
    func writtenKeys(type: String) -> [StorageKey] {
        guard !beneath.isEmpty else {
            return changes[type, default: [:]].compactMap { key, change in change == nil ? nil : key }
        }
        return touchedKeys(type: type).filter { key in
            if case .written? = state(type: type, key: key) { true } else { false }
        }
    }

    /// Whether every stored object of `type` was deleted (by this transaction or those beneath
    /// it), and the keys of `type` written (new bytes) or deleted (`nil`) since.
    func changes(type: String) -> (cleared: Bool, keys: [StorageKey: [UInt8]?]) {
        let layers = [self] + beneath.reversed()
        let cleared = layers.contains { $0.clearedTypes.contains(type) }
        guard !beneath.isEmpty else { return (cleared, changes[type] ?? [:]) }
        var keys: [StorageKey: [UInt8]?] = [:]
        for key in touchedKeys(type: type) {
            if case .written(let bytes)? = state(type: type, key: key) { keys[key] = .some(bytes) } else { keys[key] = .some(nil) }
        }
        return (cleared, keys)
    }

    /// The keys of `type` some layer wrote or deleted, newest layer first, down to the newest
    /// that deleted the whole type: what lies below that one no longer counts.
    private func touchedKeys(type: String) -> Set<StorageKey> {
        var keys = Set<StorageKey>()
        for layer in [self] + beneath.reversed() {
            if let changed = layer.changes[type] { keys.formUnion(changed.keys) }
            if layer.clearedTypes.contains(type) { break }
        }
        return keys
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
