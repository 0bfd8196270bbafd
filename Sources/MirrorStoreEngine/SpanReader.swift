/// Reads many values of one log in file order, one large `pread` per span of neighbours
/// instead of one per value: the fast path for loading a whole type and for compaction.
enum SpanReader {
    /// The most bytes one read covers (a single larger value is still read whole).
    static let spanLimit = 4 << 20

    typealias Placement = (key: StorageKey, offset: UInt64, length: Int)

    /// Where every object of `objects` lies, sorted by offset.
    static func placements(of objects: TypeIndex, in index: KeyIndex) throws -> [Placement] {
        var placed: [Placement] = []
        placed.reserveCapacity(objects.count)
        try objects.forEach { key, packed in
            let (offset, length) = index.resolve(packed)
            placed.append((key, offset, length))
        }
        placed.sort { $0.offset < $1.offset }
        return placed
    }

    /// Calls `body` with each key and its value, in the order of `placed` (sorted by offset).
    static func forEach(_ placed: [Placement], in source: any LogStorage, _ body: (StorageKey, [UInt8]) throws -> Void) throws {
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
            let span = try source.read(at: base, count: Int(end - base))
            for item in placed[spanStart..<spanEnd] {
                let start = Int(item.offset - base)
                try body(item.key, Array(span[start..<(start + item.length)]))
            }
            spanStart = spanEnd
        }
    }
}
