import Foundation

/// The file store, and the in-memory one, as a ``ModelStore``: its reads answer at once, and its
/// write block runs in the calling task while the store's writer queue holds the write lock.
extension Store: ModelStore {
    /// Runs `body` as one transaction, like the synchronous `write(_:)`, with a
    /// body that may `await`: the store's writer queue starts the transaction and holds the write
    /// lock while `body` runs in the calling task, then commits (group commit, as every write)
    /// and the task resumes once the commit is durable.
    ///
    /// ```swift
    /// try await store.write(isolation: #isolation) { transaction in
    ///     try await transaction.add(hero)
    /// }
    /// ```
    ///
    /// Other writes wait for `body`: inside it, write through `transaction`, not through the
    /// store, whose writes would wait for `body` forever.
    public func write<Result>(
        isolation: isolated (any Actor)?, _ body: (AsyncWriteTransaction) async throws -> sending Result
    ) async throws -> sending Result {
        let held = HeldWrite()
        try await withCheckedThrowingContinuation { (began: CheckedContinuation<Void, any Error>) in
            writeQueue.async {
                var started = false
                let staged: StagedWrite<Void>
                do {
                    staged = try self.stage { transaction in
                        started = true
                        held.hand(transaction)
                        began.resume()
                        try held.waitForBody()
                    }
                } catch {
                    if started { held.finish(.failure(error)) } else { began.resume(throwing: error) }
                    return
                }
                let commit = staged.commit
                // The sync is waited for on another queue, as in `write(_:) async`.
                self.commitQueue.async {
                    held.finish(Swift.Result { try self.waitForCommit(commit) })
                }
            }
        }
        // Handed before the task was woken: never nil here.
        guard let transaction = held.transaction() else { throw StorageError(.closed) }
        let result: Result
        do {
            result = try await body(AsyncWriteTransaction(transaction))
        } catch {
            // The block rolls back with this error, which is rethrown as it was thrown.
            try? await held.end(throwing: error)
            throw error
        }
        try await held.end(throwing: nil)
        return result
    }

    /// The objects `query` selects: ``objects(_:)`` filtered and sorted by its steps, read now.
    public func fetch<Model: Persistable>(_ query: ModelQuery<Model>) async throws -> [Model] {
        let results = try results(of: query)
        guard let limit = query.limit, limit < results.count else { return try results.all() }
        return try (0..<limit).map { try results.object(at: $0) }
    }

    /// How many objects `query` selects.
    public func fetchCount<Model: Persistable>(_ query: ModelQuery<Model>) async throws -> Int {
        let count = try results(of: query).count
        return query.limit.map { Swift.min($0, count) } ?? count
    }

    /// ``Results/changes`` of the results of `query`, each element's objects read at once.
    ///
    /// With a limit (``ModelQuery/prefix(_:)``), only changes among the first objects make an
    /// element; one that moves objects in or out of them or among them is reported whole (every
    /// earlier position deleted, every current one inserted), one that only modifies them as such.
    public func changes<Model: Persistable>(_ query: ModelQuery<Model>) throws -> any AsyncSequence<QueryChange<Model>, any Error> {
        QueryChanges(changes: try results(of: query).changes, limit: query.limit)
    }

    /// ``Results/changes(keyPaths:)`` of the results of `query`, as ``changes(_:)`` gives them.
    public func changes<Model: Persistable>(
        _ query: ModelQuery<Model>, keyPaths: [PartialKeyPath<Model>]
    ) throws -> any AsyncSequence<QueryChange<Model>, any Error> {
        QueryChanges(changes: try results(of: query).changes(keyPaths: keyPaths), limit: query.limit)
    }

    /// ``changes(_:primaryKey:)``, as a ``ModelStore`` observes an object.
    public func changes<Model: Persistable>(
        of type: Model.Type, primaryKey: some RecordPrimitive
    ) throws -> any AsyncSequence<Model?, any Error> {
        try changes(type, primaryKey: primaryKey)
    }

    /// ``objects(_:)`` with the filters and sorts of `query`, in order.
    func results<Model: Persistable>(of query: ModelQuery<Model>) throws -> Results<Model> {
        try query.applyingSteps(to: objects(Model.self))
    }
}
