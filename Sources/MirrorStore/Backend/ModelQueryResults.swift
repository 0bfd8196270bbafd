import Foundation

/// Results a store narrows and orders with its own filter and sorts: what a ``ModelQuery``'s
/// steps are applied to (``ModelQuery/applyingSteps(to:)``), so every store reads a query's
/// steps the same way. ``Results`` conforms, and so does the PostgreSQL backend's.
public protocol ModelQueryResults {
    /// The model type the results hold.
    associatedtype Model: Persistable

    /// The results `predicate` holds for.
    func filter(_ predicate: Predicate<Model>) throws -> Self

    /// The results sorted by `descriptors`, the first deciding first.
    func sorted(using descriptors: [SortDescriptor<Model>]) throws -> Self

    /// The results sorted by the stored property `name`.
    func sorted(byProperty name: String, ascending: Bool) throws -> Self
}

extension ModelQuery {
    /// `results` with this query's filters and sorts applied in order; not its ``limit``, which
    /// each store applies its own way.
    ///
    /// - Throws: what the results' filter and sorts throw.
    public func applyingSteps<Results: ModelQueryResults>(to results: Results) throws -> Results where Results.Model == Model {
        var results = results
        for step in steps {
            switch step {
            case .filter(let predicate): results = try results.filter(predicate)
            case .sort(let descriptors): results = try results.sorted(using: descriptors)
            case .sortByProperty(let name, let ascending): results = try results.sorted(byProperty: name, ascending: ascending)
            }
        }
        return results
    }
}

extension Results: ModelQueryResults {}
