/// A secondary index as one snapshot saw it: read-only, and unchanged by later commits.
///
/// ```swift
/// let byName = try #require(snapshot.index(named: "Hero.name"))
/// let keys = byName.objects(from: IndexBound(.string("A"), inclusive: true),
///                           to: IndexBound(.string("B"), inclusive: false))
/// ```
public struct IndexSnapshot: Sendable {
    let storage: OrderedIndex
    /// Whether no two objects may hold the same non-null key.
    public let isUnique: Bool

    /// The number of entries (an object with several values, such as an array, has several).
    public var count: Int { storage.count }

    /// Calls `body` with each entry between the bounds (`nil`: unbounded), in index order, until
    /// it returns `false`.
    public func forEach(from lower: IndexBound?, to upper: IndexBound?, _ body: (IndexEntry) -> Bool) {
        let start = lower ?? IndexBound(.null, inclusive: true)
        storage.forEach(from: start) { entry in
            // One comparison per entry, where asking `<` both ways made two.
            if let upper {
                let order = IndexKey.order(entry.key, upper.key)
                if order > 0 || (order == 0 && !upper.isInclusive) { return false }
            }
            return body(entry)
        }
    }

    /// The keys of the objects with an entry between the bounds, in index order (an object with
    /// several matching values comes once per value).
    public func objects(from lower: IndexBound?, to upper: IndexBound?) -> [StorageKey] {
        var keys: [StorageKey] = []
        forEach(from: lower, to: upper) { entry in
            keys.append(entry.object)
            return true
        }
        return keys
    }

    /// How many entries lie between the bounds, without collecting them.
    public func count(from lower: IndexBound?, to upper: IndexBound?) -> Int {
        let before = lower.map { storage.rank(below: $0.key, orEqual: !$0.isInclusive) } ?? 0
        let through = upper.map { storage.rank(below: $0.key, orEqual: $0.isInclusive) } ?? count
        return max(0, through - before)
    }

    /// Positional access to every entry, in index order: for reading a prefix of a large ordered
    /// result without collecting all of it. Building one costs one step per 256 to 512 entries.
    public var positions: IndexPositions {
        IndexPositions(storage.chunks, starts: storage.chunkStarts?.value { IndexPositions.starts(of: storage.chunks) })
    }
}

/// Every entry of an index by position, in index order.
public struct IndexPositions: RandomAccessCollection, Sendable {
    private let chunks: [[IndexEntry]]
    /// `starts[i]` is the position of the first entry of `chunks[i]`; one more at the end.
    private let starts: [Int]

    /// `starts` when the index keeps them, else computed now.
    init(_ chunks: [[IndexEntry]], starts: [Int]?) {
        self.chunks = chunks
        self.starts = starts ?? Self.starts(of: chunks)
    }

    /// The position of each chunk's first entry, and one past the last entry.
    static func starts(of chunks: [[IndexEntry]]) -> [Int] {
        var starts: [Int] = []
        starts.reserveCapacity(chunks.count + 1)
        var position = 0
        // By index: iterating the chunks themselves retains and releases each one.
        for chunk in chunks.indices {
            starts.append(position)
            position += chunks[chunk].count
        }
        starts.append(position)
        return starts
    }

    /// The first position.
    public var startIndex: Int { 0 }
    /// One past the last position.
    public var endIndex: Int { starts.last ?? 0 }

    /// The entry at `position`, found with a binary search over the chunks.
    public subscript(position: Int) -> IndexEntry {
        var low = 0
        var high = chunks.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= position { low = middle } else { high = middle - 1 }
        }
        return chunks[low][position - starts[low]]
    }
}
