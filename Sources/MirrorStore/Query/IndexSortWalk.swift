import Foundation
import MirrorStoreEngine

/// Results that an index range answers exactly, sorted by another index, read by walking the
/// sort index in the sort's direction and keeping the objects that satisfy the filter, until as
/// many as are asked for are found. The first twenty of a filter that keeps a share `s` of the
/// objects then read about `20 / s` entries of the sort index and test as many records, where
/// reading the range and sorting it reads every object in the range (SQLite chooses between the
/// two the same way, by their estimated costs: see ``IndexSortWalk/isCheaper(matches:objects:)``).
///
/// The walk gives the order the sort of the range gives: the sort index holds one entry per
/// object (a single-valued property, `nil` as the least key), its groups of equal values come
/// in object-key order either way (see `IndexPositions`), and a sort of records keeps equal
/// values in the key order the range's rows had. Reading every result (``objects(sortingRange:)``),
/// or reading on past as many positions as the range holds, reads the range and sorts it instead
/// (what each read's `sortingRange` gives), which costs no more than sorting it at first. Only
/// filters that compile to tests on stored bytes (``ByteConditions``) are walked: those an index
/// range answers exactly do, and a test then needs no model type.
final class IndexSortWalk: Sendable {
    /// The filter's range, which the index answering it counts.
    let range: IndexRange
    /// The sort, by the walked index's property.
    let sortKey: RecordSortKey
    /// The number of results: the range's count, known without walking.
    var count: Int { range.count }
    /// The sort index by position, in the sort's direction.
    private let positions: IndexPositions
    /// The filter's conditions, compiled to a ``ByteConditions`` for each batch tested: a
    /// compiled program is not `Sendable`, so the walk cannot keep one.
    private let conditions: [(QueryNode, PredicateExpressions.VariableID)]
    private let schema: ObjectSchema
    /// The records tested.
    private let values: TypeValues
    private let state: Lock<State>

    private struct State: Sendable {
        /// The results found so far, in order.
        var found = FoundKeys.reading()
        /// How many positions of the sort index were tested.
        var walked = 0
        /// Every result, once read at once.
        var all: FoundKeys?
    }

    /// Results a walk of `positions` (the index of `sortKey`'s property) finds: the objects of
    /// `range`, those of `values` whose records satisfy `conditions`; nil when the conditions do
    /// not compile to tests on stored bytes.
    init?(range: IndexRange, sortKey: RecordSortKey, positions: IndexPositions,
          conditions: [(QueryNode, PredicateExpressions.VariableID)], schema: ObjectSchema, values: TypeValues) {
        guard ByteConditions(conditions: conditions, schema: schema) != nil else { return nil }
        self.range = range
        self.sortKey = sortKey
        self.positions = positions
        self.conditions = conditions
        self.schema = schema
        self.values = values
        state = Lock(State())
    }

    /// How many results a reader is assumed to want when the walk is chosen: a screen.
    static let screen = 20

    /// Whether walking an index of `objects` entries for a screen of results that `matches` of
    /// them satisfy is expected to test fewer records than the range holds (each of which the
    /// sort reads, and then sorts): `screen × objects / matches < matches`.
    static func isCheaper(matches: Int, objects: Int) -> Bool {
        guard matches > IndexRange.listedAtOnce, objects > 0 else { return false }
        return screen.multipliedFullWidth(by: objects) < matches.multipliedFullWidth(by: matches)
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

    /// Walks on until `wanted` results are found or the index ends, testing a batch of positions
    /// at a time: the expected number for what is missing, at least twice the last batch's. Once
    /// the walk has tested more records than the range holds, the range is sorted instead.
    private func walk(_ state: inout State, toFind wanted: Int, _ sortingRange: () throws -> FoundKeys) throws {
        var batch = 0
        while state.found.keys.count < wanted, state.walked < positions.count {
            if state.walked > count {
                state.all = try sortingRange()
                return
            }
            let missing = wanted - state.found.keys.count
            let expected = missing.multipliedReportingOverflow(by: positions.count).partialValue / Swift.max(count, 1) + 1
            batch = Swift.min(Swift.max(expected + expected / 4, 2 * batch, 16), positions.count - state.walked)
            try positions.readAhead(state.walked + batch)
            var keys: [StorageKey] = []
            keys.reserveCapacity(batch)
            for position in state.walked..<(state.walked + batch) {
                guard let key = try positions.object(at: position) else { break }
                keys.append(key)
            }
            state.walked += batch
            guard let tests = ByteConditions(conditions: conditions, schema: schema) else { return }
            state.found.append(contentsOf: try tests.matching(keys, in: values))
        }
    }
}
