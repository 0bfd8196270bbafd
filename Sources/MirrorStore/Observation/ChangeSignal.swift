import Foundation
import MirrorStoreEngine

/// Wakes one waiting observer when a commit may have changed what it watches.
///
/// Signals coalesce: however many arrive before the observer waits again, it wakes once and
/// then reads the newest state, so a slow consumer never queues anything. A signal says nothing
/// of what changed: the engine publishes a commit before its observers are signalled, so a
/// snapshot taken on waking may hold commits whose signals are still to come, and only the
/// snapshot can say what it holds. Waiting ends early, returning `false`, when the waiting task
/// is cancelled.
final class ChangeSignal: @unchecked Sendable {
    // `NSLock`: ThreadSanitizer on Linux reports false races inside `Synchronization.Mutex`.
    private let lock = NSLock()
    private var pending = false
    private var waiter: CheckedContinuation<Bool, Never>?
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
