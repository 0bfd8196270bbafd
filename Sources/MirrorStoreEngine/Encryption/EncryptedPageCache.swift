/// The plaintext of the pages of an encrypted log read last, found by page number: a table
/// indexed by page (no hashing, which cost more than the copy of a small read) and a ring of at
/// most `capacity` pages, forgotten first in, first out.
///
/// Every change is also made in `published`, where readers find the pages without the log's
/// lock and without a reference count (`PublishedPages`). A page forgotten or replaced, and a
/// table `published` outgrew, wait in `retired` until no reading can be using them, and are
/// freed at the next change after that: besides the `capacity` pages held, only pages a reading
/// in progress may still be reading stay in memory (as arrays lent to readers did before). When
/// `capacity` are waiting (readings that last while the cache turns over), no page is added but
/// the pinned one until they are freed.
struct EncryptedPageCache: Sendable {
    struct Entry: Sendable {
        /// The page held, or -1 for a free entry.
        var page: Int
        var bytes: DecryptedPage?
    }

    let capacity: Int
    /// The pages as readers find them without the lock.
    let published: PublishedPages
    /// For each page number, its entry's position plus one, or 0 when it is not held. Only as long
    /// as the highest page held: four bytes per page of the file at most.
    private(set) var positions: [Int32] = []
    private(set) var entries: [Entry] = []
    /// The entry the next page replaces once the ring is full.
    private var next = 0
    /// Pages and tables readers may still be reading, each with the epoch it was retired in.
    private var retired: [(epoch: UInt, item: any AnyObject & Sendable)] = []

    init(capacity: Int, published: PublishedPages = PublishedPages()) {
        self.capacity = Swift.max(capacity, 2)
        self.published = published
    }

    /// Page `page`'s plaintext, when it is held.
    @inline(__always)
    subscript(page: Int) -> DecryptedPage? {
        entry(of: page).flatMap { entries[$0].bytes }
    }

    /// Where page `page`'s entry is, when it is held.
    @inline(__always)
    func entry(of page: Int) -> Int? {
        guard page >= 0, page < positions.count else { return nil }
        let position = Int(positions[page])
        return position == 0 ? nil : position - 1
    }

    /// How many pages and tables wait for the readings that may use them to end.
    var waitingCount: Int { retired.count }

    /// Every page held, with its number: for a cache filled apart to be kept in another.
    var held: [(page: Int, bytes: DecryptedPage)] {
        entries.compactMap { entry in entry.bytes.map { (page: entry.page, bytes: $0) } }
    }

    /// Holds `bytes` as page `page`'s plaintext, in place of what was held for it. When the ring
    /// is full, the page held longest is forgotten, but never `pinned`.
    mutating func keep(_ bytes: [UInt8], page: Int, pinned: Int?) {
        keep(DecryptedPage(bytes), page: page, pinned: pinned)
    }

    /// Holds `bytes` as page `page`'s plaintext; see `keep(_:page:pinned:)`.
    mutating func keep(_ bytes: DecryptedPage, page: Int, pinned: Int?) {
        guard page >= 0, page < Int(Int32.max) else { return }
        reclaim()
        if page < positions.count, positions[page] != 0 {
            let position = Int(positions[page]) - 1
            let replaced = entries[position].bytes
            entries[position].bytes = bytes
            publish(bytes, at: page)
            if let replaced { retire(replaced) }
            return
        }
        // Pages waiting for readers count against the bound: none is added (but the pinned one,
        // which is nowhere else) until some are freed.
        guard retired.count < capacity || page == pinned else { return }
        if page >= positions.count {
            positions.append(contentsOf: repeatElement(0, count: Swift.max(page + 1, 2 * positions.count) - positions.count))
        }
        if entries.count < capacity {
            entries.append(Entry(page: page, bytes: bytes))
            positions[page] = Int32(entries.count)
            publish(bytes, at: page)
            return
        }
        // Two tries: only one page is pinned.
        for _ in 0..<2 {
            let victim = entries[next].page
            if victim != pinned || victim < 0 {
                if victim >= 0 {
                    positions[victim] = 0
                    publish(nil, at: victim)
                }
                let evicted = entries[next].bytes
                entries[next] = Entry(page: page, bytes: bytes)
                positions[page] = Int32(next + 1)
                publish(bytes, at: page)
                if let evicted { retire(evicted) }
                next = (next + 1) % entries.count
                return
            }
            next = (next + 1) % entries.count
        }
    }

    /// Forgets page `page`.
    mutating func forget(_ page: Int) {
        reclaim()
        guard page >= 0, page < positions.count, positions[page] != 0 else { return }
        let position = Int(positions[page]) - 1
        publish(nil, at: page)
        if let forgotten = entries[position].bytes { retire(forgotten) }
        entries[position] = Entry(page: -1, bytes: nil)
        positions[page] = 0
    }

    /// Forgets every page from `first` on.
    mutating func forget(from first: Int) {
        reclaim()
        for position in entries.indices where entries[position].page >= Swift.max(first, 0) {
            forget(entries[position].page)
        }
    }

    private mutating func publish(_ page: DecryptedPage?, at index: Int) {
        if let table = published.publish(page, at: index) { retire(table) }
    }

    private mutating func retire(_ item: any AnyObject & Sendable) {
        retired.append((published.currentEpoch, item))
        reclaim()
    }

    /// Frees what no reading can still be using: what was retired two epochs or more before.
    private mutating func reclaim() {
        guard !retired.isEmpty else { return }
        let epoch = published.advance()
        // Retired in order, so in epoch order.
        let freed = retired.prefix { $0.epoch + 2 <= epoch }.count
        retired.removeFirst(freed)
    }
}
