/// Reads many values of one log in file order, one large `pread` per span of neighbours
/// instead of one per value: the fast path for loading a whole type and for compaction.
enum SpanReader {
    /// The most bytes one read covers (a single larger value is still read whole).
    static let spanLimit = 4 << 20

    typealias Placement = (key: StorageKey, offset: UInt64, length: Int)

    /// The most placements a pass holds at once (about 40 bytes each).
    static let placementLimit = 1 << 17
    /// The most windows a pass reads a type in: each costs a walk of every key of the type, so
    /// beyond `placementLimit * maximumWindows` objects a pass holds a sixteenth of them.
    static let maximumWindows = 16

    /// Calls `body` with each key of `objects` and its value, in file order, holding about `limit`
    /// placements at a time: a type with more is read in windows of the file, each found by one
    /// more walk of its keys (cheap beside reading the values), at most `maximumWindows` of them.
    static func forEach(
        _ objects: TypeIndex, in index: KeyIndex, source: any LogStorage, limit: Int = placementLimit,
        _ body: (StorageKey, [UInt8]) throws -> Void
    ) throws {
        guard objects.count > limit else {
            return try forEach(placements(of: objects, in: index, from: 0, to: .max), in: source, body)
        }
        var lowest = UInt64.max
        var highest: UInt64 = 0
        try objects.forEach { _, packed in
            let offset = index.resolve(packed).offset
            lowest = min(lowest, offset)
            highest = max(highest, offset)
        }
        let windows = UInt64(min(maximumWindows, (objects.count + limit - 1) / max(1, limit)))
        let width = (highest - lowest) / windows + 1
        var start = lowest
        while start <= highest {
            let end = start + width
            try forEach(placements(of: objects, in: index, from: start, to: end), in: source, body)
            start = end
        }
    }

    /// Where each object of `objects` whose value starts in `start..<end` lies, sorted by offset.
    private static func placements(of objects: TypeIndex, in index: KeyIndex, from start: UInt64, to end: UInt64) throws -> [Placement] {
        var placed: [Placement] = []
        if end == .max { placed.reserveCapacity(objects.count) }
        try objects.forEach { key, packed in
            let (offset, length) = index.resolve(packed)
            if offset >= start, offset < end { placed.append((key, offset, length)) }
        }
        placed.sort { $0.offset < $1.offset }
        return placed
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
                guard nextEnd - base <= UInt64(spanLimit) else { break }
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
