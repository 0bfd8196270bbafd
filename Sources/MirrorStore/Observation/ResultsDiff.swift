import Foundation
import MirrorStoreEngine

/// The differences between two orderings of keys, each key with a fingerprint of its stored
/// value, as deletions, insertions and modifications.
///
/// Keys in both whose relative order is kept (the longest run of them in increasing old
/// position, in new order) stay; the other common keys moved, and are deleted and inserted, so
/// that applying deletions then insertions to the old order gives the new one exactly.
struct ResultsDiff {
    var deletions = IndexSet()
    var insertions = IndexSet()
    var modifications = IndexSet()

    var isEmpty: Bool { deletions.isEmpty && insertions.isEmpty && modifications.isEmpty }

    init(old: [(key: StorageKey, fingerprint: Int)], new: [(key: StorageKey, fingerprint: Int)]) {
        var oldPositions: [StorageKey: Int] = [:]
        oldPositions.reserveCapacity(old.count)
        for (position, entry) in old.enumerated() { oldPositions[entry.key] = position }
        // New positions of the keys in both, and their old positions, in new order.
        var common: [(new: Int, old: Int)] = []
        var present = Set<StorageKey>()
        present.reserveCapacity(new.count)
        for (position, entry) in new.enumerated() {
            present.insert(entry.key)
            if let oldPosition = oldPositions[entry.key] {
                common.append((position, oldPosition))
            } else {
                insertions.insert(position)
            }
        }
        for (position, entry) in old.enumerated() where !present.contains(entry.key) {
            deletions.insert(position)
        }
        let staying = Self.longestIncreasingRun(common.map(\.old))
        for (index, pair) in common.enumerated() {
            if staying.contains(index) {
                if old[pair.old].fingerprint != new[pair.new].fingerprint { modifications.insert(pair.new) }
            } else {
                deletions.insert(pair.old)
                insertions.insert(pair.new)
            }
        }
    }

    /// The indices into `values` of one longest strictly increasing subsequence (patience
    /// sorting, O(n log n)).
    static func longestIncreasingRun(_ values: [Int]) -> Set<Int> {
        var tails: [Int] = []          // indices into values: tails[k] ends a run of length k + 1
        var previous = [Int](repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            var low = 0, high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var run = Set<Int>()
        var current = tails.last ?? -1
        while current >= 0 {
            run.insert(current)
            current = previous[current]
        }
        return run
    }
}
