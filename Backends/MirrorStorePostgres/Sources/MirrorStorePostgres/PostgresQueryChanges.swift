import Foundation
import MirrorStore

/// The `AsyncSequence` of ``PostgresStore``'s `ModelStore.changes(_:)`: its
/// ``PostgresResultsChanges`` as `QueryChange`s, whose first element, as the protocol has it,
/// holds no differences (this store's own counts every object an insertion).
struct PostgresQueryChanges<Model: Persistable>: AsyncSequence {
    typealias Element = QueryChange<Model>
    typealias Failure = any Error

    let changes: PostgresResultsChanges<Model>

    func makeAsyncIterator() -> Iterator { Iterator(base: changes.makeAsyncIterator()) }

    struct Iterator: AsyncIteratorProtocol {
        var base: PostgresResultsChanges<Model>.Iterator
        var isFirst = true

        mutating func next() async throws -> QueryChange<Model>? {
            guard let change = try await base.next() else { return nil }
            defer { isFirst = false }
            if isFirst { return QueryChange(models: change.results, deletions: [], insertions: [], modifications: []) }
            return QueryChange(models: change.results, deletions: change.deletions, insertions: change.insertions,
                               modifications: change.modifications)
        }
    }
}
