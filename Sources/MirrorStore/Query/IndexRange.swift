import MirrorStoreEngine
import Synchronization

/// The objects in one range of a single-valued index, which answers a filter exactly: counted
/// from the index without collecting them, and put in primary-key order on first positional
/// read. Counting the matches of an indexed condition then costs two searches of the index, and
/// reading them all one walk of the range: neither pays for the other.
final class IndexRangeKeys: Sendable {
    /// The index's engine name, and the property it orders by.
    let indexName: String
    let property: String
    private let index: IndexSnapshot
    private let lower: IndexBound?
    private let upper: IndexBound?
    /// What was learned so far: a `Mutex`, not an `NSLock`, which is one more object to make
    /// and free per query.
    private let known = Mutex<(sorted: [StorageKey]?, counted: Int?)>((nil, nil))

    init(index: IndexSnapshot, named indexName: String, property: String, lower: IndexBound?, upper: IndexBound?) {
        self.indexName = indexName
        self.property = property
        self.index = index
        self.lower = lower
        self.upper = upper
    }

    /// The number of objects in the range: the keys' count once they are collected, else
    /// counted in the index (once: a collection's `endIndex` is read often).
    var count: Int {
        known.withLock { known in
            if let count = known.counted ?? known.sorted?.count { return count }
            let total = index.count(from: lower, to: upper)
            known.counted = total
            return total
        }
    }

    /// The objects in the index's order: by value, equal values in key order.
    var keysInIndexOrder: [StorageKey] { index.objects(from: lower, to: upper) }

    var keys: [StorageKey] {
        known.withLock { known in
            if let sorted = known.sorted { return sorted }
            let keys = keysInIndexOrder.sorted(by: StorageKey.precedes)
            known.sorted = keys
            return keys
        }
    }
}
