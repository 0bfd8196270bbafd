import Foundation

/// One filter or sort a ``Results`` was made with, kept so the same results can be made again
/// from a newer snapshot (``Results/changes``).
enum ResultsStep<Model: Persistable>: Sendable {
    case filter(QueryCondition)
    case sort([SortDescriptor<Model>])
    case sortByProperty(String, ascending: Bool)
}
