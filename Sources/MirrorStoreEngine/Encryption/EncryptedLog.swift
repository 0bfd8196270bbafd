#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A log generation kept encrypted in a file: the engine reads and writes the same logical bytes
/// as in a plain file (header region, units, runs, checkpoints), and this type stores them as
/// pages sealed with AES-256-GCM behind a clear header page (docs/FILE_FORMAT.md, "Encryption").
///
/// A logical page is sealed as: length (2, clear) · nonce (12) · ciphertext · tag (16). The
/// header region's header and its two checkpoint slots each have a page of their own, so a torn
/// write of one never touches another; a checkpoint slot's page, rewritten in place at each
/// checkpoint, that does not authenticate reads as an empty slot, and the other slot decides, as
/// in a plain file. After the region every page holds 4,066 bytes. The
/// associated data is the file id, the page number and the length, so a page moved, swapped,
/// duplicated, cut short or taken from another generation does not authenticate.
///
/// Format 2 never overwrites a page that holds synced data. Two *tail slots* (physical pages 1–2
/// and 3–4) take turns holding the last, partial page: each new version of it goes to the slot not
/// in force, numbered one more and with its page number and version bound into the associated
/// data; a page is written at its own place (physical page *i* + 5) once, when it is full. A
/// torn write thus leaves the previous version in the other slot. Format 1 files (logical page
/// *i* at physical page *i* + 1, the last page rewritten in place) are still read and written as
/// they were; a writable engine rewrites them in format 2 when it opens them.
final class EncryptedLog: LogStorage {
    static let pageSize = EncryptedFileHeader.pageSize
    /// Length, nonce and tag.
    static let overhead = 2 + AES256GCM.nonceByteCount + AES256GCM.tagByteCount
    static let dataPageCapacity = pageSize - overhead
    /// Where the header region's pages start and the region ends: the header, each checkpoint
    /// slot, and the rest of the region.
    static let regionBoundaries: [UInt64] = [
        0, CheckpointSlot.offsets[0], CheckpointSlot.offsets[1],
        CheckpointSlot.offsets[1] + UInt64(CheckpointSlot.size), UInt64(LogHeader.regionSize),
    ]
    static let regionPages = regionBoundaries.count - 1
    /// The header region's pages of the two checkpoint slots, the only pages written again at
    /// their places: one that does not authenticate reads as an empty slot (`loadOrEmptySlot`).
    static let checkpointSlotPages = 1...2
    /// Nonces a writer reserves in the header at a time (one sync each).
    static let nonceReservation: UInt64 = 1 << 16
    /// Decrypted pages kept for reads: 16 MiB.
    static let cachedPages = 4096
    /// Decrypted pages a scratch file keeps (`scratch(in:)`): 1 MiB. Its runs are read back by a
    /// merge or a checkpoint in order, and looked up a block at a time.
    static let cachedScratchPages = 256
    /// Format 2: each tail slot takes two physical pages, since besides a sealed page it holds the
    /// page number and version in clear (page (8) · version (8) · length (2) · nonce · ciphertext ·
    /// tag): 4,111 bytes at most.
    static let tailSlotPages = 2
    static let tailHeaderByteCount = 16

    let file: FileLog
    var path: String { file.path }
    let header: EncryptedFileHeader
    /// Whether a writer in another process may be appending: a page or tail slot that does not
    /// authenticate may be one it is writing, and is read again before it counts as damage.
    let followsWriter: Bool
    /// Whether this is a scratch file's log (`scratch(in:)`), whose every page must authenticate:
    /// it has no checkpoint slots, so a page of the header region that does not authenticate is
    /// damage there, never an empty slot.
    let isScratch: Bool
    private let dataKey: SecretBytes
    /// Opens this log's pages under `dataKey`, the cipher keyed once.
    let opener: AES256GCM.Opener
    private let state: Lock<State>
    /// The cached pages as readers find them without the lock (`state.cache` keeps them).
    let pages: PublishedPages
    /// `state.size` as the last section under the lock left it, for readers without the lock.
    private let publishedSize = Atomic<UInt64>(0)

    private struct State: Sendable {
        /// The logical size: the end of the last page that authenticates (format 1), or of the
        /// page in the tail slot in force (format 2).
        var size: UInt64 = 0
        var physicalSize: UInt64
        /// The last page, nil when there is none; always kept in `cache`. In format 2 the page
        /// holding the end (empty when the log ends at a page's end), which lies in a tail slot.
        var lastPage: Int?
        var cache: EncryptedPageCache
        var budget: NonceBudget
        /// Nonces below this bound are recorded in the header as possibly used.
        var reservedBound: UInt64
        var slot: EncryptedFileHeader.KeySlot
        /// Format 2: the version of the tail slot in force, 0 before the first. The next version
        /// is one more and goes to slot `version % 2`, the one not in force.
        var tailVersion: UInt64 = 0
        /// Pages past the last one that authenticates (format 1), or at their places from the last
        /// page on (format 2), left by a torn or failed write: cut off before the next write.
        var staleTail = false
        /// The first page a failed write may have changed: the engine's truncation after the
        /// failure writes it again from its plaintext.
        var unsettledFrom: Int?
        /// Format 2: whether the tail version in force was written with pages it filled (it
        /// names a later page than the version before it), which the next open checks, one by
        /// one, before it trusts that version: `settle()` spares it that.
        var tailFilledPages = false

        /// Keeps `page` in the cache, never forgetting the last page for it: appends rewrite that
        /// one, and format 2 keeps it nowhere else to read from.
        mutating func remember(_ page: [UInt8], at index: Int) {
            cache.keep(page, page: index, pinned: lastPage)
        }

        /// Keeps `page` in the cache, as `remember(_:at:)` does.
        mutating func remember(_ page: DecryptedPage, at index: Int) {
            cache.keep(page, page: index, pinned: lastPage)
        }
    }

    private init(
        file: FileLog, header: EncryptedFileHeader, dataKey: SecretBytes, slot: EncryptedFileHeader.KeySlot,
        physicalSize: UInt64, reservedBound: UInt64, followsWriter: Bool, isScratch: Bool = false
    ) throws {
        self.file = file
        self.header = header
        self.dataKey = dataKey
        opener = try AES256GCM.Opener(key: dataKey)
        self.followsWriter = followsWriter
        self.isScratch = isScratch
        let pages = PublishedPages()
        self.pages = pages
        state = Lock(State(
            physicalSize: physicalSize,
            cache: EncryptedPageCache(capacity: isScratch ? Self.cachedScratchPages : Self.cachedPages, published: pages),
            budget: NonceBudget(used: slot.nonceBound), reservedBound: reservedBound, slot: slot))
    }

    /// Runs `body` with the state under the lock, then publishes the size it leaves for the
    /// readers that take no lock (`publishedSize`), before the lock is released.
    private func locked<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try state.withLock { state in
            defer { publishedSize.store(state.size, ordering: .releasing) }
            return try body(&state)
        }
    }

    /// The log's size for a read that takes no lock: what the last change under the lock left.
    var sizeWithoutLock: UInt64 { publishedSize.load(ordering: .acquiring) }

    /// A new, empty generation in `file` (emptied first): a new file id and a new random data
    /// key wrapped under `keys`. Nothing is synced: the engine syncs the file before relying on it.
    static func create(in file: FileLog, keys: EncryptionKeys, isScratch: Bool = false) throws -> EncryptedLog {
        let (envelope, dataKey) = try keys.newDataKey()
        let header = EncryptedFileHeader(fileID: try SecureRandom.bytes(EncryptedFileHeader.fileIDByteCount))
        // The first reservation is recorded at once: no page can reach the disk before this header.
        let slot = EncryptedFileHeader.KeySlot(number: 1, nonceBound: nonceReservation, envelope: envelope)
        try file.truncate(to: 0)
        try file.write(header.page(with: slot), at: 0)
        let log = try EncryptedLog(
            file: file, header: header, dataKey: dataKey, slot: slot, physicalSize: UInt64(pageSize), reservedBound: nonceReservation,
            followsWriter: false, isScratch: isScratch)
        log.locked { $0.budget = NonceBudget(used: 0) }
        return log
    }

    /// A log in `file` (an unnamed scratch file, `ScratchFile`) sealed under a new random data
    /// key that only this log holds: the header wraps it under a key drawn here and dropped at
    /// once, so no one, this process included, can open the file again. An encrypted store's
    /// scratch runs (its keys and index values) are thus never on disk in the clear, and a page
    /// changed there fails to authenticate when read (`corrupted`), as in a store file.
    static func scratch(in file: FileLog) throws -> EncryptedLog {
        try create(in: file, keys: try EncryptionKeys(.key(try SecureRandom.bytes(AES256GCM.keyByteCount))), isScratch: true)
    }

    /// The log `file` holds, as `keys` say: the file itself when both are plain, an encrypted log
    /// when both are encrypted (a new one when `writable` and the file is empty or its creation
    /// was interrupted). Throws `encryptionRequired` for an encrypted file without keys,
    /// `notEncrypted` for a plain store with keys, `wrongKey` when the keys do not open it.
    static func storage(
        for file: FileLog, keys: EncryptionKeys?, writable: Bool, followsWriter: Bool = false
    ) throws -> any LogStorage {
        let physicalSize = try file.size()
        let start = try file.read(at: 0, count: Int(min(physicalSize, UInt64(EncryptedFileHeader.magic.count))))
        let encrypted = EncryptedFileHeader.hasMagic(start)
        guard let keys else {
            if encrypted, start.count == EncryptedFileHeader.magic.count { throw StorageError(.encryptionRequired(path: file.path)) }
            return file
        }
        if !start.isEmpty, !encrypted {
            if zip(start, LogHeader.magic).allSatisfy({ $0 == $1 }) { throw StorageError(.notEncrypted(path: file.path)) }
            throw StorageError(.notAStore(path: file.path))
        }
        guard physicalSize >= UInt64(pageSize) else {
            // A new file, or a creation cut short before its header page was whole: no page was
            // sealed yet. Someone else's file being created holds nothing to read yet.
            return writable ? try create(in: file, keys: keys) : MemoryLog()
        }
        let (header, slot) = try EncryptedFileHeader.decode(try file.read(at: 0, count: pageSize), path: file.path)
        let dataKey = try keys.dataKey(opening: slot.envelope, path: file.path)
        let log = try EncryptedLog(
            file: file, header: header, dataKey: dataKey, slot: slot, physicalSize: physicalSize, reservedBound: slot.nonceBound,
            followsWriter: followsWriter)
        try log.locked { try log.findEnd(&$0) }
        // The header region's pages are few and read on every open; the rest of the region,
        // which nothing reads, is checked too, so that no page of the file goes unchecked.
        if try log.size() >= UInt64(LogHeader.regionSize) {
            _ = try log.read(at: 0, count: LogHeader.regionSize)
        }
        return log
    }

    // MARK: Geometry

    static func start(ofPage index: Int) -> UInt64 {
        index < regionPages
            ? regionBoundaries[index]
            : UInt64(LogHeader.regionSize) + UInt64(index - regionPages) * UInt64(dataPageCapacity)
    }

    static func capacity(ofPage index: Int) -> Int {
        index < regionPages ? Int(regionBoundaries[index + 1] - regionBoundaries[index]) : dataPageCapacity
    }

    static func page(containing offset: UInt64) -> Int {
        guard offset >= UInt64(LogHeader.regionSize) else {
            return regionBoundaries.lastIndex { $0 <= offset } ?? 0
        }
        return regionPages + Int((offset - UInt64(LogHeader.regionSize)) / UInt64(dataPageCapacity))
    }

    /// Whether the file is in format 1: the last page rewritten at its place, no tail slots.
    var rewritesInPlace: Bool { header.version < 2 }

    /// Where page `index` lies when it is written at its place: after the header page, and in
    /// format 2 after the two tail slots.
    func homeOffset(_ index: Int) -> UInt64 {
        UInt64(Self.pageSize) * UInt64(index + (rewritesInPlace ? 1 : 1 + 2 * Self.tailSlotPages))
    }

    static func tailSlotOffset(_ slot: Int) -> UInt64 {
        UInt64(pageSize) * UInt64(1 + slot * tailSlotPages)
    }

    /// The file id, the page number and the length; for a tail slot also its version, so that a
    /// page at its place and a tail slot never pass for each other.
    func associatedData(page index: Int, length: Int, tailVersion: UInt64? = nil) -> [UInt8] {
        var writer = ByteWriter()
        writer.bytes = header.fileID
        writer.uint64(UInt64(index))
        writer.byte(UInt8(truncatingIfNeeded: length))
        writer.byte(UInt8(truncatingIfNeeded: length >> 8))
        if let tailVersion { writer.uint64(tailVersion) }
        return writer.bytes
    }

    // MARK: Pages

    /// The plaintext of page `index` from its physical bytes (from `start` on: a tail slot's
    /// sealed page follows its page number and version), sealed with `tailVersion` when in a tail slot.
    private func open(_ physical: [UInt8], page index: Int, from start: Int = 0, tailVersion: UInt64? = nil) throws -> [UInt8] {
        let length = try sealedLength(physical, page: index, from: start)
        let nonceStart = start + 2
        let nonceEnd = nonceStart + AES256GCM.nonceByteCount
        let opened = Result { () throws(StorageError) in
            try opener.open(
                physical[nonceEnd..<(nonceEnd + length + AES256GCM.tagByteCount)],
                nonce: Array(physical[nonceStart..<nonceEnd]),
                associatedData: associatedData(page: index, length: length, tailVersion: tailVersion))
        }
        switch opened {
        case .success(let plaintext): return plaintext
        case .failure(let error) where error.kind == .authenticationFailed: throw unauthentic(page: index)
        case .failure(let error): throw error
        }
    }

    /// The plaintext length page `index` declares in its physical bytes (from `start` on),
    /// checked against what the page and the bytes can hold.
    func sealedLength(_ physical: [UInt8], page index: Int, from start: Int) throws -> Int {
        guard physical.count >= start + Self.overhead else { throw damage(page: index, "is cut short") }
        let length = Int(physical[start]) | Int(physical[start + 1]) << 8
        guard length <= Self.capacity(ofPage: index), start + Self.overhead + length <= physical.count else {
            throw damage(page: index, "declares \(length) bytes, more than it holds")
        }
        return length
    }

    func unauthentic(page index: Int) -> StorageError {
        damage(page: index, "does not authenticate: it was changed, moved, or sealed for another file or place")
    }

    func damage(page index: Int, _ reason: String) -> StorageError {
        let start = Self.start(ofPage: index)
        return StorageError(.corrupted(path: path, offset: start, reason: "the encrypted page holding bytes from \(start) on \(reason)"))
    }

    /// Page `index` read from the file and decrypted. Read with `pread`, not through the file's
    /// mapping: the plaintext is kept in the page cache, and a page read through the mapping would
    /// stay in the resident set beside it (every page of the file, once read) while the log lives.
    private func load(_ index: Int, physicalSize: UInt64) throws -> [UInt8] {
        let offset = homeOffset(index)
        guard offset < physicalSize else {
            throw StorageError(.corrupted(path: path, offset: Self.start(ofPage: index), reason: "the encrypted file ends before this page"))
        }
        return try open(try file.readOnce(at: offset, count: Int(min(UInt64(Self.pageSize), physicalSize - offset))), page: index)
    }

    /// Page `index` as the engine reads it: as `load` gives it, except that a checkpoint slot's
    /// page (logical page 1 or 2) that is in the file but does not open reads as an empty slot,
    /// all zeros, and `authentic` is false. Each checkpoint rewrites its slot's page in place, and
    /// a power cut may tear that write; a plain file's torn slot fails its checksum and the other
    /// slot decides (`CheckpointSlot.decode` takes zeros for no slot, as it does a bad checksum),
    /// and so here. The checkpoint is only an accelerator: without it opening replays more of the
    /// log, to the same state. Any other page that does not authenticate is damage.
    private func loadOrEmptySlot(_ index: Int, physicalSize: UInt64) throws -> (page: [UInt8], authentic: Bool) {
        do {
            return (try load(index, physicalSize: physicalSize), true)
        } catch let error as StorageError {
            guard !isScratch, Self.checkpointSlotPages.contains(index), homeOffset(index) < physicalSize, case .corrupted = error.kind
            else { throw error }
            return ([UInt8](repeating: 0, count: Self.capacity(ofPage: index)), false)
        }
    }

    /// Finds the log's end and sets the size from it, as the file's format says. Beside a
    /// writer, a page or tail slot it is writing may not authenticate for a moment: the search
    /// is made again (up to five times, a millisecond apart) before a failure counts as damage.
    private func findEnd(_ state: inout State) throws {
        for attempt in 1... {
            do {
                if rewritesInPlace {
                    try findLastPage(&state)
                } else {
                    try findTail(&state)
                }
                return
            } catch let error as StorageError {
                guard followsWriter, attempt < 5, case .corrupted = error.kind else { throw error }
                var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
                _ = nanosleep(&pause, nil)
            }
        }
    }

    /// Format 1: finds the last page that authenticates and sets the size from it. Pages after
    /// it (a torn write) are left past the end; a header region page that does not authenticate
    /// is damage.
    private func findLastPage(_ state: inout State) throws {
        let physicalSize = try file.size()
        state.physicalSize = physicalSize
        guard physicalSize > homeOffset(0) else {
            state.size = 0
            state.lastPage = nil
            return
        }
        let last = Int((physicalSize - homeOffset(0) - 1) / UInt64(Self.pageSize))
        if last < Self.regionPages, try authentic(last, physicalSize: physicalSize) == nil {
            // The header region is written whole before any unit: its writing was cut short
            // when the store was created, and no commit was made.
            state.size = 0
            state.lastPage = nil
            state.staleTail = true
            return
        }
        try scanBack(from: last, &state)
    }

    /// Sets the end after the last page at its place, from `last` down, that authenticates;
    /// `last`, the physically last page, is checked for having been moved first.
    private func scanBack(from last: Int, _ state: inout State) throws {
        var index = last
        // Each page is read once: a writer beside may rewrite the last page between two reads.
        while true {
            if let page = try authentic(index, physicalSize: state.physicalSize) {
                state.size = Self.start(ofPage: index) + UInt64(page.count)
                state.lastPage = index
                state.remember(page, at: index)
                return
            }
            guard index >= Self.regionPages else {
                throw damage(page: index, "does not authenticate: it was changed, moved, or sealed for another file or place")
            }
            if index == last { try requireNotMoved(last, physicalSize: state.physicalSize) }
            state.staleTail = true
            index -= 1
        }
    }

    /// A version of the last page read from a tail slot.
    private struct Tail {
        var page: Int
        var version: UInt64
        var bytes: [UInt8]
    }

    /// The version tail slot `slot` holds, or nil when it holds none that authenticates there
    /// (never written, torn, damaged, or the other slot's version copied into it).
    private func tail(inSlot slot: Int, physicalSize: UInt64) throws -> Tail? {
        let offset = Self.tailSlotOffset(slot)
        guard physicalSize >= offset + UInt64(Self.tailHeaderByteCount + Self.overhead) else { return nil }
        let physical = try file.read(at: offset, count: Int(min(UInt64(Self.tailSlotPages * Self.pageSize), physicalSize - offset)))
        func field(_ at: Int) -> UInt64 {
            (0..<8).reduce(0) { $0 | UInt64(physical[at + $1]) << (8 * UInt64($1)) }
        }
        let page = field(0)
        let version = field(8)
        // Versions alternate between the slots; a page number past any file is damage.
        guard version > 0, version % 2 == UInt64(slot), page < 1 << 40 else { return nil }
        do {
            let bytes = try open(physical, page: Int(page), from: Self.tailHeaderByteCount, tailVersion: version)
            // A full page is written at its place, never in a tail slot.
            guard bytes.count < Self.capacity(ofPage: Int(page)) else { return nil }
            return Tail(page: Int(page), version: version, bytes: bytes)
        } catch let error as StorageError {
            if case .corrupted = error.kind { return nil }
            throw error
        }
    }

    /// Format 2: the end is the end of the newest tail slot version whose pages are in place.
    /// The pages its write filled (from the other slot's page, which the version before it
    /// named, to its own) must authenticate at their places; if they do not, that write was torn
    /// and the other slot's version is in force. Pages at their places from the last page on are
    /// stale (a torn write's), and cut off before the next write.
    private func findTail(_ state: inout State) throws {
        let physicalSize = try file.size()
        state.physicalSize = physicalSize
        let tails = try (0..<2).compactMap { try tail(inSlot: $0, physicalSize: physicalSize) }.sorted { $0.version > $1.version }
        state.tailVersion = tails.first?.version ?? 0
        for (position, candidate) in tails.enumerated() {
            // The pages before the last one must all be in the file.
            guard candidate.page == 0
                || physicalSize >= homeOffset(candidate.page - 1) + UInt64(Self.capacity(ofPage: candidate.page - 1) + Self.overhead)
            else { continue }
            if position == 0 {
                // The pages its write filled: from the page the version before it named. The
                // first version's write filled every page before it (the header region). When the
                // other slot holds no version before it (damaged, or a reader saw the writer
                // write several), there is nothing to fall back to: pages missing are found when read.
                let previous = tails.count > 1 && tails[1].version == candidate.version - 1 ? tails[1] : nil
                let from = previous.map { min($0.page, candidate.page) } ?? (candidate.version == 1 ? 0 : candidate.page)
                var filled: [(index: Int, page: [UInt8])] = []
                for index in from..<candidate.page {
                    guard let page = try authentic(index, physicalSize: physicalSize), page.count == Self.capacity(ofPage: index) else { break }
                    filled.append((index, page))
                }
                guard filled.count == candidate.page - from else { continue }
                for (index, page) in filled { state.remember(page, at: index) }
                state.tailFilledPages = !filled.isEmpty
            }
            state.tailVersion = candidate.version
            state.size = Self.start(ofPage: candidate.page) + UInt64(candidate.bytes.count)
            state.lastPage = candidate.page
            state.cache.forget(candidate.page)
            state.remember(candidate.bytes, at: candidate.page)
            state.staleTail = physicalSize > homeOffset(candidate.page)
            return
        }
        if tails.isEmpty {
            // Version 1 goes to slot 1 and version 2, the first commit's, to slot 0: with slot 0
            // never written and nothing past the header region's pages, the store's creation was
            // cut short before its first write was whole, and no commit was made. A file that
            // ends before the pages at their places was cut off there: no commit is left.
            let slotZeroWritten = try physicalSize >= homeOffset(0)
                && file.read(at: Self.tailSlotOffset(0), count: Self.tailSlotPages * Self.pageSize).contains { $0 != 0 }
            guard physicalSize <= homeOffset(Self.regionPages), !slotZeroWritten else {
                throw StorageError(.corrupted(
                    path: path, offset: Self.start(ofPage: Self.regionPages), reason: "neither tail slot of the encrypted file authenticates"))
            }
            state.size = 0
            state.lastPage = 0
            state.staleTail = physicalSize > UInt64(Self.pageSize)
            return
        }
        // The tails name pages past the file's end: the file was cut off, which leaves a store
        // with fewer commits (as in format 1). Its end is after the last page at its place.
        state.staleTail = true
        guard physicalSize > homeOffset(0) else {
            state.size = 0
            state.lastPage = 0
            return
        }
        let last = Int((physicalSize - homeOffset(0) - 1) / UInt64(Self.pageSize))
        if last < Self.regionPages, try authentic(last, physicalSize: physicalSize) == nil {
            state.size = 0
            state.lastPage = 0
            return
        }
        try scanBack(from: last, &state)
        state.lastPage = Self.page(containing: state.size)
        state.staleTail = true
    }

    /// Throws `corrupted` when the physically last page, which does not authenticate as page
    /// `index`, does as a page up to `movedPageWindow` places away: pages were removed or
    /// inserted before it, which must not pass for a torn write and leave a prefix.
    private func requireNotMoved(_ index: Int, physicalSize: UInt64) throws {
        let offset = homeOffset(index)
        let physical = try file.read(at: offset, count: Int(min(UInt64(Self.pageSize), physicalSize - offset)))
        let candidates = max(Self.regionPages, index - Self.movedPageWindow)...(index + Self.movedPageWindow)
        for other in candidates where other != index {
            if (try? open(physical, page: other)) != nil {
                throw damage(page: index, "holds page \(other): pages were removed, inserted or moved")
            }
        }
    }

    /// How far from its place the last page is looked for before a failure counts as a torn write.
    static let movedPageWindow = 64

    /// Page `index`, or nil when it does not authenticate (other failures throw).
    private func authentic(_ index: Int, physicalSize: UInt64) throws -> [UInt8]? {
        do {
            return try load(index, physicalSize: physicalSize)
        } catch let error as StorageError {
            if case .corrupted = error.kind { return nil }
            throw error
        }
    }

    /// The current plaintext of page `index`, for a writer about to change it.
    private func current(_ index: Int, state: inout State) throws -> [UInt8] {
        guard Self.start(ofPage: index) < state.size else { return [] }
        if let cached = state.cache[index] { return cached.array }
        let (page, authentic) = try loadOrEmptySlot(index, physicalSize: state.physicalSize)
        if authentic { state.remember(page, at: index) }
        return page
    }

    /// `plaintext` sealed as page `index`, with a nonce from the budget (reserved in the header
    /// first); in a tail slot, as its version `tailVersion`, after the page number and version.
    private func seal(_ plaintext: [UInt8], page index: Int, tailVersion: UInt64? = nil, state: inout State) throws -> [UInt8] {
        if state.budget.used >= state.reservedBound {
            var slot = state.slot
            slot.number += 1
            slot.nonceBound = min(state.budget.used + Self.nonceReservation, state.budget.limit)
            try file.write(slot.encoded(), at: EncryptedFileHeader.slotOffsets[Int(slot.number % 2)])
            // Durable before any page sealed under the reservation can be.
            try file.sync()
            state.slot = slot
            state.reservedBound = slot.nonceBound
        }
        let nonce = try state.budget.nextNonce()
        let sealed = try AES256GCM.seal(
            plaintext, key: dataKey, nonce: nonce,
            associatedData: associatedData(page: index, length: plaintext.count, tailVersion: tailVersion))
        var writer = ByteWriter()
        if let tailVersion {
            writer.uint64(UInt64(index))
            writer.uint64(tailVersion)
        }
        writer.byte(UInt8(truncatingIfNeeded: plaintext.count))
        writer.byte(UInt8(truncatingIfNeeded: plaintext.count >> 8))
        return writer.bytes + nonce + sealed
    }

    // MARK: LogStorage

    func size() throws -> UInt64 {
        try locked { state in
            if followsWriter {
                let physicalSize = try file.size()
                // In format 2 a commit may change only a tail slot, not the file's size.
                if physicalSize != state.physicalSize || !rewritesInPlace {
                    var found = state
                    // Pages found go to a cache of their own, then to this one if the end found
                    // is taken: readers without the lock read this one's pages.
                    found.cache = EncryptedPageCache(capacity: state.cache.capacity)
                    try findEnd(&found)
                    // A page the writer is rewriting fails to authenticate for a moment: what
                    // was read before stays valid (a writer never cuts below its last whole unit).
                    if found.size >= state.size {
                        let pages = found.cache.held
                        found.cache = state.cache
                        state = found
                        for (index, page) in pages { state.remember(page, at: index) }
                    }
                }
            }
            return state.size
        }
    }

    /// What a read of `count` bytes from `within` on in page `index` finds under one lock: the
    /// log's size, the cached page, and the next page when the read runs into it and the first
    /// one is full. One lock for the common reads, a value within one cached page or a run block
    /// across two: each lock taken and each page looked up again cost more than a copy. The
    /// caller has found the page and `within` already.
    func cachedPages(page index: Int, within: Int, count: Int) -> (size: UInt64, first: DecryptedPage?, next: DecryptedPage?) {
        let capacity = Self.capacity(ofPage: index)
        let spansNext = within + count > capacity
        let (size, first, next) = locked { ($0.size, $0.cache[index], spansNext ? $0.cache[index + 1] : nil) }
        return (size, first, first?.count == capacity ? next : nil)
    }

    func read(at offset: UInt64, count: Int) throws -> [UInt8] {
        guard count > 0 else { return [] }
        let index = Self.page(containing: offset)
        let within = Int(offset - Self.start(ofPage: index))
        let capacity = Self.capacity(ofPage: index)
        let size = sizeWithoutLock
        guard offset <= size, UInt64(count) <= size - offset else {
            throw StorageError(.corrupted(path: path, offset: offset, reason: "the log ends before \(count) bytes could be read"))
        }
        // Copied from the cached pages where they lie, without the lock (`PublishedPages.Reading.copy`).
        if let copied = pages.withReading({ $0.copy(page: index, from: within, count: count, capacity: capacity) }) { return copied }
        if !followsWriter { return try readPages(at: offset, count: count, keeping: true) }
        var result: [UInt8] = []
        result.reserveCapacity(count)
        var position = offset
        while result.count < count {
            let index = Self.page(containing: position)
            let within = Int(position - Self.start(ofPage: index))
            let take = min(Self.capacity(ofPage: index) - within, count - result.count)
            let page = try plaintext(ofPage: index, through: within + take)
            page.withUnsafeBytes { result.append(contentsOf: $0[within..<(within + take)]) }
            position += UInt64(take)
        }
        return result
    }

    /// Bytes a pass reads once (a stream's pieces read back at its commit, a merge's runs, a
    /// span of values): as `read` gives them, but the pages not cached are decrypted without
    /// being kept, so that a pass over more than the cache holds neither fills it nor evicts the
    /// pages other reads come back to.
    func readOnce(at offset: UInt64, count: Int) throws -> [UInt8] {
        guard count > 0 else { return [] }
        // Beside a writer a page may be one it is rewriting: `read` reads it again before it
        // counts as damage.
        if followsWriter { return try read(at: offset, count: count) }
        return try readPages(at: offset, count: count, keeping: false)
    }

    /// `count` bytes at `offset`, from the cached pages where they are, else read in one `pread`
    /// per stretch of pages not cached (rather than one per page) and decrypted, each page then
    /// kept in the cache when `keeping`; when not, a page the read takes whole is decrypted
    /// straight into the result (`PlaintextAssembly`), with no array of its own. Not beside a
    /// writer (`followsWriter`).
    private func readPages(at offset: UInt64, count: Int, keeping: Bool) throws -> [UInt8] {
        let (size, physicalSize, lastPage) = locked { ($0.size, $0.physicalSize, $0.lastPage) }
        guard offset <= size, UInt64(count) <= size - offset else {
            throw StorageError(.corrupted(path: path, offset: offset, reason: "the log ends before \(count) bytes could be read"))
        }
        let end = offset + UInt64(count)
        let lastNeeded = Self.page(containing: end - 1)
        /// The part of page `index` the read takes.
        func taken(of index: Int) -> Range<Int> {
            let start = Self.start(ofPage: index)
            return Int(max(offset, start) - start)..<Int(min(end, start + UInt64(Self.capacity(ofPage: index))) - start)
        }
        return try PlaintextAssembly.assembled(count: count, at: offset, path: path) { result in
            /// Appends what the read takes of page `index`, whose plaintext is `page`.
            func take(_ page: UnsafeRawBufferPointer, of index: Int) throws {
                let part = taken(of: index)
                guard page.count >= part.upperBound else { throw shortPage(index) }
                result.append(UnsafeRawBufferPointer(rebasing: page[part]))
            }
            var index = Self.page(containing: offset)
            while index <= lastNeeded {
                if let cached = locked({ $0.cache[index] }) {
                    try cached.withUnsafeBytes { try take($0, of: index) }
                    index += 1
                    continue
                }
                // The header region's pages (a checkpoint slot's may read as empty) and the last
                // page (in a tail slot) are read as `read` reads them.
                if index < Self.regionPages || index == lastPage {
                    let page = try plaintext(ofPage: index, through: 0)
                    try page.withUnsafeBytes { try take($0, of: index) }
                    index += 1
                    continue
                }
                var stretchEnd = index + 1
                while stretchEnd <= lastNeeded, stretchEnd != lastPage, locked({ $0.cache[stretchEnd] }) == nil {
                    stretchEnd += 1
                }
                let physicalStart = homeOffset(index)
                guard physicalStart < physicalSize else {
                    throw StorageError(.corrupted(path: path, offset: Self.start(ofPage: index), reason: "the encrypted file ends before this page"))
                }
                let physical = try file.readOnce(at: physicalStart, count: Int(min(homeOffset(stretchEnd), physicalSize) - physicalStart))
                for page in index..<stretchEnd {
                    let start = (page - index) * Self.pageSize
                    guard start < physical.count else {
                        throw StorageError(.corrupted(path: path, offset: Self.start(ofPage: page), reason: "the encrypted file ends before this page"))
                    }
                    if !keeping, taken(of: page) == 0..<Self.capacity(ofPage: page) {
                        try result.decrypt(physical, page: page, from: start, of: self)
                        continue
                    }
                    let plaintext = try open(physical, page: page, from: start)
                    try plaintext.withUnsafeBytes { try take($0, of: page) }
                    if keeping { locked { $0.remember(plaintext, at: page) } }
                }
                index = stretchEnd
            }
        }
    }

    func shortPage(_ index: Int) -> StorageError {
        StorageError(.corrupted(path: path, offset: Self.start(ofPage: index), reason: "an encrypted page holds fewer bytes than the log has"))
    }

    /// Page `index`, holding at least `end` bytes: from the cache, or read and decrypted outside
    /// the lock (full pages never change; the last page is always cached).
    func plaintext(ofPage index: Int, through end: Int) throws -> DecryptedPage {
        let (cached, physicalSize) = locked { ($0.cache[index], $0.physicalSize) }
        if let cached, cached.count >= end { return cached }
        if followsWriter {
            for _ in 0..<5 {
                // The writer may have rewritten the page longer since the size was last looked at.
                if let page = try authentic(index, physicalSize: max(physicalSize, try file.size())), page.count >= end {
                    let kept = DecryptedPage(page)
                    locked { $0.remember(kept, at: index) }
                    return kept
                }
                var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
                _ = nanosleep(&pause, nil)
            }
        }
        // A checkpoint slot's page that still does not authenticate reads as an empty slot, not
        // kept: a later read (another scan beside the writer) finds the page as it is then.
        let (page, authentic) = try loadOrEmptySlot(index, physicalSize: followsWriter ? max(physicalSize, try file.size()) : physicalSize)
        guard page.count >= end else { throw shortPage(index) }
        let kept = DecryptedPage(page)
        if authentic { locked { $0.remember(kept, at: index) } }
        return kept
    }

    func write(_ bytes: [UInt8], at offset: UInt64) throws {
        guard !bytes.isEmpty else { return }
        try locked { state in
            if rewritesInPlace {
                try writeInPlace(bytes, at: offset, &state)
            } else {
                try writeWithTail(bytes, at: offset, &state)
            }
        }
    }

    /// Format 1: rewrites the last page whole, at its place, with the pages after it.
    private func writeInPlace(_ bytes: [UInt8], at offset: UInt64, _ state: inout State) throws {
        if state.staleTail {
            try file.truncate(to: homeOffset((state.lastPage ?? -1) + 1))
            state.physicalSize = homeOffset((state.lastPage ?? -1) + 1)
            state.staleTail = false
        }
        var data = bytes[...]
        var position = offset
        if position > state.size {
            // A gap reads as zeros, as in a file.
            data = ([UInt8](repeating: 0, count: Int(position - state.size)) + bytes)[...]
            position = state.size
        }
        var physical: [UInt8] = []
        var firstIndex = Self.page(containing: position)
        let physicalStart = homeOffset(firstIndex)
        var written: [(index: Int, page: [UInt8])] = []
        var consumed = data.startIndex
        while consumed < data.endIndex {
            let index = firstIndex
            let within = Int(position - Self.start(ofPage: index))
            let take = min(Self.capacity(ofPage: index) - within, data.endIndex - consumed)
            var page: [UInt8] = []
            if within > 0 || take < Self.capacity(ofPage: index) { page = try current(index, state: &state) }
            if page.count < within + take { page += [UInt8](repeating: 0, count: within + take - page.count) }
            page.replaceSubrange(within..<(within + take), with: data[consumed..<(consumed + take)])
            let sealed = try seal(page, page: index, state: &state)
            // Header region pages do not fill their physical page: the gap stays zeros.
            let gap = Int(homeOffset(index) - physicalStart) - physical.count
            if gap > 0 { physical += [UInt8](repeating: 0, count: gap) }
            physical += sealed
            written.append((index, page))
            consumed += take
            position += UInt64(take)
            firstIndex += 1
        }
        do {
            try file.write(physical, at: physicalStart)
        } catch {
            state.unsettledFrom = min(state.unsettledFrom ?? .max, Self.page(containing: min(offset, state.size)))
            throw error
        }
        state.physicalSize = max(state.physicalSize, physicalStart + UInt64(physical.count))
        for (index, page) in written {
            state.cache.forget(index)
            if index >= (state.lastPage ?? -1) {
                state.lastPage = index
                state.size = max(state.size, Self.start(ofPage: index) + UInt64(page.count))
            }
            state.remember(page, at: index)
        }
    }

    /// Format 2, at a clean close: when the tail version in force filled pages (which the next
    /// open would decrypt one by one to be sure the write that filled them was whole), syncs, then
    /// writes the same last page as the next version, which fills none, and syncs that. The next
    /// open then trusts the tail at once: a version is written only after everything before it
    /// is synced. A torn or failed write of it leaves the version before, as any tail write does.
    func settle() throws {
        try locked { state in
            guard !rewritesInPlace, !followsWriter, state.tailFilledPages, !state.staleTail, state.unsettledFrom == nil,
                  let last = state.lastPage else { return }
            try file.sync()
            let page = try current(last, state: &state)
            let sealed = try seal(page, page: last, tailVersion: state.tailVersion + 1, state: &state)
            let offset = Self.tailSlotOffset(Int((state.tailVersion + 1) % 2))
            try file.write(sealed, at: offset)
            try file.sync()
            state.physicalSize = max(state.physicalSize, offset + UInt64(sealed.count))
            state.tailVersion += 1
            state.tailFilledPages = false
        }
    }

    /// Cuts the log to `size` bytes. Format 2 writes the new last page to the tail slot not in
    /// force and syncs it, then cuts the pages at their places from that page on and syncs the
    /// cut: a crash leaves the old last page or the new one in force, and no page cut off comes
    /// back under a later write. Format 1 cuts the pages after the new last one first, then
    /// rewrites that page shorter in one write, so that a crash leaves it whole (a kill does;
    /// a power cut may tear it).
    func truncate(to size: UInt64) throws {
        try locked { state in
            if rewritesInPlace {
                try truncateInPlace(to: size, &state)
            } else {
                try truncateWithTail(to: size, &state)
            }
        }
    }

    private func truncateInPlace(to size: UInt64, _ state: inout State) throws {
        guard size < state.size || state.staleTail || state.unsettledFrom != nil else { return }
        let target = min(size, state.size)
        let index = Self.page(containing: target)
        let keep = Int(target - Self.start(ofPage: index))
        // Taken before the cache forgets the page: a failed write may have damaged it on disk.
        let kept = keep > 0 ? Array(try current(index, state: &state).prefix(keep)) : []
        state.cache.forget(from: index)
        if keep == 0 {
            try file.truncate(to: homeOffset(index))
            state.physicalSize = homeOffset(index)
            state.size = target
            state.lastPage = index > 0 ? index - 1 : nil
            if let last = state.lastPage {
                let page = try current(last, state: &state)
                if let unsettled = state.unsettledFrom, unsettled <= last {
                    let sealed = try seal(page, page: last, state: &state)
                    try file.write(sealed, at: homeOffset(last))
                }
                state.remember(page, at: last)
            }
        } else {
            let page = kept
            try file.truncate(to: homeOffset(index + 1))
            let sealed = try seal(page, page: index, state: &state)
            try file.write(sealed, at: homeOffset(index))
            try file.truncate(to: homeOffset(index) + UInt64(sealed.count))
            state.physicalSize = homeOffset(index) + UInt64(sealed.count)
            state.size = target
            state.lastPage = index
            state.cache.forget(index)
            state.remember(page, at: index)
        }
        state.staleTail = false
        state.unsettledFrom = nil
    }

    /// Format 2: cuts off the pages a torn or failed write left at their places from the last
    /// page on, and syncs the cut, so that none of them is taken for a page written later.
    private func cutStaleTail(_ state: inout State) throws {
        guard state.staleTail else { return }
        // The file's own size: a failed write may have written more than was counted.
        let end = min(homeOffset(state.lastPage ?? 0), try file.size())
        try file.truncate(to: end)
        try file.sync()
        state.physicalSize = end
        state.staleTail = false
    }

    /// Format 2: writes the pages `bytes` fill at their places, and the new last, partial page (or
    /// an empty one when the log ends at a page's end) to the tail slot not in force as the next
    /// version. No page holding synced data is written over: a full page's place held nothing,
    /// and the tail slot in force is left alone. Header region pages written again (the
    /// checkpoint slots) are rewritten at their places, whole, with a new nonce: a torn one reads
    /// as an empty slot until then (`loadOrEmptySlot`).
    private func writeWithTail(_ bytes: [UInt8], at offset: UInt64, _ state: inout State) throws {
        try cutStaleTail(&state)
        var data = bytes[...]
        var position = offset
        if position > state.size {
            // A gap reads as zeros, as in a file.
            data = ([UInt8](repeating: 0, count: Int(position - state.size)) + bytes)[...]
            position = state.size
        }
        let end = position + UInt64(data.count)
        let newEnd = max(state.size, end)
        let newLast = Self.page(containing: newEnd)
        /// Page `index` as the write leaves it, `length` bytes long.
        func merged(_ index: Int, length: Int) throws -> [UInt8] {
            let pageStart = Self.start(ofPage: index)
            let from = max(position, pageStart)
            let to = min(end, pageStart + UInt64(length))
            var page: [UInt8] = []
            if from > pageStart || to < pageStart + UInt64(length) { page = try current(index, state: &state) }
            if page.count < length { page += [UInt8](repeating: 0, count: length - page.count) }
            page.removeLast(page.count - length)
            if from < to {
                let dataFrom = data.startIndex + Int(from - position)
                page.replaceSubrange(Int(from - pageStart)..<Int(to - pageStart), with: data[dataFrom..<(dataFrom + Int(to - from))])
            }
            return page
        }
        let first = Self.page(containing: position)
        let physicalStart = homeOffset(first)
        var physical: [UInt8] = []
        var written: [(index: Int, page: [UInt8])] = []
        var index = first
        while index < newLast, Self.start(ofPage: index) < end {
            let page = try merged(index, length: Self.capacity(ofPage: index))
            let sealed = try seal(page, page: index, state: &state)
            // Header region pages do not fill their physical page: the gap stays zeros.
            let gap = Int(homeOffset(index) - physicalStart) - physical.count
            if gap > 0 { physical += [UInt8](repeating: 0, count: gap) }
            physical += sealed
            written.append((index, page))
            index += 1
        }
        var tail: (page: [UInt8], sealed: [UInt8])?
        if newLast != state.lastPage || end > Self.start(ofPage: newLast) {
            let page = try merged(newLast, length: Int(newEnd - Self.start(ofPage: newLast)))
            tail = (page, try seal(page, page: newLast, tailVersion: state.tailVersion + 1, state: &state))
        }
        let tailOffset = Self.tailSlotOffset(Int((state.tailVersion + 1) % 2))
        do {
            if !physical.isEmpty { try file.write(physical, at: physicalStart) }
            if let tail { try file.write(tail.sealed, at: tailOffset) }
        } catch {
            // Pages may have reached their places: cut off before the next write. A header
            // region page may be damaged at its place: the engine's truncation rewrites it.
            state.staleTail = true
            if first < (state.lastPage ?? 0) { state.unsettledFrom = min(state.unsettledFrom ?? .max, first) }
            throw error
        }
        if !physical.isEmpty { state.physicalSize = max(state.physicalSize, physicalStart + UInt64(physical.count)) }
        if let tail {
            state.physicalSize = max(state.physicalSize, tailOffset + UInt64(tail.sealed.count))
            state.tailVersion += 1
            state.tailFilledPages = newLast != state.lastPage
            state.lastPage = newLast
            state.size = newEnd
        }
        // The pages filled are not kept: a bulk write (a streamed commit's pieces, a checkpoint's
        // runs) would fill the cache with pages of which a pass reads each once, if at all
        // (`readOnce`), and evict those that reads come back to.
        for (index, _) in written { state.cache.forget(index) }
        if let tail {
            state.cache.forget(newLast)
            state.remember(tail.page, at: newLast)
        }
    }

    /// Format 2: see `truncate(to:)`.
    private func truncateWithTail(to size: UInt64, _ state: inout State) throws {
        guard size < state.size || state.staleTail || state.unsettledFrom != nil else { return }
        let target = min(size, state.size)
        let index = Self.page(containing: target)
        let kept = Array(try current(index, state: &state).prefix(Int(target - Self.start(ofPage: index))))
        if let unsettled = state.unsettledFrom, unsettled < index {
            // Pages a failed write may have damaged at their places, written again from their
            // plaintext (kept in the cache: the write read them first).
            for damaged in unsettled..<index {
                let page = try current(damaged, state: &state)
                try file.write(try seal(page, page: damaged, state: &state), at: homeOffset(damaged))
            }
        }
        if target < state.size {
            let sealed = try seal(kept, page: index, tailVersion: state.tailVersion + 1, state: &state)
            let offset = Self.tailSlotOffset(Int((state.tailVersion + 1) % 2))
            try file.write(sealed, at: offset)
            try file.sync()
            state.tailVersion += 1
            // It names the page the cut leaves last, no later than the version before: it filled none.
            state.tailFilledPages = false
            state.physicalSize = max(state.physicalSize, offset + UInt64(sealed.count))
        }
        state.cache.forget(from: index)
        state.size = target
        state.lastPage = index
        state.remember(kept, at: index)
        state.staleTail = true
        try cutStaleTail(&state)
        state.unsettledFrom = nil
    }

    func sync() throws {
        try file.sync()
    }

    var backingFile: FileLog? { file }

    var authenticatesReads: Bool { true }

    /// Whether the data key has used half the nonces it may: the next compaction rotates it.
    var needsNewKey: Bool {
        locked { $0.budget.used >= $0.budget.limit / 2 }
    }

    /// Wraps the data key for `keys` in the key slot not in force, syncs it, then wipes the other
    /// slot and syncs that: a crash leaves the old slot or the new one in force, and once this
    /// returns the old secret opens nothing.
    func rewrapDataKey(for keys: EncryptionKeys) throws {
        let envelope = try keys.wrap(dataKey)
        try locked { state in
            var slot = state.slot
            slot.number += 1
            slot.envelope = envelope
            slot.nonceBound = state.reservedBound
            let newOffset = EncryptedFileHeader.slotOffsets[Int(slot.number % 2)]
            let oldOffset = EncryptedFileHeader.slotOffsets[Int(state.slot.number % 2)]
            try file.write(slot.encoded(), at: newOffset)
            try file.sync()
            state.slot = slot
            try file.write([UInt8](repeating: 0, count: EncryptedFileHeader.slotByteCount), at: oldOffset)
            try file.sync()
        }
    }
}
