/// One secondary index of one engine state: the persisted runs of the last checkpoint that wrote
/// it (`IndexRun`, newest first), and in memory the entries added and removed since, as sorted
/// sets. An entry is in the index when the sources that add it outnumber those that remove it
/// (see `IndexRun`); without runs, `added` alone is the index.
struct SecondaryIndex: Sendable {
    private(set) var runs: [IndexRun] = []
    /// Entries added since the runs were written, none of which they hold.
    private(set) var added = OrderedIndex()
    /// Entries the runs hold that were removed since.
    private(set) var removed = OrderedIndex()
    /// Entries in the index.
    private(set) var count = 0

    init() {}

    /// An index of `entries`, in memory.
    init(entries: [IndexEntry]) {
        added = OrderedIndex(entries: entries)
        count = added.count
    }

    /// An index whose `count` entries lie in `runs`.
    init(runs: [IndexRun], count: Int) {
        self.runs = runs
        self.count = count
    }

    /// Whether entries changed since the runs were written.
    var hasChanges: Bool { added.count > 0 || removed.count > 0 }

    /// Adds `entry`, which the index does not hold.
    mutating func insert(_ entry: IndexEntry) {
        count += 1
        if removed.count > 0, removed.remove(entry) { return }
        added.insert(entry)
    }

    /// Adds `entries`, none of which the index holds: merged in one pass when they are many.
    mutating func insert(contentsOf entries: [IndexEntry]) {
        count += entries.count
        guard removed.count > 0 else {
            added.insert(contentsOf: entries)
            return
        }
        var fresh: [IndexEntry] = []
        fresh.reserveCapacity(entries.count)
        for entry in entries where !removed.remove(entry) { fresh.append(entry) }
        added.insert(contentsOf: fresh)
    }

    /// Removes `entry`, which the index holds (an entry that is not in memory is in a run).
    mutating func remove(_ entry: IndexEntry) {
        if added.remove(entry) {
            count -= 1
        } else if !runs.isEmpty {
            removed.insert(entry)
            count -= 1
        }
    }

    /// Whether `added` entries are many beside the index (more than an eighth of it): then one
    /// pass over the whole index checks them, which costs less than searching it for each.
    func takesInBulk(_ added: Int) -> Bool {
        added * 8 > count
    }

    /// The same entries with the changes and the `merged` newest runs written as the one run
    /// `run` (nil when they left no entry), in front of the older runs.
    func replacingRuns(_ merged: Int, with run: IndexRun?) -> SecondaryIndex {
        SecondaryIndex(runs: (run.map { [$0] } ?? []) + runs.dropFirst(merged), count: count)
    }

    // MARK: Reading

    private static func isBelow(_ bound: IndexBound) -> (IndexEntry) -> Bool {
        let key = bound.key
        return bound.isInclusive ? { IndexKey.order($0.key, key) < 0 } : { IndexKey.order($0.key, key) <= 0 }
    }

    private static func isNotAbove(_ bound: IndexBound) -> (IndexEntry) -> Bool {
        let key = bound.key
        return bound.isInclusive ? { IndexKey.order($0.key, key) <= 0 } : { IndexKey.order($0.key, key) < 0 }
    }

    /// Calls `body` with each entry between the bounds (`nil`: unbounded), in index order, until
    /// it returns `false`.
    func forEach(from lower: IndexBound?, to upper: IndexBound?, _ body: (IndexEntry) -> Bool) throws {
        let isBelow = lower.map(Self.isBelow) ?? { _ in false }
        let isNotAbove = upper.map(Self.isNotAbove) ?? { _ in true }
        if runs.isEmpty, removed.count == 0 {
            added.forEach(from: lower ?? IndexBound(.null, inclusive: true)) { entry in
                isNotAbove(entry) ? body(entry) : false
            }
            return
        }
        var cursors = try runs.map { try IndexCursor(run: $0, from: isBelow) }
        cursors.append(IndexCursor(memory: added, weight: 1, from: isBelow))
        cursors.append(IndexCursor(memory: removed, weight: -1, from: isBelow))
        var merge = IndexMerge(cursors, forward: true)
        while let (entry, weight) = try merge.next() {
            guard isNotAbove(entry) else { return }
            if weight > 0, !body(entry) { return }
        }
    }

    /// Calls `body` with each entry between the bounds, in reverse index order (from `upper`
    /// down), until it returns `false`.
    func forEachReversed(from upper: IndexBound?, to lower: IndexBound?, _ body: (IndexEntry) -> Bool) throws {
        let isBelow = lower.map(Self.isBelow) ?? { _ in false }
        let isNotAbove = upper.map(Self.isNotAbove) ?? { _ in true }
        var cursors = try runs.map { try IndexCursor(run: $0, through: isNotAbove) }
        cursors.append(IndexCursor(memory: added, weight: 1, through: isNotAbove))
        if removed.count > 0 { cursors.append(IndexCursor(memory: removed, weight: -1, through: isNotAbove)) }
        var merge = IndexMerge(cursors, forward: false)
        while let (entry, weight) = try merge.next() {
            guard !isBelow(entry) else { return }
            if weight > 0, !body(entry) { return }
        }
    }

    /// How many entries `isBelow` accepts (a prefix of the index), from the counts of the runs'
    /// blocks and of the memory, without visiting the entries.
    private func rank(_ isBelow: (IndexEntry) -> Bool) throws -> Int {
        var total = 0
        for run in runs { total += try run.netCount(below: isBelow) }
        total += added.firstEntryRank(notBelow: isBelow)
        if removed.count > 0 { total -= removed.firstEntryRank(notBelow: isBelow) }
        return total
    }

    /// How many entries lie between the bounds.
    func count(from lower: IndexBound?, to upper: IndexBound?) throws -> Int {
        let before = try lower.map { try rank(Self.isBelow($0)) } ?? 0
        let through = try upper.map { try rank(Self.isNotAbove($0)) } ?? count
        return max(0, through - before)
    }

    /// Whether the index holds `entry` and another object's entry with the same key.
    func holdsAnother(_ entry: IndexEntry) throws -> Bool {
        var holdsEntry = false
        var holdsOther = false
        let bound = IndexBound(entry.key, inclusive: true)
        try forEach(from: bound, to: bound) { found in
            if found.object == entry.object { holdsEntry = true } else { holdsOther = true }
            return !(holdsEntry && holdsOther)
        }
        return holdsEntry && holdsOther
    }

    /// The first key two objects share that a unique index refuses, if any.
    func firstDuplicate() throws -> IndexKey? {
        var previous: IndexEntry?
        var duplicate: IndexKey?
        try forEach(from: nil, to: nil) { entry in
            if let previous, previous.key == entry.key, entry.key.isUniquelyConstrained, previous.object != entry.object {
                duplicate = entry.key
                return false
            }
            previous = entry
            return true
        }
        return duplicate
    }
}

extension OrderedIndex {
    /// How many entries `isBelow` accepts (a prefix of the entries).
    func firstEntryRank(notBelow isBelow: (IndexEntry) -> Bool) -> Int {
        let (chunk, position) = firstEntry(notBelow: isBelow)
        var total = position
        for earlier in 0..<chunk { total += chunks[earlier].count }
        return total
    }
}
