import MirrorStoreEngine

/// A query that cannot be answered as written.
///
/// ```swift
/// do {
///     _ = try store.objects(Hero.self).filter(#Predicate { $0.cache.isEmpty })
/// } catch let error as QueryError {
///     print(error)   // Hero.cache is an ignored property, …
/// }
/// ```
public struct QueryError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What went wrong. New cases may be added; switch with a `default`.
    public enum Kind: Equatable, Sendable {
        /// The predicate or sort reads a property the model lists in `ignoredProperties`.
        case ignoredProperty(typeName: String, property: String)
        /// The sort key is a property whose values have no order (links, containers, data).
        case unsortableProperty(typeName: String, property: String, kind: String)
        /// A property named at run time does not exist on the model.
        case unknownProperty(typeName: String, property: String)
        /// A value given for a property named at run time does not fit its kind.
        case valueMismatch(typeName: String, property: String, expected: String, found: String)
        /// An ordering comparison (`<`, `<=`, `>`, `>=`) on a property whose values have no order,
        /// or with `nil`.
        case unorderedComparison(typeName: String, property: String, kind: String)
        /// A condition written as text does not follow the condition syntax; `offset` counts the
        /// characters before the mistake.
        case syntax(offset: Int, message: String)
        /// A condition written as text nests parentheses, negations or links of a property path
        /// deeper than `limit`.
        case nestingTooDeep(limit: Int)
        /// A sum of `property` does not fit its integer `type`, where adding the values in Swift
        /// would trap.
        case aggregateOverflow(typeName: String, property: String, type: String)
        /// Testing the object of `typeName` stored under `key` computes `expression` in `type`,
        /// which Swift's arithmetic traps on (an overflow, a division by zero): evaluating the
        /// predicate in Swift would stop the program there, so the query throws instead.
        case arithmeticTrap(typeName: String, key: String, expression: String, type: String)
        /// The projection type `projection` has a property `property` that the results' model
        /// `typeName` does not store as the same kind.
        case projectionMismatch(typeName: String, projection: String, property: String, reason: String)
    }

    /// What went wrong.
    public let kind: Kind

    /// An error of `kind`, for storage backends outside this package that refuse the same
    /// queries as the file store.
    ///
    /// ```swift
    /// throw QueryError(.unknownProperty(typeName: "Hero", property: "nickname"))
    /// ```
    public init(_ kind: Kind) { self.kind = kind }

    /// `key`: the record's key as errors spell it (``PrimaryKey/text(_:of:)``).
    init(_ trap: ArithmeticTrap, typeName: String, key: String) {
        kind = .arithmeticTrap(typeName: typeName, key: key, expression: trap.expression, type: trap.type)
    }

    /// One sentence explaining the error.
    public var description: String {
        switch kind {
        case .ignoredProperty(let typeName, let property):
            "\(typeName).\(property) is an ignored property, so it is not stored and a query cannot read it; remove it from ignoredProperties to query it."
        case .unsortableProperty(let typeName, let property, let kind):
            "\(typeName).\(property) holds \(kind) values, which have no order to sort by."
        case .unknownProperty(let typeName, let property):
            "\(typeName) has no stored property named \(property)."
        case .valueMismatch(let typeName, let property, let expected, let found):
            "\(typeName).\(property) holds \(expected) values, but the query compares it with \(found)."
        case .unorderedComparison(let typeName, let property, let kind):
            "\(typeName).\(property) holds \(kind) values, which <, <=, > and >= cannot compare (nor nil)."
        case .syntax(let offset, let message):
            "The condition has a syntax error at character \(offset): \(message)."
        case .nestingTooDeep(let limit):
            "The condition nests parentheses, negations or linked properties more than \(limit) levels deep."
        case .aggregateOverflow(let typeName, let property, let type):
            "The sum of \(typeName).\(property) over these results does not fit in \(type); sum a wider property, or fewer results."
        case .arithmeticTrap(let typeName, let key, let expression, let type):
            "Testing the \(typeName) with key \(key) computes \(expression) in \(type), which traps in Swift (an overflow or a division by zero), so the query throws instead."
        case .projectionMismatch(let typeName, let projection, let property, let reason):
            "\(projection).\(property) cannot be read from a \(typeName): \(reason)."
        }
    }
}
