/// The entries a streamed commit adds to one secondary index, and the marks of those it removes,
/// in the order they came, encoded as an index run encodes them (a flag, the index key, the
/// object's key: docs/FILE_FORMAT.md, "Index runs") one after another in one growing buffer.
///
/// Held as `IndexEntry` values, each entry took its 40 bytes, its key's own heap string and its
/// share of arrays grown by doubling; encoded, an e-mail's entry takes about 30 bytes and a
/// date's 14, plus 4 for where it starts. Writing them as a run (`write(into:checkingUnique:)`)
/// sorts where they start by an order-preserving prefix of their keys, read from the bytes, and
/// copies each entry's bytes into the run's blocks: the keys are decoded only where prefixes tie
/// past what the bytes settle, and for the first entry of each block.
///
/// ```swift
/// var pending = PendingIndexEntries(index: "email")
/// try pending.append(IndexEntry(key: .string("a@x"), object: .integer(1)), isLive: true)
/// var writer = IndexRunWriter(log: scratch, sequence: 1, offset: 0)
/// let written = try pending.write(into: &writer, checkingUnique: true)
/// ```
struct PendingIndexEntries {
    /// The index's name, for errors.
    let index: String
    private var buffer = ByteWriter()
    /// Where each entry starts in `buffer`.
    private var starts: [UInt32] = []

    /// Entries and marks held.
    var count: Int { starts.count }
    /// Bytes they take, beside `count` starts of 4 bytes.
    var byteCount: Int { buffer.bytes.count }
    /// Bytes the buffer and the starts take as allocated, which a spill's bound counts.
    var heldBytes: Int { buffer.bytes.capacity + starts.capacity * 4 }

    /// Room left for the next entry before the buffer grows: entries longer than this grow it
    /// as an array grows.
    static let growthRoom = 256
    var isEmpty: Bool { starts.isEmpty }

    init(index: String) {
        self.index = index
    }

    /// Adds `entry` (with `isLive` false, the mark of its removal).
    ///
    /// - Throws: `StorageError` when the key is the bound `greatest`, which no entry holds.
    mutating func append(_ entry: IndexEntry, isLive: Bool) throws {
        let start = buffer.bytes.count
        // Grown by a quarter, not doubled: the buffer is most of what a streamed commit holds, and
        // a doubling near a spill's bound held three times the bound while it copied.
        if start + Self.growthRoom > buffer.bytes.capacity {
            buffer.bytes.reserveCapacity(Swift.max(start + Self.growthRoom, buffer.bytes.capacity + buffer.bytes.capacity / 4, 4_096))
        }
        buffer.byte(isLive ? 1 : 0)
        guard IndexKeyTag.encode(entry.key, into: &buffer) != nil else {
            buffer.bytes.removeSubrange(start...)
            throw StorageError(.unindexable(index: index, object: entry.object.description, reason: "`greatest` is only a bound, never a key"))
        }
        OperationCodec.encodeKey(entry.object, into: &buffer)
        starts.append(UInt32(truncatingIfNeeded: start))
    }

    /// Calls `body` with each entry and whether it adds (not marks), in the order they came.
    func forEach(_ body: (IndexEntry, Bool) throws -> Void) throws {
        for number in starts.indices {
            try body(try entry(number), buffer.bytes[Int(starts[number])] == 1)
        }
    }

    /// What `write` wrote: the run's entries minus its marks, and for a unique index the first
    /// key two of its live entries share, if any.
    struct Written {
        var net: Int
        var duplicate: IndexKey?
    }

    /// Appends the entries to `writer` in index order, each entry once with the sum of its
    /// weights (an entry added then removed by the commit is written as nothing); with
    /// `checkingUnique`, finds the first key two live entries of different objects share that a
    /// unique index refuses.
    ///
    /// - Throws: `StorageError` when an entry's weights sum past one either way (an update that
    ///   adds an entry twice: a bug, never the data's), or when the writer cannot write.
    func write(into writer: inout IndexRunWriter, checkingUnique: Bool) throws -> Written {
        let (prefixes, order) = try sortedOrder()
        var written = Written(net: 0, duplicate: nil)
        var lastLive: Int?
        var position = 0
        while position < order.count {
            let number = Int(order[position])
            var weight = weightOf(number)
            var next = position + 1
            // Equal entries lie side by side, their prefixes equal.
            while next < order.count, prefixes[next] == prefixes[position], sameEntry(number, Int(order[next])) {
                weight += weightOf(Int(order[next]))
                next += 1
            }
            defer { position = next }
            guard weight >= -1, weight <= 1 else {
                throw StorageError(.corrupted(path: writer.path, offset: writer.offset, reason: "a commit counts index entry \(try entry(number).key) \(weight) times"))
            }
            guard weight != 0 else { continue }
            let range = self.range(of: number)
            try writer.append(encoded: buffer.bytes[(range.lowerBound + 1)..<range.upperBound], isLive: weight > 0) {
                try entry(number)
            }
            written.net += weight
            guard weight > 0 else { continue }
            if checkingUnique, written.duplicate == nil, let previous = lastLive, try sameKeyRefused(previous, number) {
                written.duplicate = try entry(number).key
            }
            lastLive = number
        }
        return written
    }

    // MARK: Reading the bytes

    private func range(of number: Int) -> Range<Int> {
        Int(starts[number])..<(number + 1 < starts.count ? Int(starts[number + 1]) : buffer.bytes.count)
    }

    private func weightOf(_ number: Int) -> Int {
        buffer.bytes[Int(starts[number])] == 1 ? 1 : -1
    }

    private func entry(_ number: Int) throws -> IndexEntry {
        var reader = ByteReader(buffer.bytes, from: Int(starts[number]) + 1)
        do {
            let key = try IndexKeyTag.decode(&reader)
            return IndexEntry(key: key, object: try OperationCodec.decodeKey(&reader))
        } catch {
            throw StorageError(.corrupted(path: "memory", offset: UInt64(starts[number]), reason: "a pending index entry: \(error.reason)"))
        }
    }

    /// The range of an entry's key: its tag, then the value's bytes (`valueStart` on).
    private func keyRange(of number: Int) -> (tag: UInt8, valueStart: Int, end: Int) {
        let start = Int(starts[number]) + 1
        let tag = buffer.bytes[start]
        switch IndexKeyTag(rawValue: tag) {
        case .integer, .unsigned, .double: return (tag, start + 1, start + 9)
        case .string, .bytes, .tuple:
            var reader = ByteReader(buffer.bytes, from: start + 1)
            // Written by `append`: the length is whole.
            let value = (try? reader.lengthPrefixedRange()) ?? (start + 1)..<(start + 1)
            return (tag, value.lowerBound, value.upperBound)
        default: return (tag, start + 1, start + 1)
        }
    }

    /// Whether two entries are one: the same key and object bytes.
    private func sameEntry(_ first: Int, _ second: Int) -> Bool {
        let (a, b) = (range(of: first), range(of: second))
        guard a.count == b.count else { return false }
        return buffer.bytes[(a.lowerBound + 1)..<a.upperBound].elementsEqual(buffer.bytes[(b.lowerBound + 1)..<b.upperBound])
    }

    /// Whether one entry's key and object bytes come before another's, byte by byte.
    private func bytesPrecede(_ first: Int, _ second: Int) -> Bool {
        let (a, b) = (range(of: first), range(of: second))
        return buffer.bytes[(a.lowerBound + 1)..<a.upperBound].lexicographicallyPrecedes(buffer.bytes[(b.lowerBound + 1)..<b.upperBound])
    }

    /// Whether two live entries of different objects have keys a unique index takes for equal
    /// (`IndexKey.==`: strings and byte strings by their bytes) and refuses twice.
    private func sameKeyRefused(_ first: Int, _ second: Int) throws -> Bool {
        let (a, b) = (keyRange(of: first), keyRange(of: second))
        if a.tag == b.tag, a.tag == IndexKeyTag.string.rawValue || a.tag == IndexKeyTag.bytes.rawValue {
            return a.end - a.valueStart == b.end - b.valueStart
                && buffer.bytes[a.valueStart..<a.end].elementsEqual(buffer.bytes[b.valueStart..<b.end])
        }
        let (left, right) = (try entry(first).key, try entry(second).key)
        return left == right && right.isUniquelyConstrained
    }

    /// `IndexKey.sortPrefix` of an entry's key, from its bytes.
    private func sortPrefix(_ number: Int) throws -> UInt64 {
        let (tag, valueStart, end) = keyRange(of: number)
        switch IndexKeyTag(rawValue: tag) {
        case .string, .bytes:
            let rank = UInt64(IndexKeyTag(rawValue: tag)?.rank ?? 0) << 61
            return rank | (window(valueStart, end, at: 0) >> 8) << 5
        case .tuple: return IndexKey.tuple(IndexTuple(encoded: [])).sortPrefix
        default: return try entry(number).key.sortPrefix
        }
    }

    /// Eight bytes of a string's or byte string's value from `offset` on, as
    /// `IndexKey.bytesWindow` reads them.
    private func window(_ start: Int, _ end: Int, at offset: Int) -> UInt64 {
        var window: UInt64 = 0
        for position in (start + offset)..<(start + offset + 8) {
            window = window << 8 | UInt64(position < end ? buffer.bytes[position] : 0)
        }
        return window
    }

    // MARK: Sorting

    /// The entries' numbers in index order, beside their prefixes: radix by prefix, then strings
    /// and byte strings in long ties by their next eight bytes, the rest of each tie by the
    /// entries themselves (`IndexEntry.precedes`), decoded once each.
    private func sortedOrder() throws -> (prefixes: [UInt64], order: [UInt32]) {
        var prefixes = try starts.indices.map { try sortPrefix($0) }
        var order = (0..<UInt32(starts.count)).map { $0 }
        IndexEntry.radixSort(&prefixes, carrying: &order)
        var runs = IndexEntry.tiedRuns(prefixes, from: 0, offset: 7)
        while let (range, offset) = runs.popLast() {
            let first = keyRange(of: Int(order[range.lowerBound]))
            let isBytes = first.tag == IndexKeyTag.string.rawValue || first.tag == IndexKeyTag.bytes.rawValue
            guard range.count > 16, offset < 64, isBytes else {
                var decoded = try order[range].map { (entry: try entry(Int($0)), number: $0) }
                // Entries the order finds equal but that differ (3 and 3.0 of one object) by
                // their bytes, so that copies of one entry lie side by side, to be summed.
                decoded.sort { first, second in
                    if IndexEntry.precedes(first.entry, second.entry) { return true }
                    if IndexEntry.precedes(second.entry, first.entry) { return false }
                    return bytesPrecede(Int(first.number), Int(second.number))
                }
                order.replaceSubrange(range, with: decoded.map(\.number))
                continue
            }
            var windows = order[range].map { number in
                let key = keyRange(of: Int(number))
                return window(key.valueStart, key.end, at: offset)
            }
            var slice = Array(order[range])
            IndexEntry.radixSort(&windows, carrying: &slice)
            order.replaceSubrange(range, with: slice)
            runs += IndexEntry.tiedRuns(windows, from: range.lowerBound, offset: offset + 8)
        }
        return (prefixes, order)
    }
}
