/// The plaintext of the pages of an encrypted log read last, found by page number: a table
/// indexed by page (no hashing, which cost more than the copy of a small read) and a ring of at
/// most `capacity` pages, forgotten first in, first out.
struct EncryptedPageCache: Sendable {
    struct Entry: Sendable {
        /// The page held, or -1 for a free entry.
        var page: Int
        var bytes: [UInt8]
    }

    let capacity: Int
    /// For each page number, its entry's position plus one, or 0 when it is not held. Only as long
    /// as the highest page held: four bytes per page of the file at most.
    private(set) var positions: [Int32] = []
    private(set) var entries: [Entry] = []
    /// The entry the next page replaces once the ring is full.
    private var next = 0

    init(capacity: Int) {
        self.capacity = Swift.max(capacity, 2)
    }

    /// Page `page`'s plaintext, when it is held.
    @inline(__always)
    subscript(page: Int) -> [UInt8]? {
        entry(of: page).map { entries[$0].bytes }
    }

    /// Where page `page`'s entry is, when it is held.
    @inline(__always)
    func entry(of page: Int) -> Int? {
        guard page >= 0, page < positions.count else { return nil }
        let position = Int(positions[page])
        return position == 0 ? nil : position - 1
    }

    /// Holds `bytes` as page `page`'s plaintext, in place of what was held for it. When the ring
    /// is full, the page held longest is forgotten, but never `pinned`.
    mutating func keep(_ bytes: [UInt8], page: Int, pinned: Int?) {
        guard page >= 0, page < Int(Int32.max) else { return }
        if page < positions.count, positions[page] != 0 {
            entries[Int(positions[page]) - 1].bytes = bytes
            return
        }
        if page >= positions.count {
            positions.append(contentsOf: repeatElement(0, count: Swift.max(page + 1, 2 * positions.count) - positions.count))
        }
        if entries.count < capacity {
            entries.append(Entry(page: page, bytes: bytes))
            positions[page] = Int32(entries.count)
            return
        }
        // Two tries: only one page is pinned.
        for _ in 0..<2 {
            let victim = entries[next].page
            if victim != pinned || victim < 0 {
                if victim >= 0 { positions[victim] = 0 }
                entries[next] = Entry(page: page, bytes: bytes)
                positions[page] = Int32(next + 1)
                next = (next + 1) % entries.count
                return
            }
            next = (next + 1) % entries.count
        }
    }

    /// Forgets page `page`.
    mutating func forget(_ page: Int) {
        guard page >= 0, page < positions.count, positions[page] != 0 else { return }
        entries[Int(positions[page]) - 1] = Entry(page: -1, bytes: [])
        positions[page] = 0
    }

    /// Forgets every page from `first` on.
    mutating func forget(from first: Int) {
        for position in entries.indices where entries[position].page >= Swift.max(first, 0) {
            positions[entries[position].page] = 0
            entries[position] = Entry(page: -1, bytes: [])
        }
    }
}
