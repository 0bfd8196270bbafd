/// One persisted run of a type's primary keys: its entries (key → packed value location, 0 for
/// a deleted key) sorted by ``StorageKey/precedes(_:_:)`` in checksummed blocks of about
/// `blockTarget` bytes inside the log's index units, and, in memory, each block's offset and
/// first key (its fence). A lookup finds its block by the fences, checks the block's checksum
/// the first time any reader touches it, and searches it in place: nothing per object is held
/// in memory or rebuilt at open (docs/FILE_FORMAT.md, "Checkpoints").
final class KeyRun: Sendable {
    /// Blocks close once they pass this many bytes.
    static let blockTarget = 4096

    /// Each block's first key: integers apart when every key of the run is one, so that the
    /// common integer-keyed run searches plain numbers.
    enum Fences: Sendable {
        case integers([Int64])
        case keys([StorageKey])

        var count: Int {
            switch self {
            case .integers(let keys): keys.count
            case .keys(let keys): keys.count
            }
        }

        /// The first key of block `index`.
        func key(_ index: Int) -> StorageKey {
            switch self {
            case .integers(let keys): .integer(keys[index])
            case .keys(let keys): keys[index]
            }
        }

        /// The last block whose first key is not after `key`, or nil when `key` precedes them all.
        func block(for key: StorageKey) -> Int? {
            var low = 0
            var high = count
            if case .integers(let firsts) = self, case .integer(let wanted) = key {
                return Self.block(in: firsts, for: wanted)
            } else if case .keys(let firsts) = self, let block = Self.block(in: firsts, inPlaceFor: key) {
                return block
            } else {
                while low < high {
                    let middle = (low + high) / 2
                    if !StorageKey.precedes(key, self.key(middle)) { low = middle + 1 } else { high = middle }
                }
            }
            return low > 0 ? low - 1 : nil
        }

        /// The last block whose first key, in `firsts`, is not above `wanted`: the fences are
        /// few and hot in the cache, so plain halving.
        static func block(in firsts: [Int64], for wanted: Int64) -> Int? {
            firsts.withUnsafeBufferPointer { firsts in
                var low = 0
                var high = firsts.count
                while low < high {
                    let middle = (low + high) / 2
                    if firsts[middle] <= wanted { low = middle + 1 } else { high = middle }
                }
                return low > 0 ? low - 1 : nil
            }
        }
    }

    /// How many entries each block holds: with the fences, where in an integer block a key
    /// should lie, so that a lookup reads the one line of the block that holds it.
    let blockCounts: [UInt16]
    let fences: Fences
    /// The fences as canonical bytes when every one is a string: a string key's search compares
    /// them in place.
    let stringFences: StringFences?
    /// Entries in the run, deleted keys included.
    let entryCount: Int
    /// Bytes the run's units take in the log.
    let byteCount: Int
    /// The blocks, read in place once their checksums match.
    let blocks: RunBlocks

    /// Where each block starts in the log.
    var blockOffsets: [UInt64] { blocks.offsets }
    /// The log generation holding the run.
    var log: any LogStorage { blocks.log }

    /// A run whose blocks all lie before `end` in `log`, written by the checkpoint whose
    /// `regions` checksum the log before it (nil for a log replayed since).
    init(
        blockOffsets: [UInt64], blockCounts: [UInt16], fences: Fences, entryCount: Int, byteCount: Int, log: any LogStorage, end: UInt64,
        regions: CoveredRegions? = nil
    ) {
        self.blockCounts = blockCounts
        self.fences = fences
        if case .keys(let keys) = fences { stringFences = StringFences(keys) } else { stringFences = nil }
        self.entryCount = entryCount
        self.byteCount = byteCount
        blocks = RunBlocks(offsets: blockOffsets, log: log, end: end, what: "key run", regions: regions)
    }

    /// Calls `body` with block `index` once its checksum has matched (`RunBlocks.withBlock`).
    func withBlock<Result>(_ index: Int, _ body: (RunBlockReader) throws -> Result) throws -> Result {
        try blocks.withBlock(index, body)
    }

    private func undecodable(_ block: Int) -> StorageError {
        blocks.undecodable(block)
    }

    /// `packed(for: .integer(wanted))` without making or copying a `StorageKey`: the lookup
    /// every integer-keyed read makes.
    func packed(forInteger wanted: Int64) throws -> UInt64? {
        guard case .integers(let firsts) = fences else { return try packed(for: .integer(wanted)) }
        guard let block = Fences.block(in: firsts, for: wanted) else { return nil }
        // Where `wanted` lies between this block's first key and the next block's, scaled to
        // its entries: a dense block (keys counting up by one) has it exactly there.
        let count = Int(blockCounts[block])
        let first = firsts[block]
        let next = block + 1 < firsts.count ? firsts[block + 1] : first.addingReportingOverflow(Int64(count)).partialValue
        let span = Double(next) - Double(first)
        // Clamped as a Double: a key far past the last block's would not fit an Int.
        let scaled = span > 0 ? (Double(wanted) - Double(first)) / span * Double(count) : 0
        let guess = Int(min(Double(count - 1), max(0, scaled)))
        let found = if let reader = try blocks.mappedBlock(block) {
            reader.location(ofInteger: wanted, guess: guess)
        } else {
            try withBlock(block) { reader in reader.location(ofInteger: wanted, guess: guess) }
        }
        return try packed(found, inBlock: block)
    }

    /// The packed location a search of block `block` found, walking the log when it found a walk.
    @inline(__always)
    private func packed(_ found: RunBlockReader.IntegerSearch, inBlock block: Int) throws -> UInt64? {
        switch found {
        case .found(let packed): return packed
        case .absent: return nil
        case .damaged: throw undecodable(block)
        case .walk(let walk): return try blocks.walked(walk, inBlock: block)
        }
    }

    /// The packed location the run holds for `key` (0 when the run records its deletion), or
    /// nil when the run does not mention it.
    func packed(for key: StorageKey) throws -> UInt64? {
        if case .string(let text) = key { return try StringProbe.with(text) { try packed(for: $0) } }
        guard let block = fences.block(for: key) else { return nil }
        if case .integer(let wanted) = key {
            return try packed(withBlock(block) { reader in reader.location(ofInteger: wanted) }, inBlock: block)
        }
        return try withBlock(block) { reader -> UInt64? in
            // A walked block holds integers only, which precede every other key.
            if reader.layout == RunBlockReader.walkedLayout { return nil }
            switch reader.location(of: key) {
            case .found(let packed): return packed
            case .absent: return nil
            case .damaged: throw undecodable(block)
            }
        }
    }

    /// ``packed(for:)-(StorageKey)`` for a string key, whose canonical bytes the caller made
    /// once for every run it asks.
    func packed(for probe: StringProbe) throws -> UInt64? {
        let found = if let stringFences { probe.block(in: stringFences) } else { fences.block(for: probe.key) }
        guard let block = found else { return nil }
        // A damaged block is thrown after the search: a closure that captured the run (for its
        // error) retained and released it twice per lookup.
        let search = if let reader = try blocks.mappedBlock(block) {
            Self.search(reader, for: probe)
        } else {
            try blocks.withBlock(block) { Self.search($0, for: probe) }
        }
        switch search {
        case .found(let packed): return packed
        case .absent: return nil
        case .damaged: throw undecodable(block)
        }
    }

    /// The search of a checked block for a string key.
    @inline(__always)
    private static func search(_ reader: RunBlockReader, for probe: StringProbe) -> RunBlockReader.KeySearch {
        // A walked block holds integers only, which precede every other key.
        reader.layout == RunBlockReader.walkedLayout ? .absent : reader.location(of: probe)
    }

    /// The run's last key, read from its last block.
    func lastKey() throws -> StorageKey {
        let block = blockOffsets.count - 1
        let key = try withBlock(block) { reader -> StorageKey? in
            guard reader.count > 0 else { return nil }
            if reader.layout == RunBlockReader.walkedLayout { return reader.walkedKey(reader.count - 1).map(StorageKey.integer) }
            return reader.entry(reader.count - 1)?.key
        }
        guard let key else { throw undecodable(block) }
        return key
    }

    /// Whether the run records a deleted key (location 0). The packed, walked and packed
    /// byte-string layouts cannot hold one, so only the entries of other blocks are read.
    func holdsDeletions() throws -> Bool {
        for block in blockOffsets.indices {
            let holds = try withBlock(block) { reader -> Bool? in
                if [RunBlockReader.packedLayout, RunBlockReader.walkedLayout, RunBlockReader.packedBytesLayout].contains(reader.layout) {
                    return false
                }
                for index in 0..<reader.count {
                    guard let entry = reader.entry(index) else { return nil }
                    if entry.packed == 0 { return true }
                }
                return false
            }
            guard let holds else { throw undecodable(block) }
            if holds { return true }
        }
        return false
    }

    /// Calls `body` with every entry in key order, deleted keys (location 0) included.
    func forEachEntry(_ body: (StorageKey, UInt64) throws -> Void) throws {
        for block in blockOffsets.indices {
            blocks.prefetch(forPassAt: block)
            for (key, packed) in try blocks.keyEntries(block) { try body(key, packed) }
        }
    }
}

/// Writes sorted entries as a key run: blocks of about `KeyRun.blockTarget` bytes, gathered into
/// index units by `RunUnitWriter`.
struct KeyRunWriter {
    private var units: RunUnitWriter
    private var block = ByteWriter()
    private var entryOffsets: [UInt16] = []
    /// The block's entries while all its keys are integers (then it takes the integer layout).
    private var blockIntegers: [(key: Int64, packed: UInt64)] = []
    private var blockAllIntegers = true
    private var entries = 0
    private var blockOffsets: [UInt64] = []
    private var blockCounts: [UInt16] = []
    private var integerFences: [Int64] = []
    private var keyFences: [StorageKey] = []
    private var onlyIntegers = true
    private var previous: StorageKey?
    /// Bytes of the runs whose blocks this one lists as they lie (``reuse(_:lastKey:)``).
    private var reusedBytes = 0

    /// Whether blocks of integer keys take the packed layout (format 3 on) or the integer one.
    private let packsIntegers: Bool
    /// The block's integer entries as the packed layout would hold them.
    private var packing = PackedIntegerBlock()
    /// Whether blocks whose values follow one another in the log take the walked layout (format 4
    /// on, a log read in place).
    private let walksLocations: Bool
    /// The block's last entries, from `walkStart` on, as the walked layout would hold them: while
    /// they are all the block's, it closes in that layout.
    private var walk = WalkedIntegerBlock()
    private var walkStart = 0
    /// Whether blocks of byte-string keys of one length take the packed byte-string layout
    /// (format 6 on).
    private let packsBytes: Bool
    /// The block's entries while they are all byte strings of one length (then it takes the
    /// packed byte-string layout, and holds no general entry).
    private var bytePacking = PackedByteBlock()
    /// The checksums the run's walks check the log against.
    private let regions: CoveredRegions?

    /// Entries of a walk that make a walked block of their own rather than packed entries of the
    /// block they end: several restarts, so that a block's frame and fence cost less than the
    /// lengths and offsets the walk leaves out.
    static let minimumWalked = 4 * WalkedIntegerBlock.interval

    /// A writer of a run in the file at `log`; `packsIntegers` when the file's format has the
    /// packed layout (``LogHeader/packsEncodings(_:)``), `walksLocations` when it has the walked
    /// one (``LogHeader/walksLocations(_:)``), which needs the checksums of the log before the
    /// checkpoint, `regions` (nil where the log was replayed in this process), `packsBytes` when
    /// it has the packed byte-string one (``LogHeader/packsByteKeys(_:)``).
    init(
        log: any LogStorage, sequence: UInt64, offset: UInt64, packsIntegers: Bool, walksLocations: Bool = false,
        regions: CoveredRegions? = nil, packsBytes: Bool = false
    ) {
        units = RunUnitWriter(log: log, sequence: sequence, offset: offset, kind: .keyRun)
        self.packsIntegers = packsIntegers
        self.packsBytes = packsBytes
        self.walksLocations = walksLocations && packsIntegers
        self.regions = regions
    }

    /// Where the next unit goes: past what is written.
    var offset: UInt64 { units.offset }
    /// The log the run goes into.
    var log: any LogStorage { units.log }
    /// The last key appended: the next must follow it. Nil while the run is empty.
    var lastKey: StorageKey? { previous }

    /// Goes on writing at `offset` after a `finish`, so that a later `finish` returns the run
    /// with the entries appended since: a rewrite extends a type's run as its keys arrive.
    mutating func resume(at offset: UInt64) throws {
        try units.resume(at: offset)
    }

    /// Starts the run with the blocks of `runs` where they lie in the log, without writing them
    /// again: `runs` in key order and in log order, none overlapping the next, `lastKey` the last
    /// key of the last one. Only before the first `append`; the entries appended next must follow
    /// `lastKey`, and their blocks follow these in the log.
    mutating func reuse(_ runs: [KeyRun], lastKey: StorageKey) {
        for run in runs {
            blockOffsets += run.blockOffsets
            blockCounts += run.blockCounts
            switch run.fences {
            case .integers(let firsts):
                integerFences += firsts
                keyFences += firsts.map(StorageKey.integer)
            case .keys(let firsts):
                keyFences += firsts
                onlyIntegers = false
            }
            entries += run.entryCount
            reusedBytes += run.byteCount
        }
        previous = lastKey
    }

    /// Adds the next entry; keys must come in strictly increasing order.
    mutating func append(_ key: StorageKey, packed: UInt64) throws {
        if let previous, !StorageKey.precedes(previous, key) {
            throw StorageError(.corrupted(path: units.log.path, offset: units.offset, reason: "the keys of a run being written are out of order at \(key)"))
        }
        previous = key
        let integer: Int64? = if case .integer(let value) = key { value } else { nil }
        if blockAllIntegers, let integer {
            try appendInteger(integer, key: key, packed: packed)
            return
        }
        if bytePacking.count > 0, !bytePacking.accepts(key, packed: packed) {
            try unpack(adding: Self.encoded(key, packed: packed))
        }
        if packsBytes, blockIntegers.isEmpty, entryOffsets.isEmpty, bytePacking.accepts(key, packed: packed) {
            if bytePacking.closes(adding: key, packed: packed, target: KeyRun.blockTarget) == true { try closeBlock() }
            if bytePacking.count == 0 { keyFences.append(key) }
            blockAllIntegers = false
            onlyIntegers = false
            bytePacking.add(key, packed: packed)
            entries += 1
            return
        }
        let encoded = Self.encoded(key, packed: packed)
        if blockAllIntegers {
            // The block's first key that is not an integer: the block takes the general layout,
            // or closes in the integer one when its entries would leave no room for this key there.
            let generalBytes = blockIntegers.reduce(0) { $0 + OperationCodec.encodedSize(of: .integer($1.key)) + MemoryLayout<UInt64>.size }
            if Self.wouldOverflow(entries: blockIntegers.count, bytes: generalBytes, adding: encoded) {
                try closeBlock()
            } else {
                for entry in blockIntegers { appendGeneral(encoded: Self.encoded(.integer(entry.key), packed: entry.packed)) }
                blockIntegers.removeAll(keepingCapacity: true)
                packing.removeAll()
                walk = WalkedIntegerBlock()
                walkStart = 0
            }
            blockAllIntegers = false
        } else if wouldOverflow(adding: encoded) {
            try closeBlock()
            if let integer {
                try appendInteger(integer, key: key, packed: packed)
                return
            }
            blockAllIntegers = false
        }
        if integer == nil { onlyIntegers = false }
        if entryOffsets.isEmpty {
            if let integer { integerFences.append(integer) }
            keyFences.append(key)
        }
        appendGeneral(encoded: encoded)
        entries += 1
    }

    /// Before an entry (`encoded`) that a block of packed byte-string entries cannot take: closes
    /// the block in that layout when the general layout would not hold it with the entry, else
    /// moves its entries into the general layout, where the entry joins them.
    private mutating func unpack(adding encoded: [UInt8]) throws {
        var bytes = 0
        bytePacking.forEachEntry { key, _ in bytes += OperationCodec.encodedSize(of: key) + MemoryLayout<UInt64>.size }
        if Self.wouldOverflow(entries: bytePacking.count, bytes: bytes, adding: encoded) {
            try closeBlock()
            return
        }
        bytePacking.forEachEntry { key, packed in appendGeneral(encoded: Self.encoded(key, packed: packed)) }
        bytePacking.removeAll()
    }

    /// Adds an integer key to a block whose keys are all integers so far; its bytes are written
    /// when the block closes, in the integer layout.
    private mutating func appendInteger(_ integer: Int64, key: StorageKey, packed: UInt64) throws {
        if !blockIntegers.isEmpty, closes(adding: integer, packed: packed) {
            try closeBlock()
        }
        if blockIntegers.isEmpty {
            integerFences.append(integer)
            keyFences.append(key)
        }
        blockIntegers.append((integer, packed))
        if packsIntegers { packing.add(integer, packed: packed) }
        entries += 1
        if walksLocations { try follow(integer, packed: packed) }
    }

    /// Whether the block's entries are all one walk: it then closes in the walked layout.
    private var blockWalks: Bool {
        walksLocations && walkStart == 0 && walk.count > 0 && walk.count == blockIntegers.count
    }

    /// Extends the walk the block ends with by its newest entry, or starts a new one there; when
    /// a walk that does not start the block grows to `minimumWalked` entries, the entries before it
    /// close as a block and the walk goes on as a block of its own.
    private mutating func follow(_ integer: Int64, packed: UInt64) throws {
        if walk.accepts(packed) {
            walk.add(integer, packed: packed)
        } else {
            walk = WalkedIntegerBlock()
            walkStart = blockIntegers.count - 1
            if WalkedIntegerBlock.isWalkable(packed) {
                walk.add(integer, packed: packed)
            } else {
                walkStart += 1
            }
        }
        guard walkStart > 0, walk.count >= Self.minimumWalked else { return }
        let walked = Array(blockIntegers[walkStart...])
        let kept = walk
        blockIntegers.removeLast(walked.count)
        packing.removeAll()
        for entry in blockIntegers { packing.add(entry.key, packed: entry.packed) }
        walk = WalkedIntegerBlock()
        try closeBlock()
        integerFences.append(walked[0].key)
        keyFences.append(.integer(walked[0].key))
        blockIntegers = walked
        for entry in walked { packing.add(entry.key, packed: entry.packed) }
        walk = kept
    }

    /// Whether the integer block closes before one more entry, in the layout it would take.
    private func closes(adding integer: Int64, packed: UInt64) -> Bool {
        if blockWalks {
            if walk.accepts(packed) { return walk.closes(adding: integer, packed: packed, target: KeyRun.blockTarget) }
            // A walk long enough for a block ends where the entry does not follow it.
            if walk.count >= Self.minimumWalked { return true }
        }
        if packsIntegers, let closes = packing.closes(adding: integer, packed: packed, target: KeyRun.blockTarget) { return closes }
        return RunBlockReader.prefixSize + RunBlockReader.integerEntrySize * (blockIntegers.count + 1) + RunBlockReader.checksumSize > KeyRun.blockTarget
    }

    private static func encoded(_ key: StorageKey, packed: UInt64) -> [UInt8] {
        var encoded = ByteWriter()
        OperationCodec.encodeKey(key, into: &encoded)
        encoded.uint64(packed)
        return encoded.bytes
    }

    private mutating func appendGeneral(encoded: [UInt8]) {
        entryOffsets.append(UInt16(block.bytes.count))
        block.bytes.append(contentsOf: encoded)
    }

    /// Whether adding an entry to the block's general layout would take it past its size.
    private func wouldOverflow(adding encoded: [UInt8]) -> Bool {
        Self.wouldOverflow(entries: entryOffsets.count, bytes: block.bytes.count, adding: encoded)
    }

    /// Whether a general block of `entries` taking `bytes` would pass its size with `encoded` added.
    private static func wouldOverflow(entries: Int, bytes: Int, adding encoded: [UInt8]) -> Bool {
        let size = RunBlockReader.prefixSize + 2 * entries + bytes + RunBlockReader.checksumSize
        return entries > 0 && (bytes + encoded.count > UInt16.max || size + encoded.count + 2 > KeyRun.blockTarget)
    }

    private mutating func closeBlock() throws {
        let count = blockAllIntegers ? blockIntegers.count : bytePacking.count > 0 ? bytePacking.count : entryOffsets.count
        guard count > 0 else { return }
        let placed: UInt64
        if blockAllIntegers, blockWalks {
            placed = try units.appendBlock(layout: RunBlockReader.walkedLayout, count: count, entries: walk.encode(blockIntegers[...]))
        } else if blockAllIntegers, packsIntegers, !packing.holdsDeletion {
            placed = try units.appendBlock(layout: RunBlockReader.packedLayout, count: count, entries: packing.encode(blockIntegers))
        } else if blockAllIntegers {
            var integers = ByteWriter()
            integers.reserve(RunBlockReader.integerEntrySize * count)
            for entry in blockIntegers {
                integers.uint64(UInt64(bitPattern: entry.key))
                integers.uint64(entry.packed)
            }
            placed = try units.appendBlock(layout: RunBlockReader.integerLayout, count: count, entries: integers.bytes)
        } else if bytePacking.count > 0 {
            placed = try units.appendBlock(layout: RunBlockReader.packedBytesLayout, count: count, entries: bytePacking.encode())
        } else {
            placed = try units.appendBlock(
                layout: RunBlockReader.generalLayout, count: count,
                entries: RunUnitWriter.offsetTable(entryOffsets, then: block.bytes))
        }
        blockOffsets.append(placed)
        blockCounts.append(UInt16(truncatingIfNeeded: count))
        blockIntegers.removeAll(keepingCapacity: true)
        packing.removeAll()
        walk = WalkedIntegerBlock()
        walkStart = 0
        bytePacking.removeAll()
        blockAllIntegers = true
        block = ByteWriter()
        entryOffsets.removeAll(keepingCapacity: true)
    }

    /// Writes what is pending and returns the run, or nil when it holds no entry. Appending may
    /// go on after `resume(at:)`.
    mutating func finish() throws -> KeyRun? {
        try closeBlock()
        try units.flush()
        guard entries > 0 else { return nil }
        let fences: KeyRun.Fences = onlyIntegers ? .integers(integerFences) : .keys(keyFences)
        return KeyRun(
            blockOffsets: blockOffsets, blockCounts: blockCounts, fences: fences, entryCount: entries, byteCount: reusedBytes + units.bytesWritten,
            log: units.log, end: units.offset, regions: regions)
    }
}
