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
    /// The first entries positional reads of this state read (`IndexPositions`), shared by its
    /// snapshots. A change of an entry gives the new state a copy changed to match, or none
    /// (`IndexPositionsMemo.changing`); the next snapshot then provides a fresh one.
    private(set) var positionsMemo: IndexPositionsMemo?

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
        positionsMemo = positionsMemo?.changing(entry, inserting: true)
        count += 1
        if removed.count > 0, removed.remove(entry) { return }
        added.insert(entry)
    }

    /// Adds `entries`, none of which the index holds: merged in one pass when they are many.
    mutating func insert(contentsOf entries: [IndexEntry]) {
        for entry in entries where positionsMemo != nil { positionsMemo = positionsMemo?.changing(entry, inserting: true) }
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
        } else {
            return
        }
        positionsMemo = positionsMemo?.changing(entry, inserting: false)
    }

    /// Gives this state a memo of its first positions, if it has none.
    mutating func providePositionsMemo() {
        if positionsMemo == nil { positionsMemo = IndexPositionsMemo() }
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

    /// The same index with `run` in front of its runs, holding the changes in memory and
    /// entries that change the count by `net` more (a streamed commit's, `StreamIndexSpill`).
    /// Absorbing the changes keeps each source holding an entry at most once, which merged
    /// reads count on: an entry a run adds again after the removed set took it once would
    /// otherwise be taken from that set twice.
    func absorbingChanges(into run: IndexRun?, net: Int) -> SecondaryIndex {
        SecondaryIndex(runs: (run.map { [$0] } ?? []) + runs, count: count + net)
    }

    /// Calls `body` with each entry added in memory (true) and removed (false).
    func forEachChange(_ body: (IndexEntry, Bool) throws -> Void) rethrows {
        for chunk in added.chunks { for entry in chunk { try body(entry, true) } }
        for chunk in removed.chunks { for entry in chunk { try body(entry, false) } }
    }

    // MARK: Reading

    /// Calls `body` with each entry between the bounds (`nil`: unbounded), in index order, until
    /// it returns `false`. Each entry is handed over, not lent: a reader that keeps it (as
    /// `IndexPositions` keeps every entry it reads) takes it without copying its key and object.
    func forEach(from lower: IndexBound?, to upper: IndexBound?, _ body: (consuming IndexEntry) -> Bool) throws {
        let below = lower.map(KeysBelow.init(before:)) ?? .noEntry
        let notAbove = upper.map(KeysBelow.init(through:)) ?? .everyEntry
        if runs.isEmpty, removed.count == 0 {
            added.forEach(from: lower ?? IndexBound(.null, inclusive: true)) { entry in
                notAbove.contains(entry) ? body(entry) : false
            }
            return
        }
        if let run = soleRun {
            try run.forEachEntry(after: below, through: notAbove, body)
            return
        }
        if let run = unmarkedSoleRun {
            try forEachOverRun(run, below, notAbove, body)
            return
        }
        try forEachMerged(below, notAbove, body)
    }

    /// `forEach` through a cursor on every source, merged an entry at a time: what any index
    /// reads, and the reference the routes beside it are tested against.
    func forEachMerged(_ below: KeysBelow, _ notAbove: KeysBelow, _ body: (consuming IndexEntry) -> Bool) throws {
        var merge = IndexMerge(try cursors(forward: true, below, notAbove), forward: true)
        while let (entry, weight) = try merge.next() {
            guard notAbove.contains(entry) else { return }
            if weight > 0, !body(entry) { return }
        }
    }

    /// `forEach` for a run without marks and the entries added and removed since (the index
    /// between two checkpoints): the run read by its own walk, each block visited once and its
    /// entries decoded where they lie, the memory's few entries merged in as it goes. Entries
    /// added are none the run holds, entries removed are all in it (`insert`, `remove`).
    func forEachOverRun(_ run: IndexRun, _ below: KeysBelow, _ notAbove: KeysBelow, _ body: (consuming IndexEntry) -> Bool) throws {
        var added = IndexCursor(memory: self.added, weight: 1, after: below)
        var removed = IndexCursor(memory: self.removed, weight: -1, after: below)
        var stopped = false
        try run.forEachEntry(after: below, through: notAbove) { entry in
            while let pending = added.current?.entry, IndexEntry.precedes(pending, entry) {
                added.advanceInMemory()
                guard body(pending) else {
                    stopped = true
                    return false
                }
            }
            while let gone = removed.current?.entry, IndexEntry.precedes(gone, entry) { removed.advanceInMemory() }
            if let gone = removed.current?.entry, gone == entry {
                removed.advanceInMemory()
                return true
            }
            guard body(entry) else {
                stopped = true
                return false
            }
            return true
        }
        guard !stopped else { return }
        // Past the run's last entry inside the bounds: the added entries still inside them.
        while let pending = added.current?.entry, notAbove.contains(pending) {
            added.advanceInMemory()
            guard body(pending) else { return }
        }
    }

    /// Calls `body` with the object of each entry between the bounds, in index order, until it
    /// returns `false`. A sole run is read without decoding its keys; any other index as `forEach`
    /// reads it.
    func forEachObject(from lower: IndexBound?, to upper: IndexBound?, _ body: (StorageKey) -> Bool) throws {
        if let run = soleRun {
            try run.forEachObject(after: lower.map(KeysBelow.init(before:)) ?? .noEntry,
                                  through: upper.map(KeysBelow.init(through:)) ?? .everyEntry, body)
            return
        }
        try forEach(from: lower, to: upper) { body($0.object) }
    }

    /// Calls `body` with each entry between the bounds, in reverse index order (from `upper`
    /// down), until it returns `false`; each entry handed over, as by `forEach`.
    func forEachReversed(from upper: IndexBound?, to lower: IndexBound?, _ body: (consuming IndexEntry) -> Bool) throws {
        let below = lower.map(KeysBelow.init(before:)) ?? .noEntry
        let notAbove = upper.map(KeysBelow.init(through:)) ?? .everyEntry
        if let run = soleRun {
            try run.forEachEntryReversed(through: notAbove, after: below, body)
            return
        }
        if let run = unmarkedSoleRun {
            try forEachReversedOverRun(run, below, notAbove, body)
            return
        }
        try forEachReversedMerged(below, notAbove, body)
    }

    /// `forEachReversed` through a cursor on every source: the reference of the routes beside it.
    func forEachReversedMerged(_ below: KeysBelow, _ notAbove: KeysBelow, _ body: (consuming IndexEntry) -> Bool) throws {
        var merge = IndexMerge(try cursors(forward: false, below, notAbove), forward: false)
        while let (entry, weight) = try merge.next() {
            guard !below.contains(entry) else { return }
            if weight > 0, !body(entry) { return }
        }
    }

    /// `forEachOverRun` backward.
    func forEachReversedOverRun(_ run: IndexRun, _ below: KeysBelow, _ notAbove: KeysBelow, _ body: (consuming IndexEntry) -> Bool) throws {
        var added = IndexCursor(memory: self.added, weight: 1, through: notAbove)
        var removed = IndexCursor(memory: self.removed, weight: -1, through: notAbove)
        var stopped = false
        try run.forEachEntryReversed(through: notAbove, after: below) { entry in
            while let pending = added.current?.entry, IndexEntry.precedes(entry, pending) {
                added.advanceInMemory()
                guard body(pending) else {
                    stopped = true
                    return false
                }
            }
            while let gone = removed.current?.entry, IndexEntry.precedes(entry, gone) { removed.advanceInMemory() }
            if let gone = removed.current?.entry, gone == entry {
                removed.advanceInMemory()
                return true
            }
            guard body(entry) else {
                stopped = true
                return false
            }
            return true
        }
        guard !stopped else { return }
        // Before the run's first entry inside the bounds: the added entries still inside them.
        while let pending = added.current?.entry, !below.contains(pending) {
            added.advanceInMemory()
            guard body(pending) else { return }
        }
    }

    /// The index's one source when it is a run without marks and nothing changed since: its
    /// entries are the index, read without merging.
    var soleRun: IndexRun? {
        runs.count == 1 && runs[0].hasNoMarks && added.count == 0 && removed.count == 0 ? runs[0] : nil
    }

    /// The index's one run when it holds no marks, whatever changed since: read by its own walk,
    /// with the entries in memory merged in (`forEachOverRun`).
    var unmarkedSoleRun: IndexRun? {
        runs.count == 1 && runs[0].hasNoMarks ? runs[0] : nil
    }

    /// A cursor on each source that holds entries, from `below` forward or from `notAbove` back.
    private func cursors(forward: Bool, _ below: KeysBelow, _ notAbove: KeysBelow) throws -> [IndexCursor] {
        var cursors = try runs.map { forward ? try IndexCursor(run: $0, after: below) : try IndexCursor(run: $0, through: notAbove) }
        for (set, weight) in [(added, 1), (removed, -1)] where set.count > 0 {
            cursors.append(forward ? IndexCursor(memory: set, weight: weight, after: below) : IndexCursor(memory: set, weight: weight, through: notAbove))
        }
        return cursors
    }

    /// How many entries lie in `below`, from the counts of the runs' blocks and of the memory,
    /// without visiting the entries.
    private func rank(_ below: KeysBelow) throws -> Int {
        var total = 0
        for run in runs { total += try run.netCount(below: below) }
        total += added.firstEntryRank(notBelow: below.contains)
        if removed.count > 0 { total -= removed.firstEntryRank(notBelow: below.contains) }
        return total
    }

    /// How many entries lie between the bounds.
    func count(from lower: IndexBound?, to upper: IndexBound?) throws -> Int {
        let before = try lower.map { try rank(KeysBelow(before: $0)) } ?? 0
        let through = try upper.map { try rank(KeysBelow(through: $0)) } ?? count
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
        // In memory alone (a store's first checkpoint interval): the entries read in place.
        if runs.isEmpty, removed.count == 0 { return added.firstSharedKey() }
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
