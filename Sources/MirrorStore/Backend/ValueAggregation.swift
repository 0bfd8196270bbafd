/// The aggregates of ``Results`` computed on values already read, in the results' order, with
/// the same answers: for a backend that decides a query in Swift, or reads one property's values
/// and aggregates them itself.
///
/// ```swift
/// let ages = heroes.map(\.age)
/// let total = try ValueAggregation.sum(ages, typeName: "Hero", property: "age")
/// let oldest = ValueAggregation.greatest(ages)
/// ```
///
/// As on ``Results``: `least` and `greatest` skip NaN and keep the first of equal values; a sum of
/// integers that leaves its type's range at any step throws ``QueryError`` (`.aggregateOverflow`)
/// where Swift's `+` would trap; an average is the sum over the count as `Double`, `nil` for no
/// values.
public enum ValueAggregation {
    /// The least of `values` (the first of equal ones), skipping NaN; `nil` when there is none.
    public static func least<Value: Comparable>(_ values: some Sequence<Value>) -> Value? {
        extreme(values, least: true)
    }

    /// The greatest of `values` (the first of equal ones), skipping NaN; `nil` when there is none.
    public static func greatest<Value: Comparable>(_ values: some Sequence<Value>) -> Value? {
        extreme(values, least: false)
    }

    /// The sum of `values`, added in their order; `zero` when there are none.
    ///
    /// - Throws: ``QueryError`` (`.aggregateOverflow`, naming `typeName` and `property`) when a
    ///   partial sum of integers leaves `Value`'s range.
    public static func sum<Value: AdditiveArithmetic>(_ values: some Sequence<Value>, typeName: String, property: String) throws -> Value {
        try total(values, typeName: typeName, property: property).sum
    }

    /// The mean of `values` (their sum as `Double` over their number), or `nil` when there are none.
    ///
    /// - Throws: ``QueryError`` (`.aggregateOverflow`) when their sum leaves `Value`'s range.
    public static func average<Value: BinaryInteger>(_ values: some Sequence<Value>, typeName: String, property: String) throws -> Double? {
        let (sum, count) = try total(values, typeName: typeName, property: property)
        return count == 0 ? nil : Double(sum) / Double(count)
    }

    /// The mean of `values` (their sum in `Value`, added in order, as `Double`, over their
    /// number), or `nil` when there are none.
    public static func average<Value: BinaryFloatingPoint>(_ values: some Sequence<Value>) -> Double? {
        var sum = Value.zero
        var count = 0
        for value in values {
            sum += value
            count += 1
        }
        return count == 0 ? nil : Double(sum) / Double(count)
    }

    /// `values`, each once (as `Set` counts them), in the order of their first occurrence.
    public static func distinct<Value: Hashable>(_ values: some Sequence<Value>) -> [Value] {
        var seen = Set<Value>()
        return values.filter { seen.insert($0).inserted }
    }

    // MARK: Implementation

    private static func extreme<Value: Comparable>(_ values: some Sequence<Value>, least: Bool) -> Value? {
        var extreme = ExtremeValue<Value>(least: least)
        for value in values { extreme.offer(value) }
        return extreme.best
    }

    private static func total<Value: AdditiveArithmetic>(
        _ values: some Sequence<Value>, typeName: String, property: String
    ) throws -> (sum: Value, count: Int) {
        var sum = Value.zero
        var count = 0
        for value in values {
            guard let partial = checkedSum(sum, value) else {
                throw QueryError(.aggregateOverflow(typeName: typeName, property: property, type: "\(Value.self)"))
            }
            sum = partial
            count += 1
        }
        return (sum, count)
    }

    /// `left + right`, or `nil` where integers would overflow.
    private static func checkedSum<Value: AdditiveArithmetic>(_ left: Value, _ right: Value) -> Value? {
        guard let integer = left as? any FixedWidthInteger else { return left + right }
        return integerSum(integer, right) as? Value
    }

    private static func integerSum<Integer: FixedWidthInteger>(_ left: Integer, _ right: Any) -> Integer? {
        guard let right = right as? Integer else { return nil }
        let (sum, overflowed) = left.addingReportingOverflow(right)
        return overflowed ? nil : sum
    }
}
