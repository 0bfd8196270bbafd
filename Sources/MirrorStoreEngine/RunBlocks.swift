/// The blocks of one persisted run (of primary keys, `KeyRun`, or of a secondary index,
/// `IndexRun`) where they lie in the log: each block is read in place from the log's mapping
/// (or from an encrypted log's cached pages, in two pieces; copied when neither can lend it)
/// and trusted only once its checksum has matched.
struct RunBlocks: Sendable {
    /// Where each block starts in the log.
    let offsets: [UInt64]
    /// The log generation holding the run.
    let log: any LogStorage
    /// Which blocks have passed their checksum, shared by every copy of the run.
    let checked: CheckedBlocks
    /// The log's bytes up to the run's end, mapped once: a read finds its block without asking
    /// the log for its mapping (and taking its lock) every time.
    let mapped: StableBytes?
    /// What the run holds, for error messages ("key run", "index run").
    let what: String
    /// Where the run's last block ends at the latest.
    let end: UInt64
    /// The checksums of the log before the checkpoint that wrote the run, which a walk through
    /// the log (a walked block's, `LocationWalk`) checks what it reads against; nil when the
    /// log was replayed, and so checked, before the run was written.
    let regions: CoveredRegions?
    /// Whether each block is read with `LogStorage.readOnce` (`pread`) rather than through the
    /// mapping: for a pass that reads each block once, whose pages the mapping would keep in the
    /// resident set (a rewrite's merge of many runs of its new file).
    let readsOnce: Bool

    /// The blocks at `offsets`, all before `end` in `log`, read through its mapping unless `readsOnce`.
    init(offsets: [UInt64], log: any LogStorage, end: UInt64, what: String, regions: CoveredRegions? = nil, readsOnce: Bool = false) {
        self.offsets = offsets
        self.log = log
        self.end = end
        self.what = what
        self.regions = regions
        self.readsOnce = readsOnce
        checked = CheckedBlocks(count: offsets.count)
        mapped = readsOnce ? nil : log.stableBytes(upTo: end)
    }

    var count: Int { offsets.count }

    /// For a pass reading blocks in order: at every `prefetchedBlocks`-th block, asks the system to
    /// read the blocks up to the next such one at once, rather than a page per block, and takes
    /// those before the previous such one out of the resident set (`LogStorage.release`), so
    /// that a pass over a whole run (a merge, a scan) does not keep all of it mapped.
    func prefetch(forPassAt block: Int) {
        guard block % Self.prefetchedBlocks == 0, offsets.indices.contains(block) else { return }
        // A run may list blocks of several checkpoints (`KeyRunWriter.reuse`), with the log's
        // other units between them: each range stops at such a gap.
        if block >= Self.prefetchedBlocks {
            let passed = block - Self.prefetchedBlocks
            let reached = lastContiguous(from: passed, through: block)
            let end = reached == block ? offsets[block] : offsets[reached] + UInt64(2 * KeyRun.blockTarget)
            log.release(at: offsets[passed], count: Int(end - offsets[passed]))
        }
        let last = min(block + Self.prefetchedBlocks, offsets.count) - 1
        let end = offsets[lastContiguous(from: block, through: last)] + UInt64(2 * KeyRun.blockTarget)
        log.prefetch(at: offsets[block], count: Int(end - offsets[block]))
    }

    /// The last block from `first` up to `last` that the blocks before it reach back to back, as
    /// far as the offsets tell: each starts at most `contiguousStep` after the one before.
    private func lastContiguous(from first: Int, through last: Int) -> Int {
        var index = first
        while index < last, offsets[index + 1] > offsets[index], offsets[index + 1] - offsets[index] <= Self.contiguousStep {
            index += 1
        }
        return index
    }

    static let prefetchedBlocks = 64
    /// More than a block takes with an index unit's frame before it (a block's entries take at
    /// most 64 KiB and their offsets): a larger step is a gap between stretches of a run, and a
    /// smaller gap costs a pass at most this many bytes read or released beside the run's.
    static let contiguousStep: UInt64 = 128 * 1024

    /// Takes the run's pages out of the process's resident set (`LogStorage.release`), once a
    /// merge has replaced it.
    func release() {
        // Each stretch of blocks back to back on its own: what lies between is not the run's.
        var first = 0
        while first < offsets.count {
            let last = lastContiguous(from: first, through: offsets.count - 1)
            // `end` may lie well past the run (a checkpoint's runs end, at the latest, at its unit).
            let stretchEnd = min(end, offsets[last] + UInt64(2 * KeyRun.blockTarget))
            if stretchEnd > offsets[first] { log.release(at: offsets[first], count: Int(stretchEnd - offsets[first])) }
            first = last + 1
        }
    }

    /// Calls `body` with block `index` once its checksum has matched. A bad block throws
    /// `corrupted` naming its offset: a run is never read unchecked, so a damaged one gives an
    /// error, never a wrong answer.
    func withBlock<Result>(_ index: Int, _ body: (RunBlockReader) throws -> Result) throws -> Result {
        let offset = offsets[index]
        // The common read first: a run that `readsOnce` maps nothing.
        if let file = mapped?.bytes {
            return try body(block(index, at: offset, in: file))
        }
        if readsOnce {
            // As much as a block takes, up to where the next one starts; read again whole when
            // its declared length is longer.
            let limit = index + 1 < offsets.count ? offsets[index + 1] : end
            guard limit > offset else { throw damage(at: offset, "the block lies past the end of the run") }
            var bytes = try log.readOnce(at: offset, count: Int(min(limit - offset, UInt64(2 * KeyRun.blockTarget))))
            if bytes.count >= RunBlockReader.prefixSize {
                let total = 4 + (Int(bytes[0]) | Int(bytes[1]) << 8 | Int(bytes[2]) << 16 | Int(bytes[3]) << 24) + RunBlockReader.checksumSize
                if total > bytes.count, UInt64(total) <= limit - offset { bytes = try log.readOnce(at: offset, count: total) }
            }
            return try bytes.withUnsafeBytes { try body(block(index, at: offset, in: $0, from: offset)) }
        }
        return try log.withBytesInPlace { file -> Result in
            if let file {
                return try body(block(index, at: offset, in: file))
            }
            // As much as a block takes, up to where the next one starts, lent in place in two
            // pieces (an encrypted log's two pages: each lock taken and each copy cost more than
            // the search); read again, copied, only for a block longer than the pieces lent.
            let limit = index + 1 < offsets.count ? offsets[index + 1] : end
            guard limit > offset else { throw damage(at: offset, "the block lies past the end of the run") }
            var read: Result?
            var total = 0
            try log.withPieces(at: offset, count: Int(min(limit - offset, UInt64(2 * KeyRun.blockTarget)))) { head, tail in
                let pieces = RunBlockReader(head: head, tail: tail)
                guard let length = pieces.declaredLength else { throw damage(at: offset, "the block lies past the end of the run") }
                total = 4 + length + RunBlockReader.checksumSize
                guard length >= 3, length <= LogFrame.maximumPayload, UInt64(total) <= limit - offset else {
                    throw damage(at: offset, "the block declares \(length) bytes, more than its place in the run holds")
                }
                guard total <= pieces.size else { return }
                let block = pieces.prefix(total)
                try check(block, index: index, offset: offset)
                read = try body(block)
            }
            if let read { return read }
            let bytes = try log.read(at: offset, count: total)
            return try bytes.withUnsafeBytes { bytes in
                let block = RunBlockReader(bytes: bytes)
                try check(block, index: index, offset: offset)
                return try body(block)
            }
        }
    }

    /// Block `index` where it lies in the log's mapping, once its checksum has matched: the
    /// common read of ``withBlock(_:_:)``, for a lookup that searches the block at once and
    /// whose closure through `withBlock` was two calls more per lookup. Nil when the run is not
    /// read through the mapping. The reader is valid while the run's log lives (`mapped`).
    @inline(__always)
    func mappedBlock(_ index: Int) throws -> RunBlockReader? {
        guard let file = mapped?.bytes else { return nil }
        return try block(index, at: offsets[index], in: file)
    }

    /// Block `index`, at `offset` of the log, whose bytes from `base` on are `file` (the mapped
    /// file from its start, or the bytes read at the block), once its checksum has matched.
    private func block(_ index: Int, at offset: UInt64, in file: UnsafeRawBufferPointer, from base: UInt64 = 0) throws -> RunBlockReader {
        guard offset >= base, offset - base <= UInt64(file.count), UInt64(file.count) - (offset - base) >= UInt64(RunBlockReader.prefixSize) else {
            throw damage(at: offset, "the block lies past the end of the file")
        }
        let start = Int(offset - base)
        let length = Int(file[start]) | Int(file[start + 1]) << 8 | Int(file[start + 2]) << 16 | Int(file[start + 3]) << 24
        let total = 4 + length + RunBlockReader.checksumSize
        guard length >= 3, total <= file.count - start else {
            throw damage(at: offset, "the block's length of \(length) bytes runs past the end of the file")
        }
        let block = RunBlockReader(bytes: UnsafeRawBufferPointer(rebasing: file[start..<(start + total)]))
        try check(block, index: index, offset: offset)
        return block
    }

    /// Checks block `index` once: its checksum, and that its layout and count fit its length
    /// (which the reader's fixed-place reads rely on). Inlined into each read, which then asks
    /// only for the block's bit; the first check is a call.
    @inline(__always)
    private func check(_ block: RunBlockReader, index: Int, offset: UInt64) throws {
        guard !checked.contains(index) else { return }
        try checkFirst(block, index: index, offset: offset)
    }

    /// ``check(_:index:offset:)`` of a block not checked yet (or being checked by another thread).
    @inline(never)
    private func checkFirst(_ block: RunBlockReader, index: Int, offset: UInt64) throws {
        guard block.checksumMatches else {
            throw damage(at: offset, "the block's checksum does not match its contents")
        }
        guard block.isWellFormed else {
            throw damage(at: offset, "the block's layout or entry count does not fit its length")
        }
        checked.insert(index)
    }

    func damage(at offset: UInt64, _ reason: String) -> StorageError {
        StorageError(.corrupted(path: log.path, offset: offset, reason: "a block of a persisted \(what) is damaged: \(reason); open the store with `recoverValidPrefix` or run `mirrorstore verify`"))
    }

    /// The packed location `walk` reaches from a restart of block `index`: through the mapping,
    /// else through windows read from the log. The bytes it reads before the value are checked
    /// against the checkpoint's regions where they lie in a region other than the value's (whose
    /// own region every read of the value checks).
    ///
    /// - Throws: `corrupted` when the walk leaves the log before the block or does not decode.
    func walked(_ walk: LocationWalk, inBlock index: Int) throws -> UInt64 {
        guard walk.end <= offsets[index] else { throw undecodable(index) }
        let from = walk.position
        var walk = walk
        if let file = mapped?.bytes {
            guard walk.advance(in: file, from: 0) == true else { throw undecodable(index) }
        } else {
            while true {
                let position = walk.position
                let count = Int(min(walk.end - min(position, walk.end), UInt64(Self.walkWindow)))
                let window = try log.read(at: position, count: count)
                let done = window.withUnsafeBytes { walk.advance(in: $0, from: position) }
                guard let done else { throw undecodable(index) }
                if done { break }
            }
        }
        try regions?.verifyWalk(from: from, to: walk.packed >> 24, in: log)
        return walk.packed
    }

    /// Bytes a walk reads at once from a log it cannot read in place.
    static let walkWindow = 4096

    /// The entries of block `index` of a key run, in order: a walked block's read with the log
    /// bytes of its values, at once and without the mapping (a pass would otherwise keep them in
    /// the resident set), and checked against the checkpoint's regions.
    ///
    /// - Throws: `corrupted` when the block is damaged or an entry does not decode.
    func keyEntries(_ index: Int) throws -> [(key: StorageKey, packed: UInt64)] {
        let span = try withBlock(index) { reader -> (start: UInt64, end: UInt64)? in reader.walkedSpan }
        var values: [UInt8] = []
        if let span {
            guard span.end <= offsets[index] else { throw undecodable(index) }
            try regions?.verify(offset: span.start, length: Int(span.end - span.start), in: log)
            values = try log.readOnce(at: span.start, count: Int(span.end - span.start))
        }
        return try withBlock(index) { reader in
            var entries: [(key: StorageKey, packed: UInt64)] = []
            entries.reserveCapacity(reader.count)
            let decoded = if let span {
                values.withUnsafeBytes { reader.appendWalkedEntries(to: &entries, log: $0, from: span.start) }
            } else {
                reader.appendEntries(to: &entries)
            }
            guard decoded else { throw undecodable(index) }
            return entries
        }
    }

    /// The error for block `index` whose entry does not decode though its checksum matched.
    func undecodable(_ index: Int) -> StorageError {
        damage(at: offsets[index], "an entry does not decode although the checksum matches")
    }
}
