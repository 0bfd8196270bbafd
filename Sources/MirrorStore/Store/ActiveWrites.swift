import Foundation

/// The stores whose write block is running on the current thread.
///
/// `Store.write` runs its block on the calling thread while it holds the store's write lock, so a
/// call from that block back into the same store's `write`, `compact` or `close` comes from the
/// same thread and would wait forever for the lock the thread already holds. A write of the same
/// store from any other thread is ordinary contention and must wait its turn. A thread-local
/// marker tells the two apart. A task-local would not: tasks created inside the block inherit the
/// block's task-local values, so their writes would be refused although they run on other
/// threads and can wait.
final class ActiveWrites {
    private static let key = "MirrorStore.ActiveWrites"
    /// Stores, innermost last; more than one when a block writes to another store.
    private var stores: [ObjectIdentifier] = []

    /// The current thread's list, created on first use and freed with the thread.
    private static var current: ActiveWrites {
        let dictionary = Thread.current.threadDictionary
        if let existing = dictionary[key] as? ActiveWrites { return existing }
        let created = ActiveWrites()
        dictionary[key] = created
        return created
    }

    /// Whether the current thread is inside a write block of `store`.
    static func contains(_ store: AnyObject) -> Bool {
        current.stores.contains(ObjectIdentifier(store))
    }

    /// Runs `body` marked as inside a write block of `store` on this thread.
    static func run<Result>(inside store: AnyObject, _ body: () throws -> Result) rethrows -> Result {
        let writes = current
        writes.stores.append(ObjectIdentifier(store))
        defer { writes.stores.removeLast() }
        return try body()
    }
}
