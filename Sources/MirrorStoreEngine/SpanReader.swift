/// Reads many values of one log in file order, one large `pread` per span of neighbours
/// instead of one per value: the fast path for loading a whole type and for compaction.
enum SpanReader {
    /// The most bytes one read covers (a single larger value is still read whole).
    static let spanLimit = 4 << 20
    /// The most bytes between two values that one read still covers: farther apart, each is read
    /// on its own, so that values scattered over the file do not read everything between them.
    static let gapLimit = 16 << 10

    typealias Placement = (key: StorageKey, offset: UInt64, length: Int)

    /// The most placements a pass holds at once (about 40 bytes each).
    static let placementLimit = 1 << 17

    /// The most value bytes of one window a pass in key order holds, to hand them out in key order.
    static let orderedWindowBytes = 8 << 20

    /// Calls `body` with each key of `objects` and its value, holding at most `limit` placements
    /// at a time: the keys are taken `limit` at a time in one walk (the runs' in key order, then
    /// the ones in memory; all in key order with `keyOrder`), and each such window is read in file order. A type whose keys lie
    /// in the file in key order (keys added in order, or any compacted store) is so read in file
    /// order throughout; any other is read in one sweep of the file per window. With `keyOrder`,
    /// a window whose values take at most `orderedWindowBytes` is handed out in key order too
    /// (held in one buffer meanwhile), so that a compaction writes them in key order. `windowEnded`
    /// is called after each window's last key. Returns the most placements it held at once.
    @discardableResult
    static func forEach(
        _ objects: TypeIndex, in index: KeyIndex, source: any LogStorage, limit: Int = placementLimit, keyOrder: Bool = false,
        windowEnded: () throws -> Void = {}, _ body: (StorageKey, [UInt8]) throws -> Void
    ) throws -> Int {
        let bound = max(1, limit)
        var placed: [Placement] = []
        placed.reserveCapacity(min(objects.count, bound))
        var held = 0
        func readPlaced() throws {
            held = max(held, placed.count)
            guard !placed.isEmpty else { return }
            if keyOrder, placed.reduce(0, { $0 + $1.length }) <= orderedWindowBytes {
                try forEachInOrder(placed, in: source, body)
            } else {
                placed.sort { $0.offset < $1.offset }
                try forEach(placed, in: source, body)
            }
            placed.removeAll(keepingCapacity: true)
            try windowEnded()
        }
        func place(_ key: StorageKey, _ packed: UInt64) throws {
            let (offset, length) = index.resolve(packed)
            placed.append((key, offset, length))
            if placed.count >= bound { try readPlaced() }
        }
        if keyOrder {
            try objects.forEachInKeyOrder(place)
        } else {
            try objects.forEach(place)
        }
        try readPlaced()
        return held
    }

    /// Calls `body` with each key and its value in the order of `placed`, reading them in file
    /// order into one buffer first.
    private static func forEachInOrder(_ placed: [Placement], in source: any LogStorage, _ body: (StorageKey, [UInt8]) throws -> Void) throws {
        let byOffset = placed.indices.sorted { placed[$0].offset < placed[$1].offset }
        var starts = [Int](repeating: 0, count: placed.count)
        var total = 0
        for (position, placement) in placed.enumerated() {
            starts[position] = total
            total += placement.length
        }
        var buffer = [UInt8](repeating: 0, count: total)
        var next = 0
        try forEach(byOffset.map { placed[$0] }, in: source) { _, value in
            let start = starts[byOffset[next]]
            buffer.replaceSubrange(start..<(start + value.count), with: value)
            next += 1
        }
        for (position, placement) in placed.enumerated() {
            try body(placement.key, Array(buffer[starts[position]..<(starts[position] + placement.length)]))
        }
    }

    /// Calls `body` with each key and its value, in the order of `placed` (sorted by offset). The
    /// spans are read without the log's mapping: through it, every page of the pass would stay in
    /// the process's resident set for as long as the mapping lives.
    private static func forEach(_ placed: [Placement], in source: any LogStorage, _ body: (StorageKey, [UInt8]) throws -> Void) throws {
        var spanStart = 0
        while spanStart < placed.count {
            let base = placed[spanStart].offset
            var end = base + UInt64(placed[spanStart].length)
            var spanEnd = spanStart + 1
            while spanEnd < placed.count {
                let nextEnd = placed[spanEnd].offset + UInt64(placed[spanEnd].length)
                guard nextEnd - base <= UInt64(spanLimit), placed[spanEnd].offset <= end + UInt64(gapLimit) else { break }
                end = max(end, nextEnd)
                spanEnd += 1
            }
            let span = try source.readOnce(at: base, count: Int(end - base))
            for item in placed[spanStart..<spanEnd] {
                let start = Int(item.offset - base)
                try body(item.key, Array(span[start..<(start + item.length)]))
            }
            spanStart = spanEnd
        }
    }
}
