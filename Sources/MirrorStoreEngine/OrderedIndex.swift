/// One entry of a secondary index: a property value and the object that holds it.
public struct IndexEntry: Sendable, Equatable {
    /// The indexed value.
    public let key: IndexKey
    /// The key of the object holding it.
    public let object: StorageKey

    /// Creates an entry.
    public init(key: IndexKey, object: StorageKey) {
        self.key = key
        self.object = object
    }

    /// Entries order by value, then by object key, so equal values come in object-key order.
    static func precedes(_ lhs: IndexEntry, _ rhs: IndexEntry) -> Bool {
        let order = IndexKey.order(lhs.key, rhs.key)
        if order != 0 { return order < 0 }
        return StorageKey.precedes(lhs.object, rhs.object)
    }
}

/// A sorted multiset of index entries, kept as a list of sorted chunks: a two-level B-tree.
///
/// It is a value type built from arrays, so a snapshot is a copy that costs one reference count,
/// and a commit after a snapshot copies the outer list and the chunks it touches, never the
/// whole index. Inserting or removing one entry moves at most one chunk's worth of entries.
struct OrderedIndex: Sendable {
    /// A chunk splits in two when it grows past this.
    static let chunkLimit = 512

    private(set) var chunks: [[IndexEntry]] = []
    private(set) var count = 0
    init() {}

    /// An index holding `entries`, which need not be sorted.
    init(entries: [IndexEntry]) {
        self.init(sorted: IndexEntry.sortedInIndexOrder(entries))
    }

    /// An index holding `sorted`, which is in index order.
    private init(sorted: [IndexEntry]) {
        count = sorted.count
        let size = Self.chunkLimit / 2
        chunks = stride(from: 0, to: sorted.count, by: size).map { Array(sorted[$0..<min($0 + size, sorted.count)]) }
    }

    /// Adds many entries: one at a time when they are few beside the index, else sorted and
    /// merged with it in one pass, which spares each its searches and the shifting of its chunk
    /// (a transaction that loads many objects).
    mutating func insert(contentsOf entries: [IndexEntry]) {
        guard takesInBulk(entries.count) else {
            for entry in entries { insert(entry) }
            return
        }
        let added = IndexEntry.sortedInIndexOrder(entries)
        guard count > 0 else {
            self = OrderedIndex(sorted: added)
            return
        }
        var merged: [IndexEntry] = []
        merged.reserveCapacity(count + added.count)
        var next = 0
        for chunk in chunks.indices {
            for entry in chunks[chunk] {
                while next < added.count, IndexEntry.precedes(added[next], entry) {
                    merged.append(added[next])
                    next += 1
                }
                merged.append(entry)
            }
        }
        merged.append(contentsOf: added[next...])
        self = OrderedIndex(sorted: merged)
    }

    /// Whether `added` entries are many beside the index (more than an eighth of it): then they
    /// are merged in one pass, and one pass over the whole index checks them too, which costs
    /// less than searching it for each.
    func takesInBulk(_ added: Int) -> Bool {
        added * 8 > count
    }

    /// The first entry `isBelow` rejects, as its chunk and its position there (`chunks.count`
    /// and 0 when it accepts every entry), found by two binary searches: over the chunks' last
    /// entries, then within one chunk. `isBelow` must accept a prefix of the entries; its
    /// comparisons can be string comparisons, so only a logarithmic number of them.
    func firstEntry(notBelow isBelow: (IndexEntry) -> Bool) -> (chunk: Int, position: Int) {
        var chunk = 0
        var high = chunks.count
        while chunk < high {
            let middle = (chunk + high) / 2
            if let last = chunks[middle].last, isBelow(last) { chunk = middle + 1 } else { high = middle }
        }
        guard chunk < chunks.count else { return (chunk, 0) }
        let entries = chunks[chunk]
        var position = 0
        var end = entries.count
        while position < end {
            let middle = (position + end) / 2
            if isBelow(entries[middle]) { position = middle + 1 } else { end = middle }
        }
        return (chunk, position)
    }

    mutating func insert(_ entry: IndexEntry) {
        count += 1
        if chunks.isEmpty {
            chunks.append([entry])
            return
        }
        let found = firstEntry { IndexEntry.precedes($0, entry) }
        // After every entry: at the end of the last chunk.
        let (target, at) = found.chunk < chunks.count ? found : (chunks.count - 1, chunks[chunks.count - 1].count)
        chunks[target].insert(entry, at: at)
        if chunks[target].count > Self.chunkLimit {
            let upper = Array(chunks[target][(Self.chunkLimit / 2)...])
            chunks[target].removeSubrange((Self.chunkLimit / 2)...)
            chunks.insert(upper, at: target + 1)
        }
    }

    /// Removes one entry equal to `entry`; returns whether there was one.
    @discardableResult
    mutating func remove(_ entry: IndexEntry) -> Bool {
        let (target, at) = firstEntry { IndexEntry.precedes($0, entry) }
        guard target < chunks.count, at < chunks[target].count, chunks[target][at] == entry else { return false }
        chunks[target].remove(at: at)
        count -= 1
        if chunks[target].isEmpty { chunks.remove(at: target) }
        return true
    }

    /// The first key that two neighbouring entries of different objects share and a unique
    /// index refuses (`isUniquelyConstrained`), read in place chunk by chunk.
    func firstSharedKey() -> IndexKey? {
        var previous: IndexEntry?
        for chunk in chunks {
            let shared: IndexKey? = chunk.withUnsafeBufferPointer { entries in
                for position in entries.indices {
                    let before = position > 0 ? entries[position - 1] : previous
                    guard let before else { continue }
                    if entries[position].object != before.object, entries[position].key == before.key,
                       entries[position].key.isUniquelyConstrained {
                        return entries[position].key
                    }
                }
                return nil
            }
            if let shared { return shared }
            previous = chunk.last
        }
        return nil
    }

    /// Calls `body` with each entry from `lower` on, in order, until it returns `false`.
    func forEach(from lower: IndexBound, _ body: (IndexEntry) -> Bool) {
        // Comparing keys only: one string comparison a step, where ordering entries takes two.
        // Every entry from the one found on is within the bound, so none is compared again.
        var (chunk, start) = lower.isInclusive ? firstEntry { $0.key < lower.key } : firstEntry { !(lower.key < $0.key) }
        while chunk < chunks.count {
            let entries = chunks[chunk]
            for position in start..<entries.count {
                if !body(entries[position]) { return }
            }
            chunk += 1
            start = 0
        }
    }
}
