import Dispatch

extension Store {
    /// Runs `body` as one transaction, like the synchronous `write(_:)`, without blocking the calling task's
    /// thread: the block runs on the store's own writer queue while the task is suspended, and
    /// the task resumes once the commit is durable. Blocks from many tasks run one after the
    /// other while earlier commits sync, and share syncs (group commit).
    ///
    /// ```swift
    /// try await store.write { transaction in
    ///     try transaction.add(hero)
    /// }
    /// ```
    ///
    /// `body` and what it returns are handed over to the writer queue and back (`sending`), so
    /// models that are not `Sendable` can be written as long as the caller does not use them
    /// while the block runs. In an `async` function, Swift picks this method for
    /// `try await store.write { … }`.
    ///
    /// - Returns: What `body` returns.
    @discardableResult
    public func write<Result>(_ body: sending @escaping (WriteTransaction) throws -> Result) async throws -> sending Result {
        let handOver = HandOver(body)
        let outcome = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HandOver<Result>, any Error>) in
            writeQueue.async {
                let staged: StagedWrite<Result>
                do {
                    staged = try self.stage(handOver.value)
                } catch {
                    continuation.resume(throwing: error)
                    return
                }
                let result = HandOver(staged.result)
                let commit = staged.commit
                // The sync is waited for on another queue: the next block can run meanwhile, and
                // the commits staged during this sync share the next one.
                self.commitQueue.async {
                    do {
                        try self.waitForCommit(commit)
                        continuation.resume(returning: result)
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
        }
        return outcome.value
    }

    /// Runs `body` off the calling task's thread, for reads that decode many objects:
    /// `let heroes = try await store.read { try $0.objects(Hero.self).all() }`.
    ///
    /// - Returns: What `body` returns.
    public func read<Result>(_ body: sending @escaping (Store) throws -> Result) async throws -> sending Result {
        let handOver = HandOver(body)
        let outcome = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HandOver<Result>, any Error>) in
            DispatchQueue.global().async {
                do {
                    let body = handOver.value
                    continuation.resume(returning: HandOver(try body(self)))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
        return outcome.value
    }
}

/// A value passed from one thread to another and used by one of them at a time: a `sending`
/// block on its way to the queue that runs it, or its result on the way back. The caller gave up
/// both (`sending`), which is why the unchecked `Sendable` is sound.
private struct HandOver<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
