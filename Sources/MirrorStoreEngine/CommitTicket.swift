/// One batch handed to ``StorageEngine/submit(_:after:onPublish:)``: its place in the commit
/// queue, and its outcome once the engine has written it (or refused it).
///
/// A ticket is how a writer that built its batch on top of batches not yet durable says so:
/// it names the last of them as its dependency, and if that one fails, this one fails too
/// instead of writing changes computed from a state that never existed.
///
/// ```swift
/// let first = engine.submit(batchA)
/// let second = engine.submit(batchB, after: first)   // built reading batchA's writes
/// try engine.wait(for: second)                       // one sync for both
/// ```
public final class CommitTicket: Sendable {
    let batch: WriteBatch
    /// The streamed commit this batch completes, whose pieces become visible with it; nil for a
    /// plain batch.
    let stream: WriteStream?
    /// Called by the engine right after the unit became visible, before any waiter returns.
    let onPublish: (@Sendable () -> Void)?
    private let state: Lock<State>

    private struct State {
        var outcome: Result<UInt64, StorageError>?
        /// Cleared once the engine has looked at it, so that tickets never form long chains.
        var dependency: CommitTicket?
    }

    init(batch: WriteBatch, stream: WriteStream?, dependency: CommitTicket?, onPublish: (@Sendable () -> Void)?) {
        self.batch = batch
        self.stream = stream
        self.onPublish = onPublish
        state = Lock(State(outcome: nil, dependency: dependency))
    }

    /// Whether the engine has written or refused the batch.
    public var isFinished: Bool { outcome != nil }

    /// The unit's sequence number, or why it was not written; nil while queued.
    var outcome: Result<UInt64, StorageError>? {
        state.withLock { $0.outcome }
    }

    func finish(_ outcome: Result<UInt64, StorageError>) {
        state.withLock { $0.outcome = outcome }
    }

    /// Whether the batch this one was built on was refused; forgets the dependency either way.
    /// Called in commit order, so a dependency has its outcome unless it is being written in the
    /// same group (and then it succeeds or fails with this one).
    func takeDependencyFailure() -> Bool {
        let dependency = state.withLock { state in
            defer { state.dependency = nil }
            return state.dependency
        }
        guard let dependency, case .failure? = dependency.outcome else { return false }
        return true
    }
}
