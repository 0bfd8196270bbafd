/// The first entries of one index state, in each direction, as the positions read from it read
/// them: every `IndexPositions` of that state starts from them, so the first screen of an
/// ordered read (`sorted(using:)` by an indexed property, then `prefix(20)`) reads the index
/// once per state, not once per query. The state's owner drops the memo whenever the index's
/// entries change (`SecondaryIndex`), so it only ever holds entries of the state it belongs to.
///
/// Only a prefix of at most `limit` entries is kept, so that what the memo holds stays small
/// however far a reader reads; positions read past it read the index as before.
final class IndexPositionsMemo: Sendable {
    /// The most entries kept per direction: a few screens.
    static let limit = 256

    private let firsts = Lock<Firsts>(Firsts())

    private struct Firsts {
        var ascending: IndexPositions.Read?
        var descending: IndexPositions.Read?
    }

    /// The entries kept for `ascending` (or the reverse order of groups), if any.
    func read(ascending: Bool) -> IndexPositions.Read? {
        firsts.withLock { ascending ? $0.ascending : $0.descending }
    }

    /// Keeps `read` for `ascending` when it holds more entries than what is kept, but no more
    /// than `limit`. `read` must hold whole groups of equal keys, as an extended read does.
    func offer(_ read: IndexPositions.Read, ascending: Bool) {
        guard read.objects.count <= Self.limit else { return }
        firsts.withLock { firsts in
            let kept = ascending ? firsts.ascending : firsts.descending
            guard read.objects.count > kept?.objects.count ?? 0 || (read.isComplete && kept?.isComplete != true) else { return }
            if ascending { firsts.ascending = read } else { firsts.descending = read }
        }
    }
}
