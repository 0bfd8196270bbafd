import Foundation
import MirrorStoreEngine

/// The objects in one range of a single-valued index, which answers a filter exactly: counted
/// from the index without collecting them, and put in primary-key order on first positional
/// read. Counting the matches of an indexed condition then costs one walk of the range.
final class IndexRangeKeys: Sendable {
    let count: Int
    private let index: IndexSnapshot
    private let lower: IndexBound?
    private let upper: IndexBound?
    private let lock = NSLock()
    private nonisolated(unsafe) var sorted: [StorageKey]?

    init(index: IndexSnapshot, lower: IndexBound?, upper: IndexBound?) {
        self.index = index
        self.lower = lower
        self.upper = upper
        count = index.count(from: lower, to: upper)
    }

    var keys: [StorageKey] {
        lock.withLock {
            if let sorted { return sorted }
            let keys = index.objects(from: lower, to: upper).sorted(by: StorageKey.precedes)
            sorted = keys
            return keys
        }
    }
}
