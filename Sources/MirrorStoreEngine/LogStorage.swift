
/// The bytes of one log generation: a file, or memory for an in-memory engine.
///
/// A snapshot holds its generation, so reads keep working after compaction swaps in a new one.
protocol LogStorage: AnyObject, Sendable {
    /// The path named in errors (`":memory:"` for memory).
    var path: String { get }
    func size() throws -> UInt64
    /// Exactly `count` bytes at `offset`; a short read is `corrupted`.
    func read(at offset: UInt64, count: Int) throws -> [UInt8]
    func write(_ bytes: [UInt8], at offset: UInt64) throws
    func truncate(to size: UInt64) throws
    /// Makes written data durable (`fdatasync`).
    func sync() throws
    /// Exactly `count` bytes at `offset`, copied without the mapping: for bytes a pass reads once
    /// (hashing the log, reading a stream back), which through a mapping would stay in the
    /// process's resident set for as long as the mapping lives.
    func readOnce(at offset: UInt64, count: Int) throws -> [UInt8]
    /// Calls `body` with the log's bytes in place, when it can give them without copying (a file
    /// mapped in memory), or with nil. The bytes stay valid while the log lives.
    func withBytesInPlace<Result>(_ body: (UnsafeRawBufferPointer?) throws -> Result) rethrows -> Result
    /// Calls `body` with exactly `count` bytes at `offset`, valid during the call only, for a pass
    /// over values that ``withBytesInPlace(_:)`` cannot give in place: lent from the page in
    /// `lent` or from a cached page (an encrypted log's), which then goes to `lent` for the
    /// pass's next read, else copied. A short read is `corrupted`, as for ``read(at:count:)``.
    func withBytes(at offset: UInt64, count: Int, lent: inout LentPage?, _ body: (UnsafeRawBufferPointer) throws -> Void) throws
    /// Calls `body` with exactly `count` bytes at `offset`, valid during the call only: where
    /// they lie in a memory mapping of the file or in an encrypted log's authenticated page when
    /// they can be given so, else a copy. For one
    /// read that decodes a value and keeps none of its bytes (a lookup by key), which a copy
    /// would cost an allocation and a pass over the bytes. A short read is `corrupted`, as for
    /// ``read(at:count:)``.
    func withBytes<Result>(at offset: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result
    /// Calls `body` with bytes at `offset` in two pieces, the second following the first, lent in
    /// place where the storage can (from an encrypted log's cached pages), valid during the call
    /// only: together the `count` bytes there, or, when those lie across more than two pages,
    /// what the first two hold of them. Where nothing can be lent, a copy of them all and an
    /// empty second piece. A read past the end is `corrupted`, as for
    /// ``read(at:count:)``.
    func withPieces(at offset: UInt64, count: Int, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws
    /// The log's bytes `0..<end` in a mapping that stays valid as long as the log lives, or nil
    /// when they cannot be mapped: for readers that keep a pointer, such as persisted key runs.
    func stableBytes(upTo end: UInt64) -> StableBytes?
    /// The first byte at or after `offset` that holds data rather than lying in a hole (a range
    /// of a sparse file never written, which reads as zeros); nil when only a hole follows.
    /// `offset` itself when the storage cannot tell.
    func dataStart(from offset: UInt64) -> UInt64?
    /// Where the data at `offset` ends: the first hole at or after it, or the end of the file.
    /// `UInt64.max` when the storage cannot tell.
    func holeStart(from offset: UInt64) -> UInt64
    /// Starts reading `count` bytes at `offset` into memory, for a pass about to read them in
    /// order; nothing for storage that is already in memory.
    func prefetch(at offset: UInt64, count: Int)
    /// Takes the pages of `count` bytes at `offset` that reads through a mapping left in this
    /// process's resident set out of it (the file keeps them; a later read maps them again):
    /// for bytes no one is expected to read again, such as the runs a merge replaced. Nothing
    /// for storage that is not mapped.
    func release(at offset: UInt64, count: Int)
    /// The file the log lives in, nil for memory: what a lock, a rename or a reader's
    /// identity check deals with.
    var backingFile: FileLog? { get }
    /// Whether every read is authenticated on its own (an encrypted log's pages), so that the
    /// checkpoint's region checksums (`CoveredRegions`) would check nothing more.
    var authenticatesReads: Bool { get }
    /// Makes the next open of the file quick, at a clean close, once everything written is
    /// synced; nothing for most storage (see `EncryptedLog.settle()`).
    func settle() throws
}

extension LogStorage {
    func readOnce(at offset: UInt64, count: Int) throws -> [UInt8] {
        try read(at: offset, count: count)
    }

    func withBytesInPlace<Result>(_ body: (UnsafeRawBufferPointer?) throws -> Result) rethrows -> Result {
        try body(nil)
    }

    func withBytes(at offset: UInt64, count: Int, lent: inout LentPage?, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try read(at: offset, count: count).withUnsafeBytes(body)
    }

    func withPieces(at offset: UInt64, count: Int, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        try read(at: offset, count: count).withUnsafeBytes { try body($0, UnsafeRawBufferPointer(start: nil, count: 0)) }
    }

    func withBytes<Result>(at offset: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result {
        try read(at: offset, count: count).withUnsafeBytes(body)
    }

    func dataStart(from offset: UInt64) -> UInt64? { offset }

    func stableBytes(upTo end: UInt64) -> StableBytes? { nil }

    func holeStart(from offset: UInt64) -> UInt64 { .max }

    func prefetch(at offset: UInt64, count: Int) {}

    func release(at offset: UInt64, count: Int) {}

    var backingFile: FileLog? { nil }

    var authenticatesReads: Bool { false }

    func settle() throws {}
}

/// A page of plaintext a log lent to a pass, which the pass keeps between its reads so that those
/// falling in the same page take no lock (see ``LogStorage/withBytes(at:count:lent:_:)``).
struct LentPage {
    let index: Int
    let page: DecryptedPage
}

/// A log kept in a byte array, for `StorageEngine(inMemoryWith:)` and for the fuzzer.
final class MemoryLog: LogStorage {
    let path = ":memory:"
    private let bytes: Lock<[UInt8]>

    init(_ initial: [UInt8] = []) {
        bytes = Lock(initial)
    }

    func size() -> UInt64 {
        bytes.withLock { UInt64($0.count) }
    }

    func read(at offset: UInt64, count: Int) throws -> [UInt8] {
        try bytes.withLock { storage in
            guard offset <= UInt64(storage.count), UInt64(count) <= UInt64(storage.count) - offset else {
                throw StorageError(.corrupted(path: path, offset: offset, reason: "the log ends before \(count) bytes could be read"))
            }
            let start = Int(offset)
            return Array(storage[start..<(start + count)])
        }
    }

    func write(_ data: [UInt8], at offset: UInt64) {
        bytes.withLock { storage in
            let start = Int(offset)
            if start > storage.count {
                storage.append(contentsOf: repeatElement(0, count: start - storage.count))
            }
            let overlap = min(data.count, storage.count - start)
            storage.replaceSubrange(start..<(start + overlap), with: data[0..<overlap])
            storage.append(contentsOf: data[overlap...])
        }
    }

    func truncate(to size: UInt64) {
        bytes.withLock { storage in
            if UInt64(storage.count) > size { storage.removeSubrange(Int(size)...) }
        }
    }

    func sync() {}
}
