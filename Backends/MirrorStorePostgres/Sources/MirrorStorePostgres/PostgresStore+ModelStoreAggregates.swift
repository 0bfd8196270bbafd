import MirrorStore

/// The PostgreSQL store's aggregates as a ``MirrorStore/ModelStore`` offers them: those of
/// ``PostgresResults`` for the query (SQL's `min`, `max`, `sum` and `count` where SQL decides it),
/// in the caller's isolation.
extension PostgresStore {
    /// ``PostgresResults/values(_:isolation:)`` of the results of `query`.
    public nonisolated(nonsending) func fetchValues<Model: Persistable, Value: RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> [Value] {
        try await results(of: query).values(property, isolation: #isolation)
    }

    /// ``PostgresResults/distinct(_:isolation:)`` of the results of `query`.
    public nonisolated(nonsending) func fetchDistinct<Model: Persistable, Value: Hashable & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> [Value] {
        try await results(of: query).distinct(property, isolation: #isolation)
    }

    /// The least value of `property` in the results of `query`.
    public nonisolated(nonsending) func fetchMin<Model: Persistable, Value: Comparable & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> Value? {
        try await results(of: query).min(property, isolation: #isolation)
    }

    /// The least non-`nil` value of `property` in the results of `query`.
    public nonisolated(nonsending) func fetchMin<Model: Persistable, Value: Comparable & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value?>
    ) async throws -> Value? {
        try await results(of: query).min(property, isolation: #isolation)
    }

    /// The greatest value of `property` in the results of `query`.
    public nonisolated(nonsending) func fetchMax<Model: Persistable, Value: Comparable & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> Value? {
        try await results(of: query).max(property, isolation: #isolation)
    }

    /// The greatest non-`nil` value of `property` in the results of `query`.
    public nonisolated(nonsending) func fetchMax<Model: Persistable, Value: Comparable & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value?>
    ) async throws -> Value? {
        try await results(of: query).max(property, isolation: #isolation)
    }

    /// The sum of `property` over the results of `query`.
    public nonisolated(nonsending) func fetchSum<Model: Persistable, Value: AdditiveArithmetic & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> Value {
        try await results(of: query).sum(property, isolation: #isolation)
    }

    /// The sum of the non-`nil` values of `property` over the results of `query`.
    public nonisolated(nonsending) func fetchSum<Model: Persistable, Value: AdditiveArithmetic & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value?>
    ) async throws -> Value {
        try await results(of: query).sum(property, isolation: #isolation)
    }

    /// The average of the integer `property` over the results of `query`.
    public nonisolated(nonsending) func fetchAverage<Model: Persistable, Value: BinaryInteger & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> Double? {
        try await results(of: query).average(property, isolation: #isolation)
    }

    /// The average of the non-`nil` integers of `property` over the results of `query`.
    public nonisolated(nonsending) func fetchAverage<Model: Persistable, Value: BinaryInteger & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value?>
    ) async throws -> Double? {
        try await results(of: query).average(property, isolation: #isolation)
    }

    /// The average of the floating-point `property` over the results of `query`.
    public nonisolated(nonsending) func fetchAverage<Model: Persistable, Value: BinaryFloatingPoint & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> Double? {
        try await results(of: query).average(property, isolation: #isolation)
    }

    /// The average of the non-`nil` floating-point values of `property` over the results of `query`.
    public nonisolated(nonsending) func fetchAverage<Model: Persistable, Value: BinaryFloatingPoint & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value?>
    ) async throws -> Double? {
        try await results(of: query).average(property, isolation: #isolation)
    }
}
