/// The first entries of one index state, in each direction, as the positions read from it read
/// them: every `IndexPositions` of that state starts from them, so the first screen of an
/// ordered read (`sorted(using:)` by an indexed property, then `prefix(20)`) reads the index
/// once per state, not once per query. When the index's entries change, the new state gets a
/// copy changed to match (a change of a few entries) or none (`SecondaryIndex`), so a memo only
/// ever holds entries of the state it belongs to.
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
        /// Entries changed (``changing(_:inserting:)``) since the memo a reader last started
        /// from, this one or one it was changed from.
        var changes = 0
    }

    /// The most entries changed between two reads with the memo kept: a commit of a few objects
    /// changes it, many (a bulk delete) drop it rather than change it once for each.
    static let changeLimit = 64

    /// The entries kept for `ascending` (or the reverse order of groups), if any.
    func read(ascending: Bool) -> IndexPositions.Read? {
        firsts.withLock { firsts in
            firsts.changes = 0
            return ascending ? firsts.ascending : firsts.descending
        }
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

    /// A memo for the index state that adds `entry` to this one's (`inserting`) or removes it:
    /// each direction's prefix with the entry put in or taken out where its positions have it,
    /// or left as it is when the entry lies past the prefix's last group. A direction whose
    /// prefix would pass `limit`, or does not hold an entry it should, is dropped; nil past
    /// `changeLimit` changes without a read. A commit of a few objects then keeps the first
    /// positions read, rather than the next query reading the index again.
    func changing(_ entry: IndexEntry, inserting: Bool) -> IndexPositionsMemo? {
        let kept = firsts.withLock { $0 }
        guard kept.changes < Self.changeLimit else { return nil }
        let changed = IndexPositionsMemo()
        changed.firsts.withLock { firsts in
            firsts.ascending = kept.ascending.flatMap { Self.changing($0, entry, inserting: inserting, ascending: true) }
            firsts.descending = kept.descending.flatMap { Self.changing($0, entry, inserting: inserting, ascending: false) }
            firsts.changes = kept.changes + 1
        }
        return changed
    }

    /// `read` with `entry` put in or taken out; nil when that cannot be done.
    private static func changing(_ read: IndexPositions.Read, _ entry: IndexEntry, inserting: Bool, ascending: Bool) -> IndexPositions.Read? {
        // Where the prefix's last group lies from the entry's key: past it, the prefix is the same.
        if !read.isComplete {
            guard let last = read.keys.last else { return read }
            let order = IndexKey.order(entry.key, last)
            if ascending ? order > 0 : order < 0 { return read }
        }
        // The first position whose entry follows `entry` in position order: groups of equal
        // keys in index order or in reverse, each in object-key order.
        var position = 0
        while position < read.keys.count {
            let order = IndexKey.order(entry.key, read.keys[position])
            if ascending ? order < 0 : order > 0 { break }
            if order == 0, !StorageKey.precedes(read.objects[position], entry.object) { break }
            position += 1
        }
        var changed = read
        if inserting {
            guard read.keys.count < limit else { return nil }
            changed.keys.insert(entry.key, at: position)
            changed.objects.insert(entry.object, at: position)
        } else {
            guard position < read.keys.count, read.objects[position] == entry.object, read.keys[position] == entry.key else { return nil }
            changed.keys.remove(at: position)
            changed.objects.remove(at: position)
        }
        return changed
    }
}
