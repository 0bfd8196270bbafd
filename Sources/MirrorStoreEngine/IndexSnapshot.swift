/// A secondary index as one snapshot saw it: read-only, and unchanged by later commits.
///
/// Reads may touch the index's persisted runs, whose blocks are checked as they are read, so
/// they throw `StorageError` for a damaged block.
///
/// ```swift
/// let byName = try #require(snapshot.index(named: "Hero.name"))
/// let keys = try byName.objects(from: IndexBound(.string("A"), inclusive: true),
///                               to: IndexBound(.string("B"), inclusive: false))
/// ```
public struct IndexSnapshot: Sendable {
    let storage: SecondaryIndex
    /// Whether no two objects may hold the same non-null key.
    public let isUnique: Bool

    /// The number of entries (an object with several values, such as an array, has several).
    public var count: Int { storage.count }

    /// Calls `body` with each entry between the bounds (`nil`: unbounded), in index order, until
    /// it returns `false`.
    public func forEach(from lower: IndexBound?, to upper: IndexBound?, _ body: (IndexEntry) -> Bool) throws {
        try storage.forEach(from: lower, to: upper, body)
    }

    /// Calls `body` with each entry between the bounds in reverse index order, from `upper` down
    /// to `lower`, until it returns `false`.
    public func forEachReversed(from upper: IndexBound?, to lower: IndexBound?, _ body: (IndexEntry) -> Bool) throws {
        try storage.forEachReversed(from: upper, to: lower, body)
    }

    /// Calls `body` with the object of each entry between the bounds, in index order, until it
    /// returns `false`: what `forEach` gives, without the keys (a run read alone then decodes none).
    public func forEachObject(from lower: IndexBound?, to upper: IndexBound?, _ body: (StorageKey) -> Bool) throws {
        try storage.forEachObject(from: lower, to: upper, body)
    }

    /// The keys of the objects with an entry between the bounds, in index order (an object with
    /// several matching values comes once per value).
    public func objects(from lower: IndexBound?, to upper: IndexBound?) throws -> [StorageKey] {
        var keys: [StorageKey] = []
        try forEachObject(from: lower, to: upper) { object in
            keys.append(object)
            return true
        }
        return keys
    }

    /// How many entries lie between the bounds, from the counts the index keeps, without
    /// visiting them.
    public func count(from lower: IndexBound?, to upper: IndexBound?) throws -> Int {
        try storage.count(from: lower, to: upper)
    }

    /// Every entry by position, in index order (`ascending`) or with the groups of equal keys in
    /// reverse order, each group still in object-key order: for reading a prefix of a large
    /// ordered result without collecting all of it.
    public func positions(ascending: Bool) -> IndexPositions {
        IndexPositions(storage, ascending: ascending)
    }
}

/// Every entry of an index by position, read from the index as far as the positions asked for
/// (and to the end of the group of equal keys reached), so that reading the first few of a large
/// index reads only those.
///
/// ```swift
/// let newest = index.positions(ascending: false)
/// let first = try newest.entry(at: 0)?.object
/// ```
public final class IndexPositions: Sendable {
    private let index: SecondaryIndex
    /// Whether positions follow the index order, or its groups of equal keys in reverse.
    public let ascending: Bool
    /// The number of positions.
    public let count: Int
    private let read: Lock<(entries: [IndexEntry], isComplete: Bool)>

    init(_ index: SecondaryIndex, ascending: Bool) {
        self.index = index
        self.ascending = ascending
        count = index.count
        read = Lock(([], index.count == 0))
    }

    /// The entry at `position`, or nil when `position` is not in `0..<count`.
    public func entry(at position: Int) throws -> IndexEntry? {
        guard position >= 0, position < count else { return nil }
        return try read.withLock { state -> IndexEntry? in
            while state.entries.count <= position, !state.isComplete {
                try extend(&state, toAtLeast: max(position + 1, 2 * state.entries.count, 32))
            }
            return state.entries.count > position ? state.entries[position] : nil
        }
    }

    /// Every entry's object, in position order.
    public func objects() throws -> [StorageKey] {
        try read.withLock { state in
            if !state.isComplete { try extend(&state, toAtLeast: Int.max) }
            return state.entries.map(\.object)
        }
    }

    /// Reads on from the last group read until `wanted` entries are read (and the group reached
    /// is complete) or the index ends.
    private func extend(_ state: inout (entries: [IndexEntry], isComplete: Bool), toAtLeast wanted: Int) throws {
        let last = state.entries.last?.key
        var group: [IndexEntry] = []
        var reachedEnd = true
        func take(_ entry: IndexEntry) -> Bool {
            if let first = group.first, first.key != entry.key {
                state.entries.append(contentsOf: ascending ? group : group.reversed())
                group.removeAll(keepingCapacity: true)
                if state.entries.count >= wanted {
                    reachedEnd = false
                    return false
                }
            }
            group.append(entry)
            return true
        }
        if ascending {
            try index.forEach(from: last.map { IndexBound($0, inclusive: false) }, to: nil, take)
        } else {
            try index.forEachReversed(from: last.map { IndexBound($0, inclusive: false) }, to: nil, take)
        }
        if reachedEnd {
            state.entries.append(contentsOf: ascending ? group : group.reversed())
            state.isComplete = true
        }
    }
}
