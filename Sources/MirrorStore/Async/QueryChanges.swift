import Foundation

/// The `AsyncSequence` of a ``Store``'s ``ModelStore/changes(_:)``: its ``ResultsChanges``, each
/// element's objects read at once, and only the first `limit` of them when the query has one.
struct QueryChanges<Model: Persistable>: AsyncSequence {
    typealias Element = QueryChange<Model>
    typealias Failure = any Error

    let changes: ResultsChanges<Model>
    let limit: Int?

    func makeAsyncIterator() -> Iterator {
        Iterator(base: changes.makeAsyncIterator(), limit: limit)
    }

    struct Iterator: AsyncIteratorProtocol {
        var base: ResultsChanges<Model>.Iterator
        let limit: Int?
        /// How many objects the previous element held.
        var previousCount: Int?

        mutating func next() async throws -> QueryChange<Model>? {
            guard let change = try await base.next() else { return nil }
            let results = change.results
            guard let limit else {
                return QueryChange(models: try results.all(), deletions: change.deletions, insertions: change.insertions,
                                   modifications: change.modifications)
            }
            let models = try (0..<Swift.min(limit, results.count)).map { try results.object(at: $0) }
            defer { previousCount = models.count }
            guard let previousCount else { return QueryChange(models: models, deletions: [], insertions: [], modifications: []) }
            // The differences of the whole results say nothing of which of the first ones moved.
            return QueryChange(models: models, deletions: IndexSet(0..<previousCount), insertions: IndexSet(0..<models.count),
                               modifications: [])
        }
    }
}
