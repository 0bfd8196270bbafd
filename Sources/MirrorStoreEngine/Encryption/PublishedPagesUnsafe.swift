import Synchronization

/// One page's plaintext in memory of its own, never changed once made: what an encrypted log's
/// page cache holds, and what its readers read in place.
///
/// The memory is one block: the byte count (an `Int`), then the bytes from `bytesOffset` on.
/// The block's address is what `PublishedPages` publishes, so that a reader finds both the count
/// and the bytes from one atomic load, and touches no Swift object (no reference count).
final class DecryptedPage: @unchecked Sendable {
    // @unchecked: `block` is written only in `init`, before the page is shared, and freed only in
    // `deinit`; nothing changes it in between.
    static let bytesOffset = 16
    let block: UnsafeMutableRawPointer
    let count: Int

    /// A copy of `bytes`.
    init(_ bytes: [UInt8]) {
        count = bytes.count
        block = .allocate(byteCount: Self.bytesOffset + max(count, 1), alignment: Self.bytesOffset)
        block.storeBytes(of: count, as: Int.self)
        bytes.withUnsafeBytes { source in
            if let start = source.baseAddress { (block + Self.bytesOffset).copyMemory(from: start, byteCount: count) }
        }
    }

    deinit {
        block.deallocate()
    }

    /// Calls `body` with the plaintext, this page kept alive meanwhile.
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withExtendedLifetime(self) { try body(UnsafeRawBufferPointer(start: block + Self.bytesOffset, count: count)) }
    }

    /// A copy of the plaintext, for a writer about to change the page.
    var array: [UInt8] { withUnsafeBytes { Array($0) } }
}

/// An encrypted log's cached pages as readers find them without the log's lock: a table, indexed
/// by page number, of the addresses of `DecryptedPage` blocks, replaced whole (and published with
/// one atomic store) when it must grow.
///
/// Only the cache (`EncryptedPageCache`, under the log's lock) writes it. A reader enters a
/// *reading* (`withReading`): it counts itself among the readers of the current epoch, parity
/// `epoch & 1`, loads the table and the pages' addresses, reads, and leaves. Nothing a reader may
/// hold is freed under it: the cache hands a page it evicts or replaces, and a table it replaces,
/// to `retire` with the epoch then current, and frees them once the epoch is two further on.
/// The epoch goes from `e` to `e + 1` only when no reader counted with parity `e + 1` (that is,
/// of epoch `e - 1` or before) remains, so everyone who could have seen a retired item has left.
/// The writer never waits for readers: it frees what it can when it next changes the cache (a
/// reading may itself decrypt a page and add it under the lock).
///
/// Raw memory here: the table's block (its count, then one atomic word per page) and the reads
/// of the pages' blocks whose addresses it holds.
final class PublishedPages: @unchecked Sendable {
    // @unchecked: every field shared with readers is an atomic; a table block is written only
    // through its atomics after it is made, and freed only through `retire` or at `deinit`.
    private static let entriesOffset = MemoryLayout<Int>.stride
    /// The address of the current table block.
    private let table = Atomic<UInt>(0)
    private let epoch = Atomic<UInt>(0)
    private let evenReaders = Atomic<Int>(0)
    private let oddReaders = Atomic<Int>(0)

    /// The current table block, as the writer sees it (under the log's lock).
    private var current: UnsafeMutableRawPointer

    init() {
        current = Self.makeTable(count: 0, copying: nil)
        table.store(UInt(bitPattern: current), ordering: .releasing)
    }

    deinit {
        Self.free(table: current)
    }

    // MARK: Reading, without the lock

    /// What one reading sees: pages found by number, valid until the reading ends (it must not
    /// be kept past `withReading`'s body).
    struct Reading {
        /// Never nil once the log is made (a table is published at `init`, and only ever
        /// replaced by another); nil reads as no page held.
        fileprivate let table: UnsafeRawPointer?

        /// Page `index`'s plaintext, when the cache holds it.
        @inline(__always)
        func page(_ index: Int) -> UnsafeRawBufferPointer? {
            guard let table, index >= 0, index < table.load(as: Int.self) else { return nil }
            let entries = (table + PublishedPages.entriesOffset).assumingMemoryBound(to: Atomic<UInt>.self)
            // Sequentially consistent (a plain load on x86): after this reading's count, it must
            // see a removal that a writer made before it found no reader counted; it also
            // acquires the page's bytes, written before their address was published.
            guard let block = UnsafeRawPointer(bitPattern: entries[index].load(ordering: .sequentiallyConsistent)) else { return nil }
            return UnsafeRawBufferPointer(start: block + DecryptedPage.bytesOffset, count: block.load(as: Int.self))
        }
    }

    /// Runs `body` as a reading: the pages it finds stay as they are until it returns.
    @inline(__always)
    func withReading<Result>(_ body: (Reading) throws -> Result) rethrows -> Result {
        // Sequentially consistent: the count must be seen by a writer that retires a page after
        // this reading loads its address, and must precede the loads below.
        let isEven = epoch.load(ordering: .sequentiallyConsistent) & 1 == 0
        if isEven {
            evenReaders.wrappingAdd(1, ordering: .sequentiallyConsistent)
        } else {
            oddReaders.wrappingAdd(1, ordering: .sequentiallyConsistent)
        }
        // Releasing: the reads made come before a writer's free that sees this reading gone.
        defer {
            if isEven {
                evenReaders.wrappingSubtract(1, ordering: .releasing)
            } else {
                oddReaders.wrappingSubtract(1, ordering: .releasing)
            }
        }
        // Sequentially consistent, as the pages' loads (`Reading.page`).
        return try body(Reading(table: UnsafeRawPointer(bitPattern: table.load(ordering: .sequentiallyConsistent))))
    }

    // MARK: Writing, under the log's lock

    /// The current epoch, for retiring.
    var currentEpoch: UInt { epoch.load(ordering: .sequentiallyConsistent) }

    /// Publishes `page` as page `index` (nil: none), and returns the table block it replaced when
    /// it had to grow (to retire), or nil.
    func publish(_ page: DecryptedPage?, at index: Int) -> RetiredTable? {
        var replaced: RetiredTable?
        let count = current.load(as: Int.self)
        if index >= count {
            guard page != nil else { return nil }
            let grown = Self.makeTable(count: max(index + 1, 2 * count, 64), copying: current)
            // Sequentially consistent: ordered before the epoch loads of the retiring that follows.
            table.store(UInt(bitPattern: grown), ordering: .sequentiallyConsistent)
            replaced = RetiredTable(block: current)
            current = grown
        }
        let entries = (current + Self.entriesOffset).assumingMemoryBound(to: Atomic<UInt>.self)
        let address = page.map { UInt(bitPattern: $0.block) } ?? 0
        // Sequentially consistent: a removal must precede the reader counts the retiring loads.
        entries[index].store(address, ordering: .sequentiallyConsistent)
        return replaced
    }

    /// Moves the epoch on as far as the readers allow (two steps at most) and returns it: items
    /// retired in an epoch at least two before it may be freed.
    func advance() -> UInt {
        var reached = epoch.load(ordering: .sequentiallyConsistent)
        for _ in 0..<2 {
            // Readers of the parity the next epoch takes entered in the epoch before this one.
            let stale = reached & 1 == 0
                ? oddReaders.load(ordering: .sequentiallyConsistent) : evenReaders.load(ordering: .sequentiallyConsistent)
            guard stale == 0 else { break }
            reached += 1
            epoch.store(reached, ordering: .sequentiallyConsistent)
        }
        return reached
    }

    /// A table block replaced by a larger one, freed when the object is (after the grace period).
    final class RetiredTable: @unchecked Sendable {
        // @unchecked: no one writes the block once it is retired; it is freed once, in `deinit`.
        let block: UnsafeMutableRawPointer

        init(block: UnsafeMutableRawPointer) {
            self.block = block
        }

        deinit {
            PublishedPages.free(table: block)
        }
    }

    /// A block of `count` entries, the first ones copied from `source`'s, the rest none.
    private static func makeTable(count: Int, copying source: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer {
        let block = UnsafeMutableRawPointer.allocate(
            byteCount: entriesOffset + count * MemoryLayout<Atomic<UInt>>.stride, alignment: MemoryLayout<Int>.alignment)
        block.storeBytes(of: count, as: Int.self)
        let entries = (block + entriesOffset).bindMemory(to: Atomic<UInt>.self, capacity: count)
        let copied = source.map { $0.load(as: Int.self) } ?? 0
        let sourceEntries = source.map { ($0 + entriesOffset).assumingMemoryBound(to: Atomic<UInt>.self) }
        for index in 0..<count {
            let value = index < copied ? sourceEntries?[index].load(ordering: .relaxed) ?? 0 : 0
            (entries + index).initialize(to: Atomic(value))
        }
        return block
    }

    private static func free(table block: UnsafeMutableRawPointer?) {
        guard let block else { return }
        (block + entriesOffset).assumingMemoryBound(to: Atomic<UInt>.self).deinitialize(count: block.load(as: Int.self))
        block.deallocate()
    }
}
