import MirrorStoreEngine

/// The stored objects as a read sees them: a snapshot, with a write transaction's pending writes
/// (and those of the transactions beneath it) over it when the read is inside one. Every read
/// that may run inside a transaction asks here, so "written, deleted, or as committed" is
/// decided in one place.
struct StoredView {
    let snapshot: EngineSnapshot
    let pending: PendingWrites?

    /// The bytes stored under `key` of `type`, or `nil` when there are none.
    func value(type: String, key: StorageKey) throws -> [UInt8]? {
        switch try pending?.state(type: type, key: key) {
        case .written(let bytes): bytes
        case .deleted: nil
        case nil: try snapshot.value(type: type, key: key)
        }
    }

    /// Whether an object is stored under `key` of `type`, without reading it.
    func contains(type: String, key: StorageKey) throws -> Bool {
        if let written = try pending?.isWritten(type: type, key: key) { return written }
        return try snapshot.contains(type: type, key: key)
    }

    /// The keys of `type`'s objects, in key order.
    func keys(type: String) throws -> [StorageKey] {
        guard let pending else { return try snapshot.keys(type: type).sorted(by: StorageKey.precedes) }
        let changes = try pending.changedKeys(type: type)
        var keys = changes.cleared ? Set<StorageKey>() : Set(try snapshot.keys(type: type))
        for (key, written) in changes.keys {
            if written { keys.insert(key) } else { keys.remove(key) }
        }
        return keys.sorted(by: StorageKey.precedes)
    }
}
