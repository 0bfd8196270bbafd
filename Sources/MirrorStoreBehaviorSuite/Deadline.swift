/// The value of `task`, or a ``BehaviorMismatch`` after `seconds`, so a store that never
/// delivers fails the check instead of hanging it; the task is cancelled then.
func value<T: Sendable>(of task: Task<T, any Error>, within seconds: Int, waitingFor what: String, in check: BehaviorCheck) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() } }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw BehaviorMismatch(check: check, detail: "waited \(seconds) s for \(what)")
        }
        return value
    }
}
