#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A log generation kept encrypted in a file: the engine reads and writes the same logical bytes
/// as in a plain file (header region, units, runs, checkpoints), and this type stores them as
/// pages sealed with AES-256-GCM behind a clear header page (docs/FILE_FORMAT.md, "Encryption").
///
/// Logical page *i* lies in physical page *i* + 1 (the first physical page is the clear
/// `EncryptedFileHeader`), as: length (2, clear) · nonce (12) · ciphertext · tag (16). The
/// header region's header and its two checkpoint slots each have a page of their own, so a torn
/// write of one never touches another; after the region every page holds 4,066 bytes. The
/// associated data is the file id, the page number and the length, so a page moved, swapped,
/// duplicated, cut short or taken from another generation does not authenticate.
///
/// Appending rewrites the last page whole with a fresh random nonce. Trailing pages that do not
/// authenticate are a torn write and lie past the log's end; any other page that does not
/// authenticate is `corrupted`.
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
    /// Nonces a writer reserves in the header at a time (one sync each).
    static let nonceReservation: UInt64 = 1 << 16
    /// Decrypted pages kept for reads: 16 MiB.
    static let cachedPages = 4096

    let file: FileLog
    var path: String { file.path }
    let header: EncryptedFileHeader
    /// Whether a writer in another process may be appending: a page that does not authenticate
    /// may be one it is rewriting, and is read again before it counts as damage.
    let followsWriter: Bool
    private let dataKey: SecretBytes
    private let state: Lock<State>

    private struct State: Sendable {
        /// The logical size: the end of the last page that authenticates.
        var size: UInt64 = 0
        var physicalSize: UInt64
        /// The last page, nil when there is none; always kept in `cache`.
        var lastPage: Int?
        var cache: [Int: [UInt8]] = [:]
        var ring: [Int] = []
        var next = 0
        var budget: NonceBudget
        /// Nonces below this bound are recorded in the header as possibly used.
        var reservedBound: UInt64
        var slot: EncryptedFileHeader.KeySlot
        /// Pages past the last one that authenticates, left by a torn write: cut off before the next write.
        var staleTail = false
        /// The first page a failed write may have changed: the engine's truncation after the
        /// failure writes it again from its plaintext.
        var unsettledFrom: Int?

        mutating func remember(_ page: [UInt8], at index: Int) {
            guard cache.updateValue(page, forKey: index) == nil else { return }
            if ring.count < EncryptedLog.cachedPages {
                ring.append(index)
                return
            }
            // First in, first out, but never the last page, which appends rewrite in place.
            for _ in 0..<2 {
                let victim = ring[next]
                if victim != lastPage {
                    cache.removeValue(forKey: victim)
                    ring[next] = index
                    next = (next + 1) % ring.count
                    return
                }
                next = (next + 1) % ring.count
            }
        }
    }

    private init(
        file: FileLog, header: EncryptedFileHeader, dataKey: SecretBytes, slot: EncryptedFileHeader.KeySlot,
        physicalSize: UInt64, reservedBound: UInt64, followsWriter: Bool
    ) {
        self.file = file
        self.header = header
        self.dataKey = dataKey
        self.followsWriter = followsWriter
        state = Lock(State(
            physicalSize: physicalSize, budget: NonceBudget(used: slot.nonceBound), reservedBound: reservedBound, slot: slot))
    }

    /// A new, empty generation in `file` (emptied first): a new file id and a new random data
    /// key wrapped under `keys`. Nothing is synced: the engine syncs the file before relying on it.
    static func create(in file: FileLog, keys: EncryptionKeys) throws -> EncryptedLog {
        let (envelope, dataKey) = try keys.newDataKey()
        let header = EncryptedFileHeader(fileID: try SecureRandom.bytes(EncryptedFileHeader.fileIDByteCount))
        // The first reservation is recorded at once: no page can reach the disk before this header.
        let slot = EncryptedFileHeader.KeySlot(number: 1, nonceBound: nonceReservation, envelope: envelope)
        try file.truncate(to: 0)
        try file.write(header.page(with: slot), at: 0)
        let log = EncryptedLog(
            file: file, header: header, dataKey: dataKey, slot: slot, physicalSize: UInt64(pageSize), reservedBound: nonceReservation,
            followsWriter: false)
        log.state.withLock { $0.budget = NonceBudget(used: 0) }
        return log
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
        let log = EncryptedLog(
            file: file, header: header, dataKey: dataKey, slot: slot, physicalSize: physicalSize, reservedBound: slot.nonceBound,
            followsWriter: followsWriter)
        try log.state.withLock { try log.findEnd(&$0) }
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

    static func physicalOffset(ofPage index: Int) -> UInt64 {
        UInt64(pageSize) * UInt64(index + 1)
    }

    private func associatedData(page index: Int, length: Int) -> [UInt8] {
        var writer = ByteWriter()
        writer.bytes = header.fileID
        writer.uint64(UInt64(index))
        writer.byte(UInt8(truncatingIfNeeded: length))
        writer.byte(UInt8(truncatingIfNeeded: length >> 8))
        return writer.bytes
    }

    // MARK: Pages

    /// The plaintext of page `index` from its physical bytes.
    private func open(_ physical: [UInt8], page index: Int) throws -> [UInt8] {
        guard physical.count >= Self.overhead else { throw damage(page: index, "is cut short") }
        let length = Int(physical[0]) | Int(physical[1]) << 8
        guard length <= Self.capacity(ofPage: index), Self.overhead + length <= physical.count else {
            throw damage(page: index, "declares \(length) bytes, more than it holds")
        }
        let nonceEnd = 2 + AES256GCM.nonceByteCount
        let opened = Result { () throws(StorageError) in
            try AES256GCM.open(
                Array(physical[nonceEnd..<(nonceEnd + length + AES256GCM.tagByteCount)]), key: dataKey,
                nonce: Array(physical[2..<nonceEnd]), associatedData: associatedData(page: index, length: length))
        }
        switch opened {
        case .success(let plaintext): return plaintext
        case .failure(let error) where error.kind == .authenticationFailed:
            throw damage(page: index, "does not authenticate: it was changed, moved, or sealed for another file or place")
        case .failure(let error): throw error
        }
    }

    private func damage(page index: Int, _ reason: String) -> StorageError {
        let start = Self.start(ofPage: index)
        return StorageError(.corrupted(path: path, offset: start, reason: "the encrypted page holding bytes from \(start) on \(reason)"))
    }

    /// Page `index` read from the file and decrypted.
    private func load(_ index: Int, physicalSize: UInt64) throws -> [UInt8] {
        let offset = Self.physicalOffset(ofPage: index)
        guard offset < physicalSize else {
            throw StorageError(.corrupted(path: path, offset: Self.start(ofPage: index), reason: "the encrypted file ends before this page"))
        }
        return try open(try file.read(at: offset, count: Int(min(UInt64(Self.pageSize), physicalSize - offset))), page: index)
    }

    /// Finds the last page that authenticates and sets the size from it. Pages after it (a torn
    /// write) are left past the end; a header region page that does not authenticate is damage.
    private func findEnd(_ state: inout State) throws {
        let physicalSize = try file.size()
        state.physicalSize = physicalSize
        guard physicalSize > UInt64(Self.pageSize) else {
            state.size = 0
            state.lastPage = nil
            return
        }
        let last = Int((physicalSize - UInt64(Self.pageSize) - 1) / UInt64(Self.pageSize))
        if last < Self.regionPages, try authentic(last, physicalSize: physicalSize) == nil {
            // The header region is written whole before any unit: its writing was cut short
            // when the store was created, and no commit was made.
            state.size = 0
            state.lastPage = nil
            state.staleTail = true
            return
        }
        var index = last
        // Each page is read once: a writer beside may rewrite the last page between two reads.
        while true {
            if let page = try authentic(index, physicalSize: physicalSize) {
                state.size = Self.start(ofPage: index) + UInt64(page.count)
                state.lastPage = index
                state.remember(page, at: index)
                return
            }
            guard index >= Self.regionPages else {
                throw damage(page: index, "does not authenticate: it was changed, moved, or sealed for another file or place")
            }
            if index == last { try requireNotMoved(last, physicalSize: physicalSize) }
            state.staleTail = true
            index -= 1
        }
    }

    /// Throws `corrupted` when the physically last page, which does not authenticate as page
    /// `index`, does as a page up to `movedPageWindow` places away: pages were removed or
    /// inserted before it, which must not pass for a torn write and leave a prefix.
    private func requireNotMoved(_ index: Int, physicalSize: UInt64) throws {
        let offset = Self.physicalOffset(ofPage: index)
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
        if let cached = state.cache[index] { return cached }
        let page = try load(index, physicalSize: state.physicalSize)
        state.remember(page, at: index)
        return page
    }

    /// `plaintext` sealed as page `index`, with a nonce from the budget (reserved in the header first).
    private func seal(_ plaintext: [UInt8], page index: Int, state: inout State) throws -> [UInt8] {
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
            plaintext, key: dataKey, nonce: nonce, associatedData: associatedData(page: index, length: plaintext.count))
        return [UInt8(truncatingIfNeeded: plaintext.count), UInt8(truncatingIfNeeded: plaintext.count >> 8)] + nonce + sealed
    }

    // MARK: LogStorage

    func size() throws -> UInt64 {
        try state.withLock { state in
            if followsWriter {
                let physicalSize = try file.size()
                if physicalSize != state.physicalSize {
                    var found = state
                    try findEnd(&found)
                    // A page the writer is rewriting fails to authenticate for a moment: what
                    // was read before stays valid (a writer never cuts below its last whole unit).
                    if found.size >= state.size { state = found }
                }
            }
            return state.size
        }
    }

    func read(at offset: UInt64, count: Int) throws -> [UInt8] {
        guard count > 0 else { return [] }
        let first = Self.page(containing: offset)
        // One lock for the common read, a value within one cached page.
        let (size, cached) = state.withLock { ($0.size, $0.cache[first]) }
        guard offset <= size, UInt64(count) <= size - offset else {
            throw StorageError(.corrupted(path: path, offset: offset, reason: "the log ends before \(count) bytes could be read"))
        }
        let within = Int(offset - Self.start(ofPage: first))
        if let cached, cached.count >= within + count {
            return Array(cached[within..<(within + count)])
        }
        var result: [UInt8] = []
        result.reserveCapacity(count)
        var position = offset
        while result.count < count {
            let index = Self.page(containing: position)
            let within = Int(position - Self.start(ofPage: index))
            let take = min(Self.capacity(ofPage: index) - within, count - result.count)
            let page = try plaintext(ofPage: index, through: within + take)
            result.append(contentsOf: page[within..<(within + take)])
            position += UInt64(take)
        }
        return result
    }

    /// Page `index`, holding at least `end` bytes: from the cache, or read and decrypted outside
    /// the lock (full pages never change; the last page is always cached).
    private func plaintext(ofPage index: Int, through end: Int) throws -> [UInt8] {
        let (cached, physicalSize) = state.withLock { ($0.cache[index], $0.physicalSize) }
        if let cached, cached.count >= end { return cached }
        if followsWriter {
            for _ in 0..<5 {
                // The writer may have rewritten the page longer since the size was last looked at.
                if let page = try authentic(index, physicalSize: max(physicalSize, try file.size())), page.count >= end {
                    state.withLock { $0.remember(page, at: index) }
                    return page
                }
                var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
                _ = nanosleep(&pause, nil)
            }
        }
        let page = try load(index, physicalSize: followsWriter ? max(physicalSize, try file.size()) : physicalSize)
        guard page.count >= end else {
            throw StorageError(.corrupted(
                path: path, offset: Self.start(ofPage: index), reason: "an encrypted page holds fewer bytes than the log has"))
        }
        state.withLock { $0.remember(page, at: index) }
        return page
    }

    func write(_ bytes: [UInt8], at offset: UInt64) throws {
        guard !bytes.isEmpty else { return }
        try state.withLock { state in
            if state.staleTail {
                try file.truncate(to: Self.physicalOffset(ofPage: (state.lastPage ?? -1) + 1))
                state.physicalSize = Self.physicalOffset(ofPage: (state.lastPage ?? -1) + 1)
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
            let physicalStart = Self.physicalOffset(ofPage: firstIndex)
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
                let gap = Int(Self.physicalOffset(ofPage: index) - physicalStart) - physical.count
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
                state.cache[index] = nil
                if index >= (state.lastPage ?? -1) {
                    state.lastPage = index
                    state.size = max(state.size, Self.start(ofPage: index) + UInt64(page.count))
                }
                state.remember(page, at: index)
            }
        }
    }

    /// Cuts the log to `size` bytes. Pages after the new last one go first, so that a crash
    /// leaves the old last page whole; the new last page is then rewritten shorter in one write.
    func truncate(to size: UInt64) throws {
        try state.withLock { state in
            guard size < state.size || state.staleTail || state.unsettledFrom != nil else { return }
            let target = min(size, state.size)
            let index = Self.page(containing: target)
            let keep = Int(target - Self.start(ofPage: index))
            // Taken before the cache forgets the page: a failed write may have damaged it on disk.
            let kept = keep > 0 ? Array(try current(index, state: &state).prefix(keep)) : []
            for cached in state.cache.keys where cached >= index { state.cache[cached] = nil }
            if keep == 0 {
                try file.truncate(to: Self.physicalOffset(ofPage: index))
                state.physicalSize = Self.physicalOffset(ofPage: index)
                state.size = target
                state.lastPage = index > 0 ? index - 1 : nil
                if let last = state.lastPage {
                    let page = try current(last, state: &state)
                    if let unsettled = state.unsettledFrom, unsettled <= last {
                        let sealed = try seal(page, page: last, state: &state)
                        try file.write(sealed, at: Self.physicalOffset(ofPage: last))
                    }
                    state.remember(page, at: last)
                }
            } else {
                let page = kept
                try file.truncate(to: Self.physicalOffset(ofPage: index + 1))
                let sealed = try seal(page, page: index, state: &state)
                try file.write(sealed, at: Self.physicalOffset(ofPage: index))
                try file.truncate(to: Self.physicalOffset(ofPage: index) + UInt64(sealed.count))
                state.physicalSize = Self.physicalOffset(ofPage: index) + UInt64(sealed.count)
                state.size = target
                state.lastPage = index
                state.cache[index] = nil
                state.remember(page, at: index)
            }
            state.staleTail = false
            state.unsettledFrom = nil
        }
    }

    func sync() throws {
        try file.sync()
    }

    var backingFile: FileLog? { file }

    var authenticatesReads: Bool { true }

    /// Whether the data key has used half the nonces it may: the next compaction rotates it.
    var needsNewKey: Bool {
        state.withLock { $0.budget.used >= $0.budget.limit / 2 }
    }

    /// Wraps the data key for `keys` in the key slot not in force, syncs it, then wipes the other
    /// slot and syncs that: a crash leaves the old slot or the new one in force, and once this
    /// returns the old secret opens nothing.
    func rewrapDataKey(for keys: EncryptionKeys) throws {
        let envelope = try keys.wrap(dataKey)
        try state.withLock { state in
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
