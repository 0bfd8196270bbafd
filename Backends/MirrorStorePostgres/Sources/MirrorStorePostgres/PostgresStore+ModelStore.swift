import Foundation
import MirrorStore

/// The PostgreSQL store as a ``MirrorStore/ModelStore``: code written against the protocol runs
/// on it as on MirrorStore's file store. `write(isolation:_:)` and `close()` are the store's own;
/// the rest forwards to its API.
extension PostgresStore: ModelStore {
    /// The object of `type` under `primaryKey`: ``object(_:primaryKey:isolation:)`` in the
    /// caller's isolation.
    public nonisolated(nonsending) func object<Model: Persistable>(_ type: Model.Type, primaryKey: some RecordPrimitive) async throws -> Model? {
        try await object(type, primaryKey: primaryKey, isolation: #isolation)
    }

    /// The objects `query` selects: ``objects(_:)`` with its filters, sorts and limit, read now.
    public nonisolated(nonsending) func fetch<Model: Persistable>(_ query: ModelQuery<Model>) async throws -> [Model] {
        try await results(of: query).all(isolation: #isolation)
    }

    /// How many objects `query` selects: `count(*)` when SQL decides every filter.
    public nonisolated(nonsending) func fetchCount<Model: Persistable>(_ query: ModelQuery<Model>) async throws -> Int {
        try await results(of: query).count(isolation: #isolation)
    }

    /// ``PostgresResults/changes`` of the results of `query`.
    public func changes<Model: Persistable>(_ query: ModelQuery<Model>) throws -> any AsyncSequence<QueryChange<Model>, any Error> {
        PostgresQueryChanges(changes: try results(of: query).changes)
    }

    /// ``PostgresResults/changes(keyPaths:)`` of the results of `query`.
    public func changes<Model: Persistable>(
        _ query: ModelQuery<Model>, keyPaths: [PartialKeyPath<Model>]
    ) throws -> any AsyncSequence<QueryChange<Model>, any Error> {
        PostgresQueryChanges(changes: try results(of: query).changes(keyPaths: keyPaths))
    }

    /// ``changes(_:primaryKey:)``, as a ``MirrorStore/ModelStore`` observes an object.
    public func changes<Model: Persistable>(
        of type: Model.Type, primaryKey: some RecordPrimitive
    ) throws -> any AsyncSequence<Model?, any Error> {
        try changes(type, primaryKey: primaryKey)
    }

    /// ``objects(_:)`` with the filters and sorts of `query`, in order, then its limit.
    func results<Model: Persistable>(of query: ModelQuery<Model>) throws -> PostgresResults<Model> {
        let results = try query.applyingSteps(to: objects(Model.self))
        return query.limit.map { results.prefix($0) } ?? results
    }
}

extension PostgresResults: ModelQueryResults {}
