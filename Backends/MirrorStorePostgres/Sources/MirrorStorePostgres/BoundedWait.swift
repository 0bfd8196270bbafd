import Synchronization

/// Waits for a task to end, but no longer than a timeout: `close()` must return even when the
/// server no longer answers, and waiting for a task's value does not end when the waiter is
/// cancelled.
enum BoundedWait {
    /// Returns once `task` has ended or `timeout` has passed, whichever comes first; the task
    /// runs on after a timeout.
    static func end(of task: Task<Void, Never>, atMost timeout: Duration) async {
        let race = Race()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            race.start(continuation)
            let timer = Task {
                guard (try? await Task.sleep(for: timeout)) != nil else { return }
                race.finish()
            }
            Task {
                await task.value
                race.finish()
                timer.cancel()
            }
        }
    }

    /// The waiter, resumed once by whichever side finishes first.
    private final class Race: Sendable {
        private let waiter = Mutex<CheckedContinuation<Void, Never>?>(nil)

        func start(_ continuation: CheckedContinuation<Void, Never>) { waiter.withLock { $0 = continuation } }

        func finish() { waiter.withLock { $0.take() }?.resume() }
    }
}
