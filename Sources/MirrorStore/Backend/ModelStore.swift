import Foundation

/// What every store of ``Persistable`` models offers, whatever keeps them: the seam between the
/// store API and its storage. ``Store`` (a file or in memory) and the PostgreSQL backend's
/// `PostgresStore` conform, and code written against it runs on either.
///
/// ```swift
/// func renameHulk<S: ModelStore>(in store: S) async throws -> [Hero] {
///     try await store.write { transaction in
///         try await transaction.update(Hero.self, primaryKey: 1) { $0.name = "Hulk" }
///     }
///     return try await store.fetch(ModelQuery(Hero.self).filter(#Predicate { $0.name == "Hulk" }))
/// }
/// ```
///
/// Every member is `async`, as a server is; a store that answers at once satisfies them with
/// its synchronous methods. Reads and write blocks run in the caller's isolation, so models that
/// are not `Sendable` stay where they were made.
public protocol ModelStore: AnyObject, Sendable {
    /// The writes of one ``write(isolation:_:)`` block.
    associatedtype Transaction: ModelWriteTransaction

    /// Runs `body` as one transaction: everything it writes is committed together when it
    /// returns, and nothing is when it throws (the error is rethrown as it was thrown). Reads
    /// through the transaction see its own writes.
    ///
    /// Call it as `try await store.write { transaction in … }`: the isolation is the caller's.
    ///
    /// - Throws: what `body` throws; ``StoreError`` (`.uniqueViolation`) when the writes would
    ///   give two objects the same value of a unique property; the store's own errors.
    func write<Result>(
        isolation: isolated (any Actor)?, _ body: (Transaction) async throws -> sending Result
    ) async throws -> sending Result

    /// The object of `type` stored under `primaryKey`, with the models it links to, or `nil`.
    ///
    /// - Throws: ``StoreError`` (`.unknownModel`, `.noPrimaryKey`, `.primaryKeyMismatch`).
    nonisolated(nonsending) func object<Model: Persistable>(_ type: Model.Type, primaryKey: some RecordPrimitive) async throws -> Model?

    /// The objects `query` selects, in its order.
    ///
    /// - Throws: ``StoreError`` (`.unknownModel`), ``QueryError`` for a predicate or sort the
    ///   store cannot run, what evaluating the predicate throws.
    nonisolated(nonsending) func fetch<Model: Persistable>(_ query: ModelQuery<Model>) async throws -> [Model]

    /// How many objects `query` selects.
    nonisolated(nonsending) func fetchCount<Model: Persistable>(_ query: ModelQuery<Model>) async throws -> Int

    /// The values of the stored property `property` in the objects `query` selects, in its
    /// order: what `fetch(query).map(property)` gives, read without making the models where the
    /// store can.
    ///
    /// - Throws: ``QueryError`` (`.unknownProperty`, `.ignoredProperty`) for a key path that is
    ///   no stored property; what ``fetch(_:)`` throws.
    nonisolated(nonsending) func fetchValues<Model: Persistable, Value: RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> [Value]

    /// The distinct values of `property` in the objects `query` selects, each once (as `Set`
    /// counts them), in the order of their first object.
    nonisolated(nonsending) func fetchDistinct<Model: Persistable, Value: Hashable & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> [Value]

    /// The least value of `property` in the objects `query` selects (the first of equal ones,
    /// NaN skipped), or `nil` when there is none: ``Results/min(_:)-(KeyPath<Model,Value>)``.
    nonisolated(nonsending) func fetchMin<Model: Persistable, Value: Comparable & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> Value?

    /// The least non-`nil` value of the optional `property`, or `nil` when there is none.
    nonisolated(nonsending) func fetchMin<Model: Persistable, Value: Comparable & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value?>
    ) async throws -> Value?

    /// The greatest value of `property` in the objects `query` selects (the first of equal ones,
    /// NaN skipped), or `nil` when there is none.
    nonisolated(nonsending) func fetchMax<Model: Persistable, Value: Comparable & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> Value?

    /// The greatest non-`nil` value of the optional `property`, or `nil` when there is none.
    nonisolated(nonsending) func fetchMax<Model: Persistable, Value: Comparable & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value?>
    ) async throws -> Value?

    /// The sum of `property` over the objects `query` selects, added in its order (`zero` for none).
    ///
    /// - Throws: ``QueryError`` (`.aggregateOverflow`) when a partial sum of integers leaves
    ///   `Value`'s range, where Swift's `+` would trap.
    nonisolated(nonsending) func fetchSum<Model: Persistable, Value: AdditiveArithmetic & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> Value

    /// The sum of the non-`nil` values of the optional `property`.
    nonisolated(nonsending) func fetchSum<Model: Persistable, Value: AdditiveArithmetic & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value?>
    ) async throws -> Value

    /// The mean of the integer `property` over the objects `query` selects (their sum as
    /// `Double` over their number), or `nil` when there are none.
    nonisolated(nonsending) func fetchAverage<Model: Persistable, Value: BinaryInteger & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> Double?

    /// The mean of the non-`nil` values of the optional integer `property`, or `nil` when there is none.
    nonisolated(nonsending) func fetchAverage<Model: Persistable, Value: BinaryInteger & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value?>
    ) async throws -> Double?

    /// The mean of the floating-point `property` over the objects `query` selects (summed in its
    /// order), or `nil` when there are none.
    nonisolated(nonsending) func fetchAverage<Model: Persistable, Value: BinaryFloatingPoint & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> Double?

    /// The mean of the non-`nil` values of the optional floating-point `property`, or `nil`.
    nonisolated(nonsending) func fetchAverage<Model: Persistable, Value: BinaryFloatingPoint & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value?>
    ) async throws -> Double?

    /// The objects `query` selects now, then again after every commit that changes them, with
    /// what changed. The first element holds the current objects and no differences; commits
    /// that arrive while the consumer is busy may coalesce into one element. Ending the
    /// consuming task ends the sequence, and so does closing the store.
    func changes<Model: Persistable>(_ query: ModelQuery<Model>) throws -> any AsyncSequence<QueryChange<Model>, any Error>

    /// ``changes(_:)`` that come only when the objects `query` selects are others or in another
    /// order, or a value at one of `keyPaths` changes in one of them: each a stored property,
    /// or a path through to-one links and embedded models (`\.publisher?.name`), whose change
    /// in the linked object is a modification of each object linking to it.
    ///
    /// - Throws: ``QueryError`` for a key path that is not a stored property, or that goes on
    ///   from a property that is not a to-one link or an embedded model.
    func changes<Model: Persistable>(
        _ query: ModelQuery<Model>, keyPaths: [PartialKeyPath<Model>]
    ) throws -> any AsyncSequence<QueryChange<Model>, any Error>

    /// The object of `type` under `primaryKey` now (`nil` when there is none), then again after
    /// every commit that changes it or a model it links to.
    func changes<Model: Persistable>(
        of type: Model.Type, primaryKey: some RecordPrimitive
    ) throws -> any AsyncSequence<Model?, any Error>

    /// Closes the store: later calls throw, and observations end.
    func close() async throws
}

extension ModelStore {
    /// Runs `body` as one transaction, in the caller's isolation: see ``write(isolation:_:)``.
    ///
    /// ```swift
    /// try await store.write { transaction in
    ///     try await transaction.add(hero)
    /// }
    /// ```
    @discardableResult
    public nonisolated(nonsending) func write<Result>(_ body: (Transaction) async throws -> sending Result) async throws -> sending Result {
        try await write(isolation: #isolation, body)
    }
}
