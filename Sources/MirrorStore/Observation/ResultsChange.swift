import Foundation

/// One element of ``Results/changes``: the results after a commit, and how they differ from the
/// previous element, as index sets a table or collection view can animate.
///
/// Apply `deletions` (indices in the previous results) to the previous results, then
/// `insertions` (indices in the new ``results``), and the previous results become the new
/// ones; an object that moved is deleted and inserted. `modifications` are indices in the new
/// results of objects that stayed in place and whose stored values changed.
public struct ResultsChange<Model: Persistable>: Sendable {
    /// The results as of the commit this change describes.
    public let results: Results<Model>
    /// Positions in the previous results of the objects no longer there (or moved).
    public let deletions: IndexSet
    /// Positions in ``results`` of the objects that were not there before (or moved).
    public let insertions: IndexSet
    /// Positions in ``results`` of the objects that stayed in place but changed.
    public let modifications: IndexSet
}
