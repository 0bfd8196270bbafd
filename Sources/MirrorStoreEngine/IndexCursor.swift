/// Reads one sorted source of a secondary index (a persisted run a block at a time, or an
/// in-memory `OrderedIndex` of added or of removed entries) forward or backward from a bound,
/// each entry with its weight: +1 for an entry that adds, -1 for a mark or a removal.
struct IndexCursor {
    private enum Source {
        case run(IndexRun)
        case memory(OrderedIndex, weight: Int)
    }

    private let source: Source
    private let forward: Bool
    /// The run's block or the memory's chunk.
    private var block: Int
    private var position = 0
    private(set) var current: (entry: IndexEntry, weight: Int)?
    /// Entries of the current run block read ahead, from `position` on in the cursor's
    /// direction, and how many the next read takes: two at first (a lookup reads few), twice as
    /// many each time after (a pass reads a block in a few visits rather than one per entry).
    private var readAhead: [FlaggedEntry] = []
    private var readAheadIndex = 0
    private var batch = 2

    /// Reads `run` forward from its first entry past `below`.
    init(run: IndexRun, after below: KeysBelow) throws {
        source = .run(run)
        forward = true
        block = max(0, run.blocksBelow(below) - 1)
        guard block < run.fences.count else { return }
        position = try run.entriesBelow(inBlock: block, below)
        try settle()
    }

    /// Reads `run` backward from its last entry in `notAbove`.
    init(run: IndexRun, through notAbove: KeysBelow) throws {
        source = .run(run)
        forward = false
        block = run.blocksBelow(notAbove) - 1
        guard block >= 0 else { return }
        position = try run.entriesBelow(inBlock: block, notAbove) - 1
        try settle()
    }

    /// Reads `index` forward from its first entry past `below`, each of weight `weight`.
    init(memory index: OrderedIndex, weight: Int, after below: KeysBelow) {
        source = .memory(index, weight: weight)
        forward = true
        (block, position) = index.firstEntry(notBelow: below.contains)
        settleMemory()
    }

    /// Reads `index` backward from its last entry in `notAbove`.
    init(memory index: OrderedIndex, weight: Int, through notAbove: KeysBelow) {
        source = .memory(index, weight: weight)
        forward = false
        var (chunk, end) = index.firstEntry(notBelow: notAbove.contains)
        if end == 0 {
            // The last accepted entry ends the chunk before (there is none before the first).
            chunk -= 1
            end = chunk >= 0 ? index.chunks[chunk].count : 0
        }
        block = chunk
        position = end - 1
        settleMemory()
    }

    mutating func advance() throws {
        position += forward ? 1 : -1
        readAheadIndex += 1
        switch source {
        case .run: try settle()
        case .memory: settleMemory()
        }
    }

    /// `advance()` for a cursor on memory, which reads nothing that can fail.
    mutating func advanceInMemory() {
        position += forward ? 1 : -1
        settleMemory()
    }

    /// Moves past the ends of run blocks until `position` names an entry, or the run ends, and
    /// reads that entry.
    private mutating func settle() throws {
        guard case .run(let run) = source else { return }
        while position < 0 || position >= run.count(inBlock: block) {
            block += forward ? 1 : -1
            guard run.fences.indices.contains(block) else {
                current = nil
                return
            }
            if forward { run.blocks.prefetch(forPassAt: block) }
            position = forward ? 0 : run.count(inBlock: block) - 1
            readAhead.removeAll(keepingCapacity: true)
        }
        if readAheadIndex >= readAhead.count {
            readAhead = try run.entries(block, from: position, wanted: batch, forward: forward)
            readAheadIndex = 0
            batch = min(2 * batch, Self.largestBatch)
        }
        let found = readAhead[readAheadIndex]
        current = (found.entry, found.isLive ? 1 : -1)
    }

    static let largestBatch = 64

    /// Moves past the ends of chunks until `position` names an entry, or the index ends.
    private mutating func settleMemory() {
        guard case .memory(let index, let weight) = source else { return }
        let chunks = index.chunks
        while block >= 0, block < chunks.count, !chunks[block].indices.contains(position) {
            block += forward ? 1 : -1
            guard block >= 0, block < chunks.count else { break }
            position = forward ? 0 : chunks[block].count - 1
        }
        guard block >= 0, block < chunks.count, chunks[block].indices.contains(position) else {
            current = nil
            return
        }
        current = (chunks[block][position], weight)
    }
}

/// Several sources of one index read together in order: each entry once, with the sum of its
/// weights over the sources, which is 1 for an entry in the index.
struct IndexMerge {
    private var cursors: [IndexCursor]
    private let forward: Bool

    init(_ cursors: [IndexCursor], forward: Bool) {
        self.cursors = cursors
        self.forward = forward
    }

    /// The next entry in order and its summed weight, or nil at the end.
    mutating func next() throws -> (entry: IndexEntry, weight: Int)? {
        var best: IndexEntry?
        for cursor in cursors {
            guard let entry = cursor.current?.entry else { continue }
            if let chosen = best {
                if forward ? IndexEntry.precedes(entry, chosen) : IndexEntry.precedes(chosen, entry) { best = entry }
            } else {
                best = entry
            }
        }
        guard let entry = best else { return nil }
        var weight = 0
        for index in cursors.indices {
            guard let found = cursors[index].current, found.entry == entry else { continue }
            weight += found.weight
            try cursors[index].advance()
        }
        return (entry, weight)
    }
}
