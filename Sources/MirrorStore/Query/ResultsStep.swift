import Foundation

/// One filter or sort a ``Results`` was made with, kept so the same results can be made again
/// from a newer snapshot (``Results/changes``).
///
/// Not generic over the model: results keep a list of these, and a list of a generic type cost
/// every filter type-metadata lookups at run time.
enum ResultsStep: Sendable {
    case filter(QueryCondition)
    /// The `[SortDescriptor<Model>]` of the results' own model.
    case sort(any Sendable)
    case sortByProperty(String, ascending: Bool)
    /// A sort by a string property folded as the key says (``Results/sorted(by:options:order:)-(KeyPath<Model,String>,_,_)``).
    case sortFolded(RecordSortKey)
    /// Sort descriptors that name the model's own stored properties, kept as the keys they
    /// resolved to: such keys always sort on records, and keeping the descriptors themselves
    /// (copied, then freed with the results) cost a tenth of a sorted prefix.
    case sortOnRecords([RecordSortKey])
}
