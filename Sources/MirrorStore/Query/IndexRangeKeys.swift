import Foundation
import MirrorStoreEngine

/// The objects in one range of a single-valued index, which answers a filter exactly: counted
/// from the index without collecting them, and put in primary-key order on first positional
/// read. Counting the matches of an indexed condition then costs one walk of the range.
final class IndexRangeKeys: Sendable {
    let count: Int
    /// The index's engine name, and the property it orders by.
    let indexName: String
    let property: String
    private let index: IndexSnapshot
    private let lower: IndexBound?
    private let upper: IndexBound?
    private let lock = NSLock()
    private nonisolated(unsafe) var sorted: [StorageKey]?

    init(index: IndexSnapshot, named indexName: String, property: String, lower: IndexBound?, upper: IndexBound?) {
        self.indexName = indexName
        self.property = property
        self.index = index
        self.lower = lower
        self.upper = upper
        count = index.count(from: lower, to: upper)
    }

    /// The objects in the index's order: by value, equal values in key order.
    var keysInIndexOrder: [StorageKey] { index.objects(from: lower, to: upper) }

    var keys: [StorageKey] {
        lock.withLock {
            if let sorted { return sorted }
            let keys = keysInIndexOrder.sorted(by: StorageKey.precedes)
            sorted = keys
            return keys
        }
    }
}
