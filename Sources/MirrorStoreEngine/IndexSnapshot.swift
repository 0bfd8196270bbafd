import Synchronization

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
        try storage.forEach(from: lower, to: upper) { body($0) }
    }

    /// Calls `body` with each entry between the bounds in reverse index order, from `upper` down
    /// to `lower`, until it returns `false`.
    public func forEachReversed(from upper: IndexBound?, to lower: IndexBound?, _ body: (IndexEntry) -> Bool) throws {
        try storage.forEachReversed(from: upper, to: lower) { body($0) }
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
/// let first = try newest.object(at: 0)
/// ```
public final class IndexPositions: Sendable {
    private let index: SecondaryIndex
    /// Whether positions follow the index order, or its groups of equal keys in reverse.
    public let ascending: Bool
    /// The number of positions.
    public let count: Int
    private let read: Lock<Read>
    /// The objects a read ahead read (`FirstObjects`), published once and read without the lock:
    /// a prefix's positions are each read on their own, and the lock taken for each cost more
    /// than the read. 0 until published (IndexPositionsUnsafePublishing.swift).
    let firstObjectsWord = Atomic<UInt>(0)

    /// The entries read so far, their keys and objects apart: two arrays of 24-byte values stay
    /// under the kilobyte past which glibc gathers every freed small block on the next
    /// allocation, which one array of 48-byte entries passed at 21 (tens of thousands of
    /// instructions on each first read).
    struct Read {
        var keys: [IndexKey] = []
        var objects: [StorageKey] = []
        var isComplete: Bool
    }

    /// The first entries the index state's memo kept, if any, are read already.
    init(_ index: SecondaryIndex, ascending: Bool) {
        self.index = index
        self.ascending = ascending
        count = index.count
        read = Lock(index.positionsMemo?.read(ascending: ascending) ?? Read(isComplete: index.count == 0))
    }

    deinit {
        releaseFirstObjects()
    }

    /// The entry at `position`, or nil when `position` is not in `0..<count`.
    public func entry(at position: Int) throws -> IndexEntry? {
        try read(at: position) { IndexEntry(key: $0.keys[position], object: $0.objects[position]) }
    }

    /// The object of the entry at `position`, or nil when `position` is not in `0..<count`.
    public func object(at position: Int) throws -> StorageKey? {
        if let object = firstObject(at: position) { return object }
        return try read(at: position) { $0.objects[position] }
    }

    /// Reads the first `count` entries now (and the rest of the group of equal keys reached), no
    /// more: for a reader that knows how many positions it will ask for, such as a prefix, where
    /// reading on one position at a time reads ahead by a guess. The objects read so far are then
    /// read without the lock (those of the first read ahead only: later ones take it).
    public func readAhead(_ count: Int) throws {
        guard count > 0 else { return }
        let objects = try read(at: min(count, self.count) - 1, reading: count) { $0.objects }
        if let objects, !hasFirstObjects { publishFirstObjects(FirstObjects(objects)) }
    }

    /// What `take` reads of the entries once the one at `position` is read; nil when there is none.
    /// Reads at least `minimum` entries when it must read.
    private func read<Found>(at position: Int, reading minimum: Int = 32, _ take: (Read) -> Found) throws -> Found? {
        guard position >= 0, position < count else { return nil }
        return try read.withLock { state -> Found? in
            if state.objects.count <= position, !state.isComplete {
                repeat {
                    try extend(&state, toAtLeast: max(position + 1, 2 * state.objects.count, minimum))
                } while state.objects.count <= position && !state.isComplete
                index.positionsMemo?.offer(state, ascending: ascending)
            }
            return state.objects.count > position ? take(state) : nil
        }
    }

    /// Every entry's object, in position order.
    public func objects() throws -> [StorageKey] {
        try read.withLock { state in
            if !state.isComplete {
                try extend(&state, toAtLeast: Int.max)
                index.positionsMemo?.offer(state, ascending: ascending)
            }
            return state.objects
        }
    }

    /// Reads on from the last group read until `wanted` entries are read (and the group reached
    /// is complete) or the index ends. Entries go straight into `state`, which has room for
    /// `wanted` first: growing it entry by entry, and a group at a time through an array of its
    /// own, cost more than reading the index.
    private func extend(_ state: inout Read, toAtLeast wanted: Int) throws {
        let last = state.keys.last
        let room = min(wanted, count)
        state.keys.reserveCapacity(room)
        state.objects.reserveCapacity(room)
        // Moved out of `state` (left empty meanwhile, so that its arrays stay unshared) and
        // taken by closure literals: a local function's captures are checked for exclusive
        // access at run time, twice per entry.
        var collector = Collector(read: state, groupStart: state.keys.count, ascending: ascending, wanted: wanted)
        state = Read(isComplete: false)
        do {
            if ascending {
                try index.forEach(from: last.map { IndexBound($0, inclusive: false) }, to: nil) { collector.take($0) }
            } else {
                try index.forEachReversed(from: last.map { IndexBound($0, inclusive: false) }, to: nil) { collector.take($0) }
            }
        } catch {
            // Only whole groups stay read: the next read goes on after the last key read.
            collector.dropGroup()
            state = collector.read
            throw error
        }
        if collector.reachedEnd {
            collector.closeGroup()
            collector.read.isComplete = true
        }
        state = collector.read
    }

    /// Entries being read into `read`, a group of equal keys at a time.
    private struct Collector {
        var read: Read
        /// Where the group being read starts.
        var groupStart: Int
        let ascending: Bool
        let wanted: Int
        var reachedEnd = true

        init(read: Read, groupStart: Int, ascending: Bool, wanted: Int) {
            self.read = read
            self.groupStart = groupStart
            self.ascending = ascending
            self.wanted = wanted
        }

        mutating func take(_ entry: consuming IndexEntry) -> Bool {
            // Each entry's key is compared with the last one read, which is the group's: equal
            // keys are next to each other.
            if let last = read.keys.last, groupStart < read.keys.count, last != entry.key {
                if !ascending { closeGroup() }
                if read.keys.count >= wanted {
                    reachedEnd = false
                    return false
                }
                groupStart = read.keys.count
            }
            read.keys.append(entry.key)
            read.objects.append(entry.object)
            return true
        }

        /// Read backward, a group comes last object first: it is turned to object-key order.
        mutating func closeGroup() {
            if !ascending, read.keys.count - groupStart > 1 { read.objects[groupStart...].reverse() }
        }

        mutating func dropGroup() {
            read.keys.removeSubrange(groupStart...)
            read.objects.removeSubrange(groupStart...)
        }
    }
}
