import MirrorStoreEngine

/// The objects in one range of a single-valued index (a compound one too), which answers a
/// filter exactly: counted from the index without collecting them when the range is made (a
/// count may read a persisted run, which can fail, and `Results.count` cannot throw), and
/// collected only when a position is read (the results keep both, see ``ResultsState``).
/// Counting the matches of an indexed condition then costs two searches of the index, and
/// reading them all one walk of the range: neither pays for the other. A class: results copy
/// their rows on every read, and one reference is cheaper to copy than the index, the names and
/// both bounds.
final class IndexRange: Sendable {
    /// The index and the bounds, as the planner chose them: kept whole, not copied out of it.
    private let range: IndexAccess
    /// The index's engine name.
    var indexName: String { range.name }
    /// The properties with their kinds, as the plan gave them, by ``RecordSortKey/orderName``:
    /// the orders its entries follow in the range, its property's (or folded property's), or a
    /// compound index's properties after those its equalities fix (none when they fix them all).
    /// Kept whole, since a list of names made from them would be one more array per query.
    private let order: [(name: String, kind: PropertyKind)]
    var properties: [String] { order.map(\.name) }

    /// The number of objects in the range.
    let count: Int
    /// The objects of an equality range holding at most `listedAtOnce`: read in the walk that
    /// found them, so an equality on a selective value costs one search of the index rather than
    /// the two a count takes and a third to list them. Other ranges are counted, and listed when
    /// a position is read.
    private let listed: [StorageKey]?

    /// An equality range holding at most this many objects is listed when it is made.
    static let listedAtOnce = 64

    init(_ range: IndexAccess, order: [(name: String, kind: PropertyKind)]) throws {
        self.range = range
        self.order = order
        var keys: [StorageKey] = []
        let equality = range.equality
        if let equality {
            // A unique index holds at most one object under a key it constrains: the walk stops
            // at it rather than reading the next entry to find the range's end.
            let most = equality == .oneConstrainedKey && range.isUnique ? 1 : Self.listedAtOnce + 1
            try range.forEachObject { object in
                keys.append(object)
                return keys.count < most
            }
        }
        if equality != nil, keys.count <= Self.listedAtOnce {
            listed = keys
            count = keys.count
        } else {
            listed = nil
            count = try range.count()
        }
    }

    /// How a range holds one key's entries.
    enum Equality {
        /// One key that a unique index allows one object at most (not `nil`, nor a tuple with a
        /// `nil` in it: see `IndexKey.isUniquelyConstrained`).
        case oneConstrainedKey
        /// One key that several objects may hold, or the tuples of a compound index that start
        /// with the values its equalities fix (`(prefix)` up to `(prefix, greatest)`).
        case entries
    }

    /// Calls `body` with each entry of the range, in the index's order.
    func forEachEntry(_ body: (IndexEntry) -> Void) throws {
        try range.forEach { entry in
            body(entry)
            return true
        }
    }

    /// The objects of a range listed when it was made that holds one at most: in key order
    /// already, so results read them with no sort and nothing to keep; `nil` for other ranges.
    var listedInKeyOrder: [StorageKey]? {
        guard let listed, listed.count < 2 else { return nil }
        return listed
    }

    /// The objects in the index's order: by value, equal values in key order.
    var keysInIndexOrder: [StorageKey] { get throws { try listed ?? range.objects() } }

    /// The set of the objects, for testing many objects for membership by the bytes an index
    /// stores for them.
    var objectKeySet: ObjectKeySet {
        get throws {
            guard let listed else { return try range.objectKeySet(capacity: count) }
            var set = ObjectKeySet(capacity: listed.count)
            for key in listed { set.insert(key) }
            return set
        }
    }

    /// The objects in the index's order (`ascending`), or with its groups of equal values in
    /// reverse order, each group still in key order: a descending sort by the range's properties.
    func keysInIndexOrder(ascending: Bool) throws -> [StorageKey] {
        guard !ascending else { return try keysInIndexOrder }
        var entries: [IndexEntry] = []
        entries.reserveCapacity(count)
        try forEachEntry { entries.append($0) }
        var keys: [StorageKey] = []
        keys.reserveCapacity(entries.count)
        var end = entries.endIndex
        while end > 0 {
            var start = end - 1
            while start > 0, entries[start - 1].key == entries[end - 1].key { start -= 1 }
            for entry in entries[start..<end] { keys.append(entry.object) }
            end = start
        }
        return keys
    }
}
