import Foundation

/// One element of ``ModelStore/changes(_:)``: the objects a query selects after a commit, and
/// how they differ from the previous element's, as index sets ready for a table view.
public struct QueryChange<Model: Persistable> {
    /// The objects the query selects now, in its order.
    public let models: [Model]
    /// Positions in the previous element's objects that are gone.
    public let deletions: IndexSet
    /// Positions in ``models`` that are new.
    public let insertions: IndexSet
    /// Positions in ``models`` of objects that were there before and changed.
    public let modifications: IndexSet

    /// A change holding `models`, with the differences a store found.
    public init(models: [Model], deletions: IndexSet, insertions: IndexSet, modifications: IndexSet) {
        self.models = models
        self.deletions = deletions
        self.insertions = insertions
        self.modifications = modifications
    }
}

extension QueryChange: Sendable where Model: Sendable {}
