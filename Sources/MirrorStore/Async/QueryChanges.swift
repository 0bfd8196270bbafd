import Foundation
import MirrorStoreEngine

/// The `AsyncSequence` of a ``Store``'s ``ModelStore/changes(_:)``: its ``ResultsChanges``, each
/// element's objects read at once, and only the first `limit` of them when the query has one
/// (then only changes among those first objects make an element).
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
        /// The keys of the first `limit` objects of the previous element.
        var previousKeys: [StorageKey]?

        mutating func next() async throws -> QueryChange<Model>? {
            while let change = try await base.next() {
                let results = change.results
                guard let limit else {
                    return QueryChange(models: try results.all(), deletions: change.deletions, insertions: change.insertions,
                                       modifications: change.modifications)
                }
                let keys = Array(try results.allKeys.prefix(limit))
                let previous = previousKeys
                previousKeys = keys
                let models = { try keys.indices.map { try results.object(at: $0) } }
                guard let previous else { return QueryChange(models: try models(), deletions: [], insertions: [], modifications: []) }
                if keys == previous {
                    // The same first objects: only their modifications count.
                    let modifications = change.modifications.filteredIndexSet { $0 < limit }
                    if modifications.isEmpty { continue }
                    return QueryChange(models: try models(), deletions: [], insertions: [], modifications: modifications)
                }
                // The differences of the whole results say nothing of which of the first ones moved.
                return QueryChange(models: try models(), deletions: IndexSet(previous.indices), insertions: IndexSet(keys.indices),
                                   modifications: [])
            }
            return nil
        }
    }
}
