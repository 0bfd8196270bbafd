import Foundation
import MirrorStoreEngine

/// Wakes one waiting observer when a commit may have changed what it watches, and gathers the
/// keys of the observed type that commits wrote since the observer last asked.
///
/// Signals coalesce: however many arrive before the observer waits again, it wakes once and
/// then reads the newest state, so a slow consumer never queues anything (the gathered keys are
/// a set: at most every key of the type). Waiting ends early, returning `false`, when the
/// waiting task is cancelled.
final class ChangeSignal: @unchecked Sendable {
    // `NSLock`: ThreadSanitizer on Linux reports false races inside `Synchronization.Mutex`.
    private let lock = NSLock()
    private var pending = false
    private var waiter: CheckedContinuation<Bool, Never>?
    /// Keys of the observed type written since the last `takeWrittenKeys()`; `nil` for "any".
    private var written: Set<StorageKey>? = []

    /// Wakes the observer; `keys` are the observed type's keys the commit wrote (`nil`: it may
    /// have changed any of them).
    func signal(writtenKeys keys: Set<StorageKey>?) {
        lock.lock()
        if let keys {
            written?.formUnion(keys)
        } else {
            written = nil
        }
        lock.unlock()
        signal()
    }

    /// The keys written since the last call (`nil`: any key may have changed), and forgets them.
    func takeWrittenKeys() -> Set<StorageKey>? {
        lock.lock()
        defer { lock.unlock() }
        let keys = written
        written = []
        return keys
    }

    func signal() {
        lock.lock()
        if let waiter {
            self.waiter = nil
            lock.unlock()
            waiter.resume(returning: true)
        } else {
            pending = true
            lock.unlock()
        }
    }

    /// Returns `true` once signalled (at once if a signal came since the last wait), or `false`
    /// if the task is cancelled first.
    func wait() async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                lock.lock()
                if pending {
                    pending = false
                    lock.unlock()
                    continuation.resume(returning: true)
                } else if Task.isCancelled {
                    lock.unlock()
                    continuation.resume(returning: false)
                } else {
                    waiter = continuation
                    lock.unlock()
                }
            }
        } onCancel: {
            lock.lock()
            let waiter = self.waiter
            self.waiter = nil
            lock.unlock()
            waiter?.resume(returning: false)
        }
    }
}
