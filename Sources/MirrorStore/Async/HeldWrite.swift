import Dispatch
import MirrorStoreEngine

/// A write block whose body runs in the calling task, `async`, while the store's writer queue
/// holds the write lock for it: the queue starts the transaction, hands it to the task, and waits
/// for the body to end before it commits or rolls back. The task then waits for that outcome.
///
/// The queue's thread and the task use the transaction one after the other, never together:
/// the semaphore orders the body's calls before the commit.
final class HeldWrite: @unchecked Sendable {
    private let bodyEnded = DispatchSemaphore(value: 0)
    /// The transaction, handed from the queue to the task under a lock: the continuation that
    /// wakes the task orders the two as well, but ThreadSanitizer does not see that ordering on
    /// Linux and reported every use of the transaction in the task as a race with its creation.
    private let handed = Lock<TransactionHandOver?>(nil)
    /// Set by the task before it signals `bodyEnded`, read by the queue after the wait.
    private var bodyError: (any Error)?
    private var outcome: CheckedContinuation<Void, any Error>?

    /// On the writer queue, before the task is woken: the transaction the body writes through.
    func hand(_ transaction: WriteTransaction) {
        handed.withLock { $0 = TransactionHandOver(transaction: transaction) }
    }

    /// In the task, once woken: the transaction handed to it.
    func transaction() -> WriteTransaction? {
        handed.withLock { $0?.transaction }
    }

    /// On the writer queue, inside the write block: waits for the task's body to end, and throws
    /// what it threw so that the block rolls back.
    func waitForBody() throws {
        bodyEnded.wait()
        if let bodyError { throw bodyError }
    }

    /// In the task: ends the body (with the error it threw, if any) and waits until the write is
    /// committed and durable, or rolled back.
    func end(throwing error: (any Error)?) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            outcome = continuation
            bodyError = error
            bodyEnded.signal()
        }
    }

    /// On the writer or commit queue, once the body has ended: the write's outcome, for the task.
    func finish(_ result: Result<Void, any Error>) {
        outcome?.resume(with: result)
        outcome = nil
    }
}

/// A transaction handed from the writer queue to the task that runs the body. The queue does
/// not touch it until the body ends (``HeldWrite``), which is why the unchecked `Sendable` is sound.
struct TransactionHandOver: @unchecked Sendable {
    let transaction: WriteTransaction
}
