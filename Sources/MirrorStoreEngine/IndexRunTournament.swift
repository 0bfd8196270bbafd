/// Reads index runs whose entries are all live and distinct over the runs (a rewrite's, where
/// each object's entries lie in one run) as one, in index order, through a tournament tree of
/// their cursors: each entry costs about log2 of the runs' number in comparisons, where
/// `IndexMerge` compares it with every run's current entry and sums weights, so that a rewrite
/// can merge many runs in one pass rather than in tiers that write every entry once more each.
///
/// Each comparison looks at the entries' `IndexKey.sortPrefix` first, kept per cursor, and at
/// the entries themselves only where those tie. A mark, or an entry met twice, is damage: the
/// merge throws rather than giving a different index than `IndexMerge` would.
struct IndexRunTournament {
    private var cursors: [IndexCursor]
    /// Each cursor's current entry's sort prefix (`UInt64.max` once it ended, which a live
    /// entry's prefix can tie, so an ended cursor is also told by its nil `current`).
    private var prefixes: [UInt64]
    /// The tree over the cursors, leaves `count..<2 * count` standing for cursors `0..<count`:
    /// `losers[node]` is the cursor that lost the match at internal node `node`, `losers[0]`
    /// the overall winner, whose entry comes next.
    private var losers: [Int]
    /// The last entry given, which the next must follow.
    private var previous: IndexEntry?
    /// The log the runs lie in and where each run starts, named in errors.
    private let path: String
    private let starts: [UInt64]

    init(_ runs: [IndexRun]) throws {
        path = runs.first?.log.path ?? ""
        starts = runs.map { $0.blocks.offsets.first ?? 0 }
        cursors = try runs.map { try IndexCursor(run: $0, after: .noEntry) }
        prefixes = cursors.map { $0.current?.entry.key.sortPrefix ?? .max }
        let count = cursors.count
        losers = [Int](repeating: 0, count: max(1, count))
        guard count > 1 else { return }
        // Winners of each node, bottom up; each node keeps its loser.
        var winners = [Int](repeating: 0, count: 2 * count)
        for leaf in 0..<count { winners[count + leaf] = leaf }
        for node in stride(from: count - 1, through: 1, by: -1) {
            let left = winners[2 * node], right = winners[2 * node + 1]
            if beats(left, right) {
                winners[node] = left
                losers[node] = right
            } else {
                winners[node] = right
                losers[node] = left
            }
        }
        losers[0] = winners[1]
    }

    /// The next entry in index order, or nil once every run ended.
    ///
    /// - Throws: `StorageError` `.corrupted` when a run holds a mark or an entry comes twice or
    ///   out of order, or when a block cannot be read.
    mutating func next() throws -> IndexEntry? {
        guard !cursors.isEmpty else { return nil }
        let winner = losers[0]
        guard let (entry, weight) = cursors[winner].current.map({ ($0.entry, $0.weight) }) else { return nil }
        if weight != 1 || previous.map({ !IndexEntry.precedes($0, entry) }) == true {
            throw StorageError(.corrupted(
                path: path, offset: starts[winner],
                reason: "the index runs a rewrite merges hold a deletion mark or an entry twice, at \(entry.key)"))
        }
        previous = entry
        try cursors[winner].advance()
        prefixes[winner] = cursors[winner].current?.entry.key.sortPrefix ?? .max
        replay(from: winner)
        return entry
    }

    /// Plays cursor `leaf`'s new entry up the tree, from its leaf to the root.
    private mutating func replay(from leaf: Int) {
        var winner = leaf
        var node = (leaf + cursors.count) / 2
        while node >= 1 {
            let other = losers[node]
            if beats(other, winner) {
                losers[node] = winner
                winner = other
            }
            node /= 2
        }
        losers[0] = winner
    }

    /// Whether cursor `lhs`'s current entry comes before `rhs`'s; an ended cursor comes last,
    /// and of two ended ones the first.
    private func beats(_ lhs: Int, _ rhs: Int) -> Bool {
        if prefixes[lhs] != prefixes[rhs] { return prefixes[lhs] < prefixes[rhs] }
        guard let right = cursors[rhs].current else { return true }
        guard let left = cursors[lhs].current else { return false }
        return IndexEntry.precedes(left.entry, right.entry)
    }
}
