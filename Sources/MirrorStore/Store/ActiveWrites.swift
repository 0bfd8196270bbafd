import Foundation
import Synchronization

/// Which thread runs a write block of one store.
///
/// `Store.write` runs its block on the calling thread while it holds the store's write lock, so a
/// call from that block back into the same store's `write`, `compact` or `close` comes from the
/// same thread and would wait forever for the lock the thread already holds. A write of the same
/// store from any other thread is ordinary contention and must wait its turn. The store keeps the
/// identity of the thread inside its block to tell the two apart. A task-local would not: tasks
/// created inside the block inherit the block's task-local values, so their writes would be
/// refused although they run on other threads and can wait. (A marker in the thread's dictionary
/// did the same at the price of a bridged dictionary lookup and a dynamic cast on every write.)
final class ActiveWrites: Sendable {
    /// The identity of the `Thread` inside this store's write block, or 0 when none is.
    ///
    /// Relaxed is enough: only the thread inside the block stores its own identity, so a thread
    /// that loads its own identity reads its own earlier store; any other value is some other
    /// live thread's or 0, and means "not inside".
    private let thread = Atomic<UInt>(0)

    /// The current thread's identity: its `Thread` object, alive as long as the thread.
    private static var currentThread: UInt {
        UInt(bitPattern: ObjectIdentifier(Thread.current))
    }

    /// Whether the current thread is inside a write block of this store.
    var containsCurrentThread: Bool {
        thread.load(ordering: .relaxed) == Self.currentThread
    }

    /// Runs `body` marked as inside a write block of this store on this thread; called with the
    /// store's write lock held, so no other thread is marked meanwhile.
    func run<Result>(_ body: () throws -> Result) rethrows -> Result {
        let previous = thread.exchange(Self.currentThread, ordering: .relaxed)
        defer { thread.store(previous, ordering: .relaxed) }
        return try body()
    }
}
