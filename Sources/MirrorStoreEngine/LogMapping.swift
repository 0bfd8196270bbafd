import CMirrorStoreSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Read-only memory mappings of a log file, so that reading a committed value is a memory copy
/// rather than a system call.
///
/// Each mapping covers the file from its start, with room to grow: a shared mapping sees bytes
/// appended to the file later, so a new, larger mapping is needed only when reads pass the end of
/// the largest (the size doubles each time). Snapshots may still be reading through an older
/// mapping, so every mapping lives until the log is released.
///
/// Touching a mapped page past the end of the file raises SIGBUS, so reads go through a mapping
/// only below the size this process knows the file to have: the log's owner reports every write
/// and truncation, and is the only writer (the store's lock file keeps other writers out). A
/// reader beside a writer in another process reports only the end of the units it has validated:
/// a writer truncates nothing before the end of its last whole unit. Anything else falls back to
/// `pread`, which reports a short file as an error.
final class LogMapping: Sendable {
    private struct State: Sendable {
        /// Base addresses and lengths; the last is the largest.
        var mappings: [(address: UInt, length: Int)] = []
        var fileSize: UInt64
    }

    private let descriptor: Int32
    private let state: Lock<State>
    /// The largest mapping's base, and how far reads through it may go: the smaller of its
    /// length and the file's known size, 0 until there is one. Published under `state`'s lock,
    /// the base before the reach, so that a reader that loads the reach first never pairs it
    /// with a smaller mapping's base (mappings only grow, and each covers the file from its
    /// start): a read by key then finds its mapping without the lock, which cost it about as
    /// much as finding its key.
    private let publishedBase = Atomic<UInt>(0)
    private let publishedReach = Atomic<UInt64>(0)

    init(descriptor: Int32, fileSize: UInt64) {
        self.descriptor = descriptor
        state = Lock(State(fileSize: fileSize))
    }

    deinit {
        state.withLock { state in
            for mapping in state.mappings {
                munmap(UnsafeMutableRawPointer(bitPattern: mapping.address), mapping.length)
            }
        }
    }

    /// Records that the file now ends at least at `end` (after a write).
    func extend(to end: UInt64) {
        state.withLock { state in
            state.fileSize = max(state.fileSize, end)
            publish(state)
        }
    }

    /// Records that the file was cut to `size`.
    func truncate(to size: UInt64) {
        state.withLock { state in
            state.fileSize = size
            publish(state)
        }
    }

    /// Publishes the largest mapping and its reach (`publishedBase`), the lock held.
    private func publish(_ state: State) {
        guard let largest = state.mappings.last else { return }
        publishedBase.store(largest.address, ordering: .releasing)
        publishedReach.store(min(UInt64(largest.length), state.fileSize), ordering: .releasing)
    }

    /// `count` bytes at `offset`, or nil when they cannot be read through a mapping.
    func read(at offset: UInt64, count: Int) -> [UInt8]? {
        bytes(at: offset, count: count).map { Array($0) }
    }

    /// `count` bytes at `offset` where they lie in a mapping, which stays mapped until this
    /// object is released, or nil when they cannot be read through one.
    func bytes(at offset: UInt64, count: Int) -> UnsafeRawBufferPointer? {
        let end = offset.addingReportingOverflow(UInt64(count))
        guard !end.overflow, let base = address(covering: end.partialValue) else { return nil }
        let start = UnsafeRawPointer(bitPattern: base + UInt(offset))
        if count > pageSize {
            prefetch(base: base, offset: offset, count: count)
        } else {
            // A value read by key lies anywhere in the file, rarely in the CPU's caches: its
            // lines asked for at once load together, and while the caller prepares to read them
            // (a new model), rather than one after another as the reading reaches each.
            mirrorstore_prefetch(start, count)
        }
        return UnsafeRawBufferPointer(start: start, count: count)
    }

    /// Asks the system to read `count` bytes at `offset` into the page cache now, in one request,
    /// when they lie in the mapped part of the file: for passes that are about to read them in
    /// order, which the mapping's random-access advice would otherwise read a page at a time.
    func prefetch(at offset: UInt64, count: Int) {
        let end = offset.addingReportingOverflow(UInt64(max(0, count)))
        guard count > 0, !end.overflow else { return }
        let known = state.withLock { $0.fileSize }
        let clipped = min(end.partialValue, known)
        guard clipped > offset, let base = address(covering: clipped) else { return }
        prefetch(base: base, offset: offset, count: Int(clipped - offset))
    }

    private func prefetch(base: UInt, offset: UInt64, count: Int) {
        let page = UInt64(pageSize)
        let start = offset / page * page
        let length = Int(offset + UInt64(count) - start)
        _ = posix_madvise(UnsafeMutableRawPointer(bitPattern: base + UInt(start)), length, POSIX_MADV_WILLNEED)
    }

    /// The system's page size, asked once per mapping: as a global, each read by key paid a
    /// call into the runtime's once-only initialisation to find it.
    private let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// Drops the pages of `count` bytes at `offset` from every mapping's share of the resident
    /// set. The mappings are shared and read-only, so this loses nothing: a later read (a
    /// snapshot still reading there) maps the page again from the page cache.
    func release(at offset: UInt64, count: Int) {
        let page = UInt64(pageSize)
        let start = offset / page * page
        let end = offset.addingReportingOverflow(UInt64(max(0, count)))
        guard count > 0, !end.overflow else { return }
        state.withLock { state in
            for mapping in state.mappings where UInt64(mapping.length) > start {
                let length = Int(min(UInt64(mapping.length), end.partialValue) - start)
                _ = madvise(UnsafeMutableRawPointer(bitPattern: mapping.address + UInt(start)), length, MADV_DONTNEED)
            }
        }
    }

    /// Calls `body` with the whole file as this process knows it, mapped, or with nil when it
    /// cannot be mapped. The bytes stay valid while this mapping lives.
    func withFile<Result>(_ body: (UnsafeRawBufferPointer?) throws -> Result) rethrows -> Result {
        let size = state.withLock { $0.fileSize }
        guard size > 0, let base = address(covering: size) else { return try body(nil) }
        return try body(UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: base), count: Int(size)))
    }

    /// Bytes `0..<end` of a mapping, which stays mapped until this object is released.
    func stableBytes(upTo end: UInt64) -> StableBytes? {
        guard end > 0, let base = address(covering: end) else { return nil }
        return StableBytes(bytes: UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: base), count: Int(end)))
    }

    /// The base of a mapping that covers `0..<end`, making one if needed, or nil when `end` lies
    /// past the known end of the file or the file cannot be mapped.
    private func address(covering end: UInt64) -> UInt? {
        if end > 0, end <= publishedReach.load(ordering: .acquiring) { return publishedBase.load(ordering: .acquiring) }
        return state.withLock { state in
            guard end <= state.fileSize, end <= UInt64(Int.max / 2) else { return nil }
            if let largest = state.mappings.last, UInt64(largest.length) >= end { return largest.address }
            let page = pageSize
            let wanted = max(Int(end), 2 * (state.mappings.last?.length ?? 0), 1 << 20)
            let length = (wanted + page - 1) / page * page
            guard let mapped = mmap(nil, length, PROT_READ, MAP_SHARED, descriptor, 0), mapped != MAP_FAILED else {
                return nil
            }
            // Reads through the mapping are mostly lookups of a few bytes each: without this, a
            // fault on a file not in the page cache reads ahead as far as the device allows
            // (megabytes), and a lookup reads a thousand times what it needs. Sequential
            // passes ask for their bytes ahead (`prefetch`).
            _ = posix_madvise(mapped, length, POSIX_MADV_RANDOM)
            let address = UInt(bitPattern: mapped)
            state.mappings.append((address, length))
            publish(state)
            return address
        }
    }
}
