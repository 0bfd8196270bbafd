/// The file store's aggregates as a ``ModelStore`` offers them: ``Results``' own (read from the
/// stored records or an index, without making models), or, when the query's limit cuts the
/// results, ``ValueAggregation`` over the values of its first objects.
extension Store {
    /// ``Results/values(_:)`` of the results of `query`, cut to its limit.
    public nonisolated(nonsending) func fetchValues<Model: Persistable, Value: RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> [Value] {
        try limitedValues(query, property)
    }

    /// ``Results/distinct(_:)`` of the results of `query`.
    public nonisolated(nonsending) func fetchDistinct<Model: Persistable, Value: Hashable & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> [Value] {
        try aggregate(query, property, whole: { try $0.distinct(property) }, cut: { values, _ in ValueAggregation.distinct(values) })
    }

    /// ``Results/min(_:)-(KeyPath<Model,Value>)`` of the results of `query`.
    public nonisolated(nonsending) func fetchMin<Model: Persistable, Value: Comparable & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> Value? {
        try aggregate(query, property, whole: { try $0.min(property) }, cut: { values, _ in ValueAggregation.least(values) })
    }

    /// ``Results/min(_:)-(KeyPath<Model,Value?>)`` of the results of `query`.
    public nonisolated(nonsending) func fetchMin<Model: Persistable, Value: Comparable & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value?>
    ) async throws -> Value? {
        try aggregate(query, property, whole: { try $0.min(property) }, cut: { values, _ in ValueAggregation.least(values.compactMap { $0 }) })
    }

    /// ``Results/max(_:)-(KeyPath<Model,Value>)`` of the results of `query`.
    public nonisolated(nonsending) func fetchMax<Model: Persistable, Value: Comparable & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> Value? {
        try aggregate(query, property, whole: { try $0.max(property) }, cut: { values, _ in ValueAggregation.greatest(values) })
    }

    /// ``Results/max(_:)-(KeyPath<Model,Value?>)`` of the results of `query`.
    public nonisolated(nonsending) func fetchMax<Model: Persistable, Value: Comparable & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value?>
    ) async throws -> Value? {
        try aggregate(query, property, whole: { try $0.max(property) }, cut: { values, _ in ValueAggregation.greatest(values.compactMap { $0 }) })
    }

    /// ``Results/sum(_:)-(KeyPath<Model,Value>)`` of the results of `query`.
    public nonisolated(nonsending) func fetchSum<Model: Persistable, Value: AdditiveArithmetic & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> Value {
        try aggregate(query, property, whole: { try $0.sum(property) }, cut: { values, name in
            try ValueAggregation.sum(values, typeName: name.typeName, property: name.property)
        })
    }

    /// ``Results/sum(_:)-(KeyPath<Model,Value?>)`` of the results of `query`.
    public nonisolated(nonsending) func fetchSum<Model: Persistable, Value: AdditiveArithmetic & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value?>
    ) async throws -> Value {
        try aggregate(query, property, whole: { try $0.sum(property) }, cut: { values, name in
            try ValueAggregation.sum(values.compactMap { $0 }, typeName: name.typeName, property: name.property)
        })
    }

    /// `Results.average(_:)` of the integers of the results of `query`.
    public nonisolated(nonsending) func fetchAverage<Model: Persistable, Value: BinaryInteger & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> Double? {
        try aggregate(query, property, whole: { try $0.average(property) }, cut: { values, name in
            try ValueAggregation.average(values, typeName: name.typeName, property: name.property)
        })
    }

    /// The average of the non-`nil` integers of `property` in the results of `query`.
    public nonisolated(nonsending) func fetchAverage<Model: Persistable, Value: BinaryInteger & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value?>
    ) async throws -> Double? {
        try aggregate(query, property, whole: { try $0.average(property) }, cut: { values, name in
            try ValueAggregation.average(values.compactMap { $0 }, typeName: name.typeName, property: name.property)
        })
    }

    /// The average of the floating-point `property` in the results of `query`.
    public nonisolated(nonsending) func fetchAverage<Model: Persistable, Value: BinaryFloatingPoint & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) async throws -> Double? {
        try aggregate(query, property, whole: { try $0.average(property) }, cut: { values, _ in ValueAggregation.average(values) })
    }

    /// The average of the non-`nil` floating-point values of `property` in the results of `query`.
    public nonisolated(nonsending) func fetchAverage<Model: Persistable, Value: BinaryFloatingPoint & RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value?>
    ) async throws -> Double? {
        try aggregate(query, property, whole: { try $0.average(property) }, cut: { values, _ in ValueAggregation.average(values.compactMap { $0 }) })
    }

    // MARK: Implementation

    /// `whole` of the results of `query` when its limit keeps them all; otherwise `cut` of the
    /// values of `property` in its first objects, given the names an overflow error reports.
    private func aggregate<Model: Persistable, Value: RecordPrimitive, Answer>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>,
        whole: (Results<Model>) throws -> Answer, cut: ([Value], (typeName: String, property: String)) throws -> Answer
    ) throws -> Answer {
        let results = try results(of: query)
        guard let limit = query.limit, limit < results.count else { return try whole(results) }
        let name = try results.storedProperty(property).name
        return try cut(Array(try results.values(property).prefix(limit)), (results.source.plan.typeName, name))
    }

    private func limitedValues<Model: Persistable, Value: RecordPrimitive>(
        _ query: ModelQuery<Model>, _ property: KeyPath<Model, Value>
    ) throws -> [Value] {
        let values = try results(of: query).values(property)
        guard let limit = query.limit, limit < values.count else { return values }
        return Array(values.prefix(limit))
    }
}
