import Foundation
import MirrorStoreEngine

/// Results that an index range answers exactly, sorted by another index, read by walking the
/// sort index in the sort's direction and keeping the objects of the range, until as many as are
/// asked for are found. The first twenty of a filter that keeps a share `s` of the objects then
/// read about `20 / s` entries of the sort index, where reading the range and sorting it reads
/// every record in the range. An entry's object is kept either by testing its record's stored
/// bytes against the filter (a key lookup each), or by looking it up in the set of the range's
/// keys, listed from the filter's index first (an entry read each, no record): the first suits a
/// large range, whose screen is found after a few entries, the second a smaller one. SQLite
/// chooses between such plans the same way, by their estimated costs (``choice(matches:objects:testsBytes:)``).
///
/// The walk gives the order the sort of the range gives: the sort index holds one entry per
/// object (a single-valued property, `nil` as the least key), its groups of equal values come
/// in object-key order either way (see `IndexPositions`), and a sort of records keeps equal
/// values in the key order the range's rows had. Reading every result (``objects(sortingRange:)``),
/// or reading on until the walk cost what sorting the range costs, reads the range and sorts it
/// instead (what each read's `sortingRange` gives). Records are tested only for filters that
/// compile to tests on stored bytes (``ByteConditions``), which need no model type.
final class IndexSortWalk: Sendable {
    /// The filter's range, which the index answering it counts.
    let range: IndexRange
    /// The sort, by the walked index's property.
    let sortKey: RecordSortKey
    /// The number of results: the range's count, known without walking.
    var count: Int { range.count }
    /// The sort index by position, in the sort's direction.
    private let positions: IndexPositions
    /// The sort index, walked keeping the range's objects (``Membership/listingRange``).
    private let sortIndex: IndexSnapshot
    /// The filter's conditions, compiled to a ``ByteConditions`` for each batch tested: a
    /// compiled program is not `Sendable`, so the walk cannot keep one.
    private let conditions: [(QueryNode, PredicateExpressions.VariableID)]
    private let schema: ObjectSchema
    /// The records tested.
    private let values: TypeValues
    private let membership: Membership
    private let state: Lock<State>

    /// How an entry's object is found to be in the range.
    enum Membership: Sendable {
        /// Its record's stored bytes are tested against the filter.
        case testingRecords
        /// It is looked up in the set of the range's keys, by the bytes the sort index stores
        /// for it (``ObjectKeySet``, ``IndexMemberWalk``).
        case listingRange
    }

    private struct State: Sendable {
        /// The walk of the sort index keeping the range's objects, once they are listed
        /// (``Membership/listingRange``).
        var members: IndexMemberWalk?
        /// The results found so far, in order.
        var found = FoundKeys.reading()
        /// How many positions of the sort index were tested.
        var walked = 0
        /// Every result, once read at once.
        var all: FoundKeys?
    }

    /// Results a walk of `positions` (the index of `sortKey`'s property) finds: the objects of
    /// `range`, kept as `membership` says; with ``Membership/testingRecords``, those of `values`
    /// whose records satisfy `conditions` (which must compile to ``ByteConditions``).
    init(range: IndexRange, sortKey: RecordSortKey, sortIndex: IndexSnapshot, membership: Membership,
         conditions: [(QueryNode, PredicateExpressions.VariableID)], schema: ObjectSchema, values: TypeValues) {
        self.membership = membership
        self.range = range
        self.sortKey = sortKey
        self.sortIndex = sortIndex
        positions = sortIndex.positions(ascending: sortKey.ascending)
        self.conditions = conditions
        self.schema = schema
        self.values = values
        state = Lock(State())
    }

    /// How many results a reader is assumed to want when the walk is chosen: a screen.
    static let screen = 20

    /// The walk expected to cost least for a screen of results that `matches` of an index of
    /// `objects` entries satisfy, beside sorting the range; nil when the sort costs least (or the
    /// range is small enough to be listed when made). The costs, in units of an index entry read,
    /// are relative weights that instruction counts of the three gave: a record looked up,
    /// projected and sorted about 20; a record looked up and its bytes tested about 10; an entry
    /// listed into the set, or walked and looked up in it, about 1.
    static func choice(matches: Int, objects: Int, testsBytes: Bool) -> Membership? {
        guard matches > IndexRange.listedAtOnce, objects > 0 else { return nil }
        let walked = walkedForScreen(matches: matches, objects: objects)
        let sorting = sortCost(matches)
        let testing = testsBytes ? cost(walked, .testingRecords, matches: matches) : Int.max
        let listing = cost(walked, .listingRange, matches: matches)
        guard Swift.min(testing, listing) < sorting else { return nil }
        return testing <= listing ? .testingRecords : .listingRange
    }

    /// The entries a walk is expected to read for a screen: `screen × objects / matches`.
    private static func walkedForScreen(matches: Int, objects: Int) -> Int {
        Swift.min(objects, screen.multipliedReportingOverflow(by: objects).partialValue / Swift.max(matches, 1))
    }

    private static func sortCost(_ matches: Int) -> Int { 20 &* matches }

    /// What a walk of `walked` entries costs, with a range of `matches` objects.
    private static func cost(_ walked: Int, _ membership: Membership, matches: Int) -> Int {
        switch membership {
        case .testingRecords: 10 &* walked
        case .listingRange: matches &+ walked
        }
    }

    /// The object at `position` and where its record lies, or nil when `position` is not in
    /// `0..<count`. `sortingRange` gives every result in order, read another way (the range
    /// sorted), should the walk go on too long.
    func object(at position: Int, sortingRange: () throws -> FoundKeys) throws -> (key: StorageKey, location: ValueLocation?)? {
        guard position >= 0, position < count else { return nil }
        return try state.withLock { state in
            if state.all == nil, state.found.keys.count <= position { try walk(&state, toFind: position + 1, sortingRange) }
            let found = state.all ?? state.found
            guard position < found.keys.count else { return nil }
            return (found.keys[position], found.location(at: position))
        }
    }

    /// Finds the first `count` results now: for a reader that knows how many it will read.
    func readAhead(_ count: Int, sortingRange: () throws -> FoundKeys) throws {
        guard count > 0 else { return }
        try state.withLock { state in
            if state.all == nil, state.found.keys.count < count { try walk(&state, toFind: Swift.min(count, self.count), sortingRange) }
        }
    }

    /// Every result, in order: `sortingRange()`, unless the walk found them all.
    func objects(sortingRange: () throws -> FoundKeys) throws -> FoundKeys {
        try state.withLock { state in
            if let all = state.all { return all }
            if state.found.keys.count == count { return state.found }
            let all = try sortingRange()
            state.all = all
            return all
        }
    }

    /// Walks on until `wanted` results are found or the index ends, a batch of positions at a
    /// time: the expected number for what is missing, at least twice the last batch's. Once the
    /// walk has cost more than sorting the range would have, the range is sorted instead.
    private func walk(_ state: inout State, toFind wanted: Int, _ sortingRange: () throws -> FoundKeys) throws {
        var batch = 0
        while state.found.keys.count < wanted, state.walked < positions.count {
            if Self.cost(state.walked, membership, matches: count) > Self.sortCost(count) {
                state.all = try sortingRange()
                return
            }
            let missing = wanted - state.found.keys.count
            let expected = missing.multipliedReportingOverflow(by: positions.count).partialValue / Swift.max(count, 1) + 1
            batch = Swift.min(Swift.max(expected + expected / 4, 2 * batch, 16), positions.count - state.walked)
            switch membership {
            case .testingRecords:
                try positions.readAhead(state.walked + batch)
                var keys: [StorageKey] = []
                keys.reserveCapacity(batch)
                for position in state.walked..<(state.walked + batch) {
                    guard let key = try positions.object(at: position) else { break }
                    keys.append(key)
                }
                state.walked += batch
                guard let tests = ByteConditions(conditions: conditions, schema: schema) else {
                    state.all = try sortingRange()
                    return
                }
                state.found.append(contentsOf: try tests.matching(keys, in: values))
            case .listingRange:
                if state.members == nil { state.members = sortIndex.memberWalk(ascending: sortKey.ascending, members: try range.objectKeySet) }
                guard var members = state.members else { return }
                let found = try members.next(reading: batch)
                state.members = members
                // Read to the end of a group of equal keys, a walk may read more than the batch.
                state.walked = members.isComplete ? positions.count : members.walked
                state.found.append(contentsOf: FoundKeys(found))
            }
        }
    }
}
