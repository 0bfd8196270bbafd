import Foundation

/// Which objects of a model type to read, in what order and how many: what a ``ModelStore``
/// fetches, counts and observes.
///
/// ```swift
/// let query = ModelQuery(Hero.self)
///     .filter(#Predicate { $0.age >= 40 })
///     .sorted(using: SortDescriptor(\.name))
///     .prefix(10)
/// let veterans = try await store.fetch(query)
/// ```
///
/// Filters and sorts apply in the order they are given, as on ``Results``; the limit applies to
/// the filtered and sorted objects, wherever ``prefix(_:)`` stands in the chain.
public struct ModelQuery<Model: Persistable>: Sendable {
    /// One filter or sort of a query.
    public enum Step: Sendable {
        /// Keeps the objects `predicate` holds for.
        case filter(Predicate<Model>)
        /// Sorts by the descriptors, the first deciding first.
        case sort([SortDescriptor<Model>])
        /// Sorts by the stored property `name`.
        case sortByProperty(name: String, ascending: Bool)
    }

    /// The filters and sorts, in the order they apply.
    public private(set) var steps: [Step] = []
    /// At most how many objects the query selects; `nil` for all.
    public private(set) var limit: Int?

    /// Every object of `type`, in the store's order.
    public init(_ type: Model.Type = Model.self) {}

    /// The objects of this query that `predicate` holds for.
    public func filter(_ predicate: Predicate<Model>) -> ModelQuery {
        adding(.filter(predicate))
    }

    /// This query sorted by `descriptor`.
    public func sorted(using descriptor: SortDescriptor<Model>) -> ModelQuery {
        adding(.sort([descriptor]))
    }

    /// This query sorted by `descriptors`, the first deciding first.
    public func sorted(using descriptors: [SortDescriptor<Model>]) -> ModelQuery {
        adding(.sort(descriptors))
    }

    /// This query sorted by the stored property `name`.
    public func sorted(byProperty name: String, ascending: Bool = true) -> ModelQuery {
        adding(.sortByProperty(name: name, ascending: ascending))
    }

    /// At most the first `maxLength` objects of this query (a negative length counts as 0).
    public func prefix(_ maxLength: Int) -> ModelQuery {
        var query = self
        query.limit = Swift.min(Swift.max(maxLength, 0), limit ?? .max)
        return query
    }

    private func adding(_ step: Step) -> ModelQuery {
        var query = self
        query.steps.append(step)
        return query
    }
}
