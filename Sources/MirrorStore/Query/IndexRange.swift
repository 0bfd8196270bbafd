import MirrorStoreEngine

/// The objects in one range of a single-valued index, which answers a filter exactly: counted
/// from the index without collecting them, and collected only when a position is read (the
/// results keep both, see ``ResultsState``). Counting the matches of an indexed condition then
/// costs two searches of the index, and reading them all one walk of the range: neither pays for
/// the other. A class: results copy their rows on every read, and one reference is cheaper to
/// copy than the index, the names and both bounds.
final class IndexRange: Sendable {
    /// The index's engine name, and the property it orders by.
    let indexName: String
    let property: String
    private let index: IndexSnapshot
    private let lower: IndexBound?
    private let upper: IndexBound?

    init(index: IndexSnapshot, named indexName: String, property: String, lower: IndexBound?, upper: IndexBound?) {
        self.indexName = indexName
        self.property = property
        self.index = index
        self.lower = lower
        self.upper = upper
    }

    /// The number of objects in the range, counted in the index.
    var count: Int { index.count(from: lower, to: upper) }

    /// The objects in the index's order: by value, equal values in key order.
    var keysInIndexOrder: [StorageKey] { index.objects(from: lower, to: upper) }
}
