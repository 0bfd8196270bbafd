/// One persisted run of a secondary index: entries (index key, object key), each with a flag
/// saying whether it adds the entry or marks it deleted, sorted by ``IndexEntry/precedes(_:_:)``
/// in checksummed blocks (the index layout of `RunBlockReader`) inside the log's index units,
/// and in memory each block's first entry and its counts of entries and marks.
///
/// An index is its runs (newest first) and the changes since they were written: an entry is in
/// the index when the sources that add it outnumber those that mark it deleted. Writing runs
/// keeps that count at 0 or 1 for every entry (`IndexRunWriter`), so a count of a range is the
/// sum, over sources, of entries minus marks in it, found from the block counts without reading
/// the blocks in between (docs/FILE_FORMAT.md, "Checkpoints").
final class IndexRun: Sendable {
    /// Blocks close once they pass this many bytes.
    static let blockTarget = 4096

    /// Each block's first entry.
    let fences: [IndexEntry]
    /// For a run whose fences all hold strings, each fence's first eight bytes of UTF-8 as one
    /// big-endian number, zero-padded: a search for a string compares most fences as numbers,
    /// and only those with the wanted string's first eight bytes byte by byte
    /// (`stringFencesBelow`). Nil for other runs.
    let stringFencePrefixes: [UInt64]?
    /// Each block's entries that add, and marks.
    let liveCounts: [UInt16]
    let markCounts: [UInt16]
    /// Entries in the run, marks included.
    let entryCount: Int
    /// Entries minus marks over the whole run.
    let net: Int
    /// Entries minus marks in the blocks before each block: a count never adds up blocks.
    private let netBefore: [Int]
    /// Bytes the run's units take in the log.
    let byteCount: Int
    let blocks: RunBlocks

    /// A run whose blocks all lie before `end` in `log`, read through its mapping unless `readsOnce`.
    init(
        blockOffsets: [UInt64], fences: [IndexEntry], liveCounts: [UInt16], markCounts: [UInt16], byteCount: Int, log: any LogStorage,
        end: UInt64, readsOnce: Bool = false
    ) {
        self.fences = fences
        stringFencePrefixes = Self.stringPrefixes(of: fences)
        self.liveCounts = liveCounts
        self.markCounts = markCounts
        self.byteCount = byteCount
        var entries = 0
        var net = 0
        var netBefore: [Int] = []
        netBefore.reserveCapacity(liveCounts.count)
        for block in liveCounts.indices {
            netBefore.append(net)
            entries += Int(liveCounts[block]) + Int(markCounts[block])
            net += Int(liveCounts[block]) - Int(markCounts[block])
        }
        entryCount = entries
        self.net = net
        self.netBefore = netBefore
        blocks = RunBlocks(offsets: blockOffsets, log: log, end: end, what: "index run", readsOnce: readsOnce)
    }

    /// The same run, its blocks read with `pread` rather than through the mapping
    /// (`RunBlocks.readsOnce`), for a merge that reads each once.
    func readingOnce() -> IndexRun {
        IndexRun(
            blockOffsets: blocks.offsets, fences: fences, liveCounts: liveCounts, markCounts: markCounts, byteCount: byteCount, log: log,
            end: blocks.end, readsOnce: true)
    }

    var log: any LogStorage { blocks.log }

    /// The fences' string prefixes (see ``stringFencePrefixes``), or nil when a fence holds
    /// another kind of key.
    private static func stringPrefixes(of fences: [IndexEntry]) -> [UInt64]? {
        var prefixes: [UInt64] = []
        prefixes.reserveCapacity(fences.count)
        for fence in fences {
            guard case .string(let text) = fence.key else { return nil }
            prefixes.append(stringPrefix(text.utf8))
        }
        return prefixes
    }

    /// The first eight of `bytes` as one big-endian number, zero-padded: two strings whose
    /// numbers differ order as the numbers do (a string shorter than eight bytes pads with
    /// zeros, which order at or below any byte); equal numbers say nothing.
    static func stringPrefix<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt64 {
        var prefix: UInt64 = 0
        var shift: UInt64 = 56
        for byte in bytes {
            prefix |= UInt64(byte) << shift
            if shift == 0 { break }
            shift -= 8
        }
        return prefix
    }

    /// Entries and marks in block `block`.
    func count(inBlock block: Int) -> Int {
        Int(liveCounts[block]) + Int(markCounts[block])
    }

    /// Entry `position` of block `block`, and whether it adds (true) or marks a deletion.
    func entry(_ block: Int, _ position: Int) throws -> (entry: IndexEntry, isLive: Bool) {
        try blocks.withBlock(block) { reader in
            guard reader.count == count(inBlock: block), let found = reader.indexEntry(position) else { throw blocks.undecodable(block) }
            return found
        }
    }

    /// Up to `wanted` entries of block `block` from `position` on (forward) or down from it,
    /// in that order, read in one visit of the block.
    func entries(_ block: Int, from position: Int, wanted: Int, forward: Bool) throws -> [FlaggedEntry] {
        try blocks.withBlock(block) { reader in
            guard reader.count == count(inBlock: block) else { throw blocks.undecodable(block) }
            let end = forward ? min(reader.count, position + wanted) : max(-1, position - wanted)
            var found: [FlaggedEntry] = []
            found.reserveCapacity(abs(end - position))
            var at = position
            while at != end {
                guard let (entry, isLive) = reader.indexEntry(at) else { throw blocks.undecodable(block) }
                found.append(FlaggedEntry(entry: entry, isLive: isLive))
                at += forward ? 1 : -1
            }
            return found
        }
    }

    /// How many blocks start with an entry in `below`: the first entry past it lies in the
    /// block before that many, or in the first.
    func blocksBelow(_ below: KeysBelow) -> Int {
        if case .string(let wanted) = below.key, let found = stringFencesBelow(below, wanted) { return found }
        var low = 0
        var high = fences.count
        while low < high {
            let middle = (low + high) / 2
            if below.contains(fences[middle]) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// How many entries of block `block` lie in `below`, found by halving with each probed key
    /// compared where it lies.
    func entriesBelow(inBlock block: Int, _ below: KeysBelow) throws -> Int {
        try blocks.withBlock(block) { reader in
            guard reader.count == count(inBlock: block), let found = reader.indexEntriesBelow(below) else { throw blocks.undecodable(block) }
            return found
        }
    }

    /// Calls `body` with the object of each entry past `below` and inside `notAbove`, in order,
    /// until it returns `false`, for a run without marks read alone: each key is compared with
    /// the upper bound where it lies (none in a block before one that starts inside the bound),
    /// and only the object's key is decoded. The first block is
    /// searched for the start in the same visit that walks it.
    func forEachObject(after below: KeysBelow, through notAbove: KeysBelow, _ body: (StorageKey) -> Bool) throws {
        var block = max(0, blocksBelow(below) - 1)
        guard block < fences.count else { return }
        var searches = true
        while block < fences.count {
            // Constants in the closure: a variable it changes is checked for exclusive access at
            // each use.
            let (visited, search) = (block, searches)
            // A block before one that starts inside the bound lies inside it whole: its keys
            // are not compared. Not asked of the first block, where a lookup of a few entries
            // ends: there the fence's comparison would cost more than it saves.
            let inside = notAbove.isEveryEntry || (!search && visited + 1 < fences.count && notAbove.contains(fences[visited + 1]))
            let goesOn = try blocks.withBlock(visited) { reader -> Bool in
                guard reader.count == count(inBlock: visited) else { throw blocks.undecodable(visited) }
                var position = 0
                if search {
                    guard let found = reader.indexEntriesBelow(below) else { throw blocks.undecodable(visited) }
                    position = found
                }
                while inside, position < reader.count {
                    guard let read = reader.withIndexEntryBytes(position, { _, object, isLive in isLive ? object.storageKey : nil }), let object = read else {
                        throw blocks.undecodable(visited)
                    }
                    guard body(object) else { return false }
                    position += 1
                }
                while position < reader.count {
                    guard let (order, object, isLive) = reader.indexObject(position, against: notAbove.key), isLive else {
                        throw blocks.undecodable(visited)
                    }
                    guard notAbove.contains(order: order), body(object) else { return false }
                    position += 1
                }
                return true
            }
            guard goesOn else { return }
            block += 1
            searches = false
            blocks.prefetch(forPassAt: block)
        }
    }

    /// Calls `body` with each entry past `below` and inside `notAbove`, in order, until it
    /// returns `false`, for a run without marks read alone: each block is visited once and its
    /// entries decoded where they lie (a cursor visits a block once per batch it reads ahead, and
    /// collects each batch in an array first).
    func forEachEntry(after below: KeysBelow, through notAbove: KeysBelow, _ body: (consuming IndexEntry) -> Bool) throws {
        // From the start of the run (a read of the first entries in order), nothing to search.
        var block = below.isNoEntry ? 0 : max(0, blocksBelow(below) - 1)
        guard block < fences.count else { return }
        var searches = !below.isNoEntry
        while block < fences.count {
            // Constants in the closure: a variable it changes is checked for exclusive access at
            // each use.
            let (visited, search) = (block, searches)
            let goesOn = try blocks.withBlock(visited) { reader -> Bool in
                guard reader.count == count(inBlock: visited) else { throw blocks.undecodable(visited) }
                var position = 0
                if search {
                    guard let found = reader.indexEntriesBelow(below) else { throw blocks.undecodable(visited) }
                    position = found
                }
                while position < reader.count {
                    guard let (entry, isLive) = reader.indexEntry(position), isLive else { throw blocks.undecodable(visited) }
                    guard notAbove.isEveryEntry || notAbove.contains(entry), body(entry) else { return false }
                    position += 1
                }
                return true
            }
            guard goesOn else { return }
            block += 1
            searches = false
            blocks.prefetch(forPassAt: block)
        }
    }

    /// ``forEachEntry(after:through:_:)`` backward: each entry inside `notAbove` and past
    /// `below`, from the last down.
    func forEachEntryReversed(through notAbove: KeysBelow, after below: KeysBelow, _ body: (consuming IndexEntry) -> Bool) throws {
        // From the end of the run (a read of the last entries backward), nothing to search.
        var block = notAbove.isEveryEntry ? fences.count - 1 : blocksBelow(notAbove) - 1
        guard block >= 0 else { return }
        var searches = !notAbove.isEveryEntry
        var start = count(inBlock: block) - 1
        while block >= 0 {
            let (visited, search, last) = (block, searches, start)
            let goesOn = try blocks.withBlock(visited) { reader -> Bool in
                guard reader.count == count(inBlock: visited) else { throw blocks.undecodable(visited) }
                var position = last
                if search {
                    guard let found = reader.indexEntriesBelow(notAbove) else { throw blocks.undecodable(visited) }
                    position = found - 1
                }
                while position >= 0 {
                    guard let (entry, isLive) = reader.indexEntry(position), isLive else { throw blocks.undecodable(visited) }
                    guard below.isNoEntry || !below.contains(entry), body(entry) else { return false }
                    position -= 1
                }
                return true
            }
            guard goesOn else { return }
            block -= 1
            guard block >= 0 else { return }
            searches = false
            start = count(inBlock: block) - 1
        }
    }

    /// Entries minus marks among the entries in `below`: the blocks wholly below by their
    /// counts, and in the one block the flags of the entries below (none to read when the
    /// block holds no mark).
    func netCount(below: KeysBelow) throws -> Int {
        let blocksBelow = blocksBelow(below)
        guard blocksBelow > 0 else { return 0 }
        let block = blocksBelow - 1
        let total = netBefore[block]
        let inside = try entriesBelow(inBlock: block, below)
        if markCounts[block] == 0 { return total + inside }
        return try blocks.withBlock(block) { reader in
            var net = total
            for position in 0..<inside {
                guard let isLive = reader.indexFlag(position) else { throw blocks.undecodable(block) }
                net += isLive ? 1 : -1
            }
            return net
        }
    }

    /// Whether the run holds no mark: every entry it holds is in the index, unless newer
    /// sources remove it.
    var hasNoMarks: Bool { net == entryCount }
}

/// An entry of a run, and whether it adds it (true) or marks it deleted.
struct FlaggedEntry {
    let entry: IndexEntry
    let isLive: Bool
}

/// The entries of an index whose keys order before `key` (and those equal to it, when
/// `orEqual`): since entries are sorted by key, a prefix of the index, which is what a bound
/// splits off. A lower bound keeps what follows its prefix, an upper bound its prefix.
struct KeysBelow: Sendable {
    let key: IndexKey
    let orEqual: Bool
    /// Whether this is ``noEntry`` or ``everyEntry``, known without comparing keys: a walk of a
    /// whole index asks for each entry it reads.
    let isNoEntry: Bool
    let isEveryEntry: Bool

    /// No entry.
    static let noEntry = KeysBelow(key: .null, orEqual: false, isNoEntry: true, isEveryEntry: false)
    /// Every entry.
    static let everyEntry = KeysBelow(key: .greatest, orEqual: true, isNoEntry: false, isEveryEntry: true)

    /// The entries before a lower bound.
    init(before lower: IndexBound) {
        self.init(key: lower.key, orEqual: !lower.isInclusive, isNoEntry: false, isEveryEntry: false)
    }

    /// The entries up to an upper bound.
    init(through upper: IndexBound) {
        self.init(key: upper.key, orEqual: upper.isInclusive, isNoEntry: false, isEveryEntry: false)
    }

    private init(key: IndexKey, orEqual: Bool, isNoEntry: Bool, isEveryEntry: Bool) {
        self.key = key
        self.orEqual = orEqual
        self.isNoEntry = isNoEntry
        self.isEveryEntry = isEveryEntry
    }

    func contains(_ entry: IndexEntry) -> Bool {
        contains(order: IndexKey.order(entry.key, key))
    }

    /// Whether an entry whose key orders as `order` against `key` is inside.
    func contains(order: Int) -> Bool {
        order < 0 || (orEqual && order == 0)
    }
}

/// The tags of an index key in an index run's entries (`RunBlockReader.indexEntry`): a tag, then
/// 8 little-endian bytes for a number, or a varint length and the bytes for a string (UTF-8),
/// byte string or tuple (`IndexTuple`'s bytes).
enum IndexKeyTag: UInt8 {
    case null = 0
    case falseValue = 1
    case trueValue = 2
    case integer = 3
    case unsigned = 4
    case double = 5
    case string = 6
    case bytes = 7
    case tuple = 8

    /// `IndexKey.rank` of the keys with this tag.
    var rank: Int {
        switch self {
        case .null: 0
        case .falseValue, .trueValue: 1
        case .integer, .unsigned, .double: 2
        case .string: 3
        case .bytes: 4
        case .tuple: 5
        }
    }

    /// Appends `key`; nil for ``IndexKey/greatest``, which is only ever a bound.
    static func encode(_ key: IndexKey, into writer: inout ByteWriter) -> Void? {
        switch key {
        case .null: writer.byte(Self.null.rawValue)
        case .bool(let value): writer.byte(value ? Self.trueValue.rawValue : Self.falseValue.rawValue)
        case .integer(let value):
            writer.byte(Self.integer.rawValue)
            writer.uint64(UInt64(bitPattern: value))
        case .unsigned(let value):
            writer.byte(Self.unsigned.rawValue)
            writer.uint64(value)
        case .double(let value):
            writer.byte(Self.double.rawValue)
            writer.uint64(value.bitPattern)
        case .string(let value):
            writer.byte(Self.string.rawValue)
            writer.lengthPrefixed(value)
        case .bytes(let value):
            writer.byte(Self.bytes.rawValue)
            writer.lengthPrefixed(value)
        case .tuple(let value):
            writer.byte(Self.tuple.rawValue)
            writer.lengthPrefixed(value.bytes)
        case .greatest:
            return nil
        }
        return ()
    }

    /// Reads a key `encode` wrote (a checkpoint's fences).
    static func decode(_ reader: inout ByteReader) throws(DecodeFailure) -> IndexKey {
        let start = reader.position
        let tag = try reader.byte()
        switch IndexKeyTag(rawValue: tag) {
        case .null: return .null
        case .falseValue: return .bool(false)
        case .trueValue: return .bool(true)
        case .integer: return .integer(Int64(bitPattern: try reader.uint64()))
        case .unsigned: return .unsigned(try reader.uint64())
        case .double: return .double(Double(bitPattern: try reader.uint64()))
        case .string: return .string(try reader.lengthPrefixedString())
        case .bytes: return .bytes(try reader.lengthPrefixedBytes())
        case .tuple: return .tuple(IndexTuple(encoded: try reader.lengthPrefixedBytes()))
        case nil: throw DecodeFailure(offset: start, reason: "an index key has the unknown tag \(tag)")
        }
    }
}

/// Writes sorted, flagged entries as an index run: blocks of about `IndexRun.blockTarget` bytes,
/// gathered into index units by `RunUnitWriter`.
struct IndexRunWriter {
    private var units: RunUnitWriter
    private var block = ByteWriter()
    private var entryOffsets: [UInt16] = []
    private var blockLive = 0
    private var blockOffsets: [UInt64] = []
    private var fences: [IndexEntry] = []
    private var liveCounts: [UInt16] = []
    private var markCounts: [UInt16] = []
    private var previous: IndexEntry?

    init(log: any LogStorage, sequence: UInt64, offset: UInt64, unitTarget: Int = RunUnitWriter.unitTarget) {
        units = RunUnitWriter(log: log, sequence: sequence, offset: offset, kind: .indexRun, unitTarget: unitTarget)
    }

    /// Where the next unit goes: past what is written.
    var offset: UInt64 { units.offset }

    /// Adds the next entry (or, with `isLive` false, the mark of a deleted one); entries must
    /// come in strictly increasing order.
    mutating func append(_ entry: IndexEntry, isLive: Bool) throws {
        if let previous, !IndexEntry.precedes(previous, entry) {
            throw StorageError(.corrupted(path: units.log.path, offset: units.offset, reason: "the entries of an index run being written are out of order at \(entry.key)"))
        }
        previous = entry
        // Encoded in place at the block's end; moved to the next block in the rare case it
        // does not fit (a temporary writer per entry cost an allocation each).
        let start = block.bytes.count
        block.byte(isLive ? 1 : 0)
        guard IndexKeyTag.encode(entry.key, into: &block) != nil else {
            block.bytes.removeSubrange(start...)
            throw StorageError(.corrupted(path: units.log.path, offset: units.offset, reason: "an index entry holds the bound `greatest` as a key"))
        }
        OperationCodec.encodeKey(entry.object, into: &block)
        let length = block.bytes.count - start
        if !entryOffsets.isEmpty {
            let grown = RunBlockReader.prefixSize + 2 * (entryOffsets.count + 1) + block.bytes.count + RunBlockReader.checksumSize
            if block.bytes.count > UInt16.max || entryOffsets.count == Int(UInt16.max) || grown > IndexRun.blockTarget {
                let encoded = Array(block.bytes[start...])
                block.bytes.removeSubrange(start...)
                try closeBlock()
                block.bytes.append(contentsOf: encoded)
            }
        }
        if entryOffsets.isEmpty { fences.append(entry) }
        entryOffsets.append(UInt16(block.bytes.count - length))
        if isLive { blockLive += 1 }
    }

    /// Adds the next entry already encoded as `append` encodes it after the flag (its key, then
    /// its object's key), `decode` giving it whole should it start a block (a fence). The caller
    /// keeps the order, which is not checked here (`PendingIndexEntries` sorts what it writes).
    mutating func append(encoded: ArraySlice<UInt8>, isLive: Bool, decode: () throws -> IndexEntry) throws {
        if !entryOffsets.isEmpty {
            let grown = RunBlockReader.prefixSize + 2 * (entryOffsets.count + 1) + block.bytes.count + 1 + encoded.count + RunBlockReader.checksumSize
            if block.bytes.count + 1 + encoded.count > UInt16.max || entryOffsets.count == Int(UInt16.max) || grown > IndexRun.blockTarget {
                try closeBlock()
            }
        }
        if entryOffsets.isEmpty { fences.append(try decode()) }
        entryOffsets.append(UInt16(truncatingIfNeeded: block.bytes.count))
        block.byte(isLive ? 1 : 0)
        block.bytes.append(contentsOf: encoded)
        if isLive { blockLive += 1 }
    }

    /// The path of the file written, for errors.
    var path: String { units.log.path }

    private mutating func closeBlock() throws {
        guard !entryOffsets.isEmpty else { return }
        blockOffsets.append(try units.appendBlock(
            layout: RunBlockReader.indexLayout, count: entryOffsets.count,
            entries: RunUnitWriter.offsetTable(entryOffsets, then: block.bytes)))
        liveCounts.append(UInt16(blockLive))
        markCounts.append(UInt16(entryOffsets.count - blockLive))
        block = ByteWriter()
        entryOffsets.removeAll(keepingCapacity: true)
        blockLive = 0
    }

    /// Writes what is pending and returns the run, or nil when it holds no entry.
    mutating func finish() throws -> IndexRun? {
        try closeBlock()
        try units.flush()
        guard !fences.isEmpty else { return nil }
        return IndexRun(
            blockOffsets: blockOffsets, fences: fences, liveCounts: liveCounts, markCounts: markCounts, byteCount: units.bytesWritten,
            log: units.log, end: units.offset)
    }
}
