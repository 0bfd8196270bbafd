import MirrorStoreEngine

/// The keys of a ``Results``, in order, found in one of five ways.
enum ResultsRows: Sendable {
    /// Every object of the type, in key order (sorted on first positional read).
    case all
    /// Keys found by a query, in result order.
    case keys(FoundKeys)
    /// A whole index, in its order: a sort by an indexed property, read lazily.
    case index(IndexPositions)
    /// A range of a single-valued index that answers the filter exactly, in key order (sorted on
    /// first positional read).
    case range(IndexRange)
    /// Such a range sorted by another index: that index walked in order, keeping the range's
    /// objects, as far as positions are read.
    case walk(IndexSortWalk)
}

/// Keys found by a query, in result order, with where each record lies in the snapshot of the
/// results when the query read the record to test it: reading the results takes each such record
/// from its location rather than looking its key up again, so a record the query matched is
/// found once.
struct FoundKeys: Sendable {
    private(set) var keys: [StorageKey]
    /// One per key, or nil when the keys were found without reading their records (an index
    /// that answers the filter exactly, an index's order, a sort of models).
    private var locations: [ValueLocation]?

    /// Keys found without reading their records.
    init(_ keys: [StorageKey]) {
        self.keys = keys
        locations = nil
    }

    /// No keys yet, to which a pass over records appends those it matched, with their locations;
    /// room for `capacity` of them.
    static func reading(capacity: Int = 0) -> FoundKeys {
        var found = FoundKeys([])
        found.keys.reserveCapacity(capacity)
        found.locations = []
        found.locations?.reserveCapacity(capacity)
        return found
    }

    mutating func append(_ key: StorageKey, at location: ValueLocation) {
        keys.append(key)
        locations?.append(location)
    }

    /// Appends `more`'s keys; their locations too when both have them, else none is kept.
    mutating func append(contentsOf more: FoundKeys) {
        keys.append(contentsOf: more.keys)
        if let moreLocations = more.locations { locations?.append(contentsOf: moreLocations) } else { locations = nil }
    }

    /// Where the record of the key at `position` lies, when the query read it.
    func location(at position: Int) -> ValueLocation? {
        locations?[position]
    }

    /// The keys at `positions`, in that order, with their locations.
    func picked(_ positions: [Int]) -> FoundKeys {
        var picked = FoundKeys(positions.map { keys[$0] })
        picked.locations = locations.map { locations in positions.map { locations[$0] } }
        return picked
    }
}

/// What one ``Results`` value holds besides its source: how it was found, and what reading it
/// learned since. Copies of the results (and their slices) share it; results made from them by
/// a filter or a sort have their own.
final class ResultsState: Sendable {
    let conditions: [QueryCondition]
    let rows: ResultsRows
    let plan: QueryPlan
    /// The filters and sorts that made these results from all objects of the type, in order.
    var steps: [ResultsStep] { sortingSteps ?? conditions.map { .filter($0) } }
    /// The steps, when a sort is among them; `nil` for results made by filters alone, whose
    /// steps are their conditions in order: most results, which then make no list of steps.
    let sortingSteps: [ResultsStep]?
    /// What reading learned, for rows that learn something: every object of the type, or a range
    /// that has not listed its one key or none (an equality on a unique value has, and is counted
    /// already); nil for the others, which then make no lock: one fewer object per query.
    private let learned: Lock<Learned>?

    private struct Learned: Sendable {
        /// The rows' keys in key order, for rows that are not kept in that order.
        var keysInKeyOrder: [StorageKey]?
        /// The number of rows, for rows that are counted rather than kept.
        var count: Int?
    }

    /// `sortingSteps`: as the property says, `nil` when `conditions` are the steps.
    init(conditions: [QueryCondition], rows: ResultsRows, plan: QueryPlan, sortingSteps: [ResultsStep]?) {
        self.conditions = conditions
        self.rows = rows
        self.plan = plan
        self.sortingSteps = sortingSteps
        switch rows {
        case .all: learned = Lock(Learned())
        case .range(let range): learned = range.listedInKeyOrder == nil ? Lock(Learned()) : nil
        case .keys, .index, .walk: learned = nil
        }
    }

    /// The rows' keys in key order: `sorted()` once, then kept (rows without a lock are asked
    /// only when their keys are in key order already).
    func keysInKeyOrder(_ sorted: () throws -> [StorageKey]) rethrows -> [StorageKey] {
        guard let learned else { return try sorted() }
        return try learned.withLock { learned in
            if let keys = learned.keysInKeyOrder { return keys }
            let keys = try sorted()
            learned.keysInKeyOrder = keys
            return keys
        }
    }

    /// The number of rows: the keys' count once they are collected, else `counted()` once
    /// (each time for rows without a lock, whose count is a stored one).
    func count(_ counted: () -> Int) -> Int {
        guard let learned else { return counted() }
        return learned.withLock { learned in
            if let count = learned.count ?? learned.keysInKeyOrder?.count { return count }
            let count = counted()
            learned.count = count
            return count
        }
    }
}
