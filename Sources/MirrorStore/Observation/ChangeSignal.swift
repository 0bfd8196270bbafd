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
final class ChangeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Bool, Never>?
    }

    private let state = Lock(State())

    func signal() {
        // Resumed outside the lock: resuming may run the waiting task at once.
        let waiter = state.withLock { state in
            defer { state.waiter = nil }
            if state.waiter == nil { state.pending = true }
            return state.waiter
        }
        waiter?.resume(returning: true)
    }

    /// Returns `true` once signalled (at once if a signal came since the last wait), or `false`
    /// if the task is cancelled first.
    func wait() async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let answer: Bool? = state.withLock { state in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    if Task.isCancelled { return false }
                    state.waiter = continuation
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: false)
        }
    }
}
