import MirrorStoreEngine

/// `$0.link == nil` or `$0.link != nil` on a to-one link, answered by the link's index. The
/// model reads a link to a deleted object as `nil`, but the record and the index keep its key,
/// so the index's `nil` entries alone are not the answer: each distinct linked key is looked up
/// among the linked type's objects too.
struct LinkPresence: Sendable {
    /// The engine name of the link's index, and its snapshot.
    let indexName: String
    let index: IndexSnapshot
    /// The type the link points to.
    let targetType: String
    /// Whether the objects wanted are those whose link reads an object (`!= nil`).
    let isPresent: Bool

    /// The objects whose link reads as wanted, in index order.
    func objects(in snapshot: EngineSnapshot) throws -> [StorageKey] {
        var objects: [StorageKey] = []
        var current: IndexKey?
        var currentExists = false
        var failure: (any Error)?
        // Entries with a `nil` link come first; `!= nil` skips them.
        try index.forEach(from: isPresent ? IndexBound(.null, inclusive: false) : nil, to: nil) { entry in
            if entry.key != current {
                current = entry.key
                do {
                    currentExists = try Self.storageKey(of: entry.key).map { try snapshot.contains(type: targetType, key: $0) } ?? false
                } catch {
                    failure = error
                    return false
                }
            }
            if currentExists == isPresent { objects.append(entry.object) }
            return true
        }
        if let failure { throw failure }
        return objects
    }

    /// The linked object's key, which a link's index key was made from
    /// (``IndexKeys/key(for:)-(StorageKey)``); `nil` for the `nil` link.
    private static func storageKey(of key: IndexKey) -> StorageKey? {
        switch key {
        case .integer(let value): .integer(value)
        case .string(let value): .string(value)
        case .bytes(let value): .bytes(value)
        default: nil
        }
    }
}
