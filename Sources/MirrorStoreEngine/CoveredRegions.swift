import Synchronization

/// Checksums of the log a checkpoint covers, in regions of `size` bytes from the first unit to
/// the checkpoint's covered end, so that values read from there are checked although opening
/// no longer replays (and so checks) those units: a region is hashed the first time any read
/// touches it, and a mismatch is an error, never a wrong value. A checkpoint carries the table;
/// the next one keeps its whole regions and hashes only the log after them.
final class CoveredRegions: Sendable {
    static let size: UInt64 = 16 << 10
    /// Regions a pass over all of them asks the system to read at once.
    static let prefetchedRegions = 256

    /// Where the first region starts (the first unit) and the last ends (the covered end).
    let start: UInt64
    let end: UInt64
    /// The CRC32C of each region (the last may be shorter).
    let checksums: [UInt32]
    private let checked: CheckedBlocks
    /// Every region has been checked: reads skip the table.
    private let complete = Atomic<Bool>(false)

    init(start: UInt64, end: UInt64, checksums: [UInt32]) {
        self.start = start
        self.end = end
        self.checksums = checksums
        checked = CheckedBlocks(count: checksums.count)
    }

    /// How many regions `start..<end` holds.
    static func count(start: UInt64, end: UInt64) -> Int {
        end > start ? Int((end - start + size - 1) / size) : 0
    }

    private func bounds(_ region: Int) -> (offset: UInt64, length: Int) {
        let offset = start + UInt64(region) * Self.size
        return (offset, Int(min(Self.size, end - offset)))
    }

    /// The table for `start..<end` of `log`, keeping the whole regions `previous` already hashed
    /// (its last region, shorter or not, is hashed again over the longer span).
    static func extending(_ previous: CoveredRegions?, start: UInt64, end: UInt64, log: any LogStorage) throws -> CoveredRegions {
        var checksums: [UInt32] = []
        if let previous, previous.start == start, previous.end <= end {
            let whole = Int((previous.end - previous.start) / size)
            checksums = Array(previous.checksums.prefix(whole))
        }
        let total = count(start: start, end: end)
        checksums.reserveCapacity(total)
        while checksums.count < total {
            let offset = start + UInt64(checksums.count) * size
            let length = Int(min(size, end - offset))
            checksums.append(try checksum(of: log, at: offset, count: length))
        }
        return CoveredRegions(start: start, end: end, checksums: checksums)
    }

    /// Copied, not hashed in place: hashing through the mapping would keep every page of the
    /// covered log in the resident set, though no read may ever need most of them.
    private static func checksum(of log: any LogStorage, at offset: UInt64, count: Int) throws -> UInt32 {
        CRC32C.checksum(try log.readOnce(at: offset, count: count))
    }

    /// Checks every region `offset..<offset+length` touches that no read has checked yet.
    ///
    /// - Throws: `corrupted` naming the first damaged region.
    func verify(offset: UInt64, length: Int, in log: any LogStorage) throws {
        guard !complete.load(ordering: .acquiring), offset < end, !log.authenticatesReads else { return }
        let last = offset.addingReportingOverflow(UInt64(max(length, 1)) - 1)
        guard !last.overflow, last.partialValue >= start else { return }
        let first = offset > start ? Int((offset - start) / Self.size) : 0
        let through = min(Int((min(last.partialValue, end - 1) - start) / Self.size), checksums.count - 1)
        guard first <= through else { return }
        for region in first...through where !checked.contains(region) {
            try check(region, in: log)
        }
    }

    /// Checks the bytes a walk read (`LocationWalk`), `from..<to`, `to` the value it reached:
    /// nothing when they lie in the value's own region, which the value's read checks.
    func verifyWalk(from: UInt64, to: UInt64, in log: any LogStorage) throws {
        guard from < to, from >= start else { return }
        if (from - start) / Self.size == (to - start) / Self.size { return }
        try verify(offset: from, length: Int(to - from), in: log)
    }

    /// Checks every region not checked yet: for passes over every object.
    func verifyAll(in log: any LogStorage) throws {
        guard !complete.load(ordering: .acquiring), !log.authenticatesReads else { return }
        for region in checksums.indices where !checked.contains(region) {
            if region % Self.prefetchedRegions == 0 {
                log.prefetch(at: bounds(region).offset, count: Self.prefetchedRegions * Int(Self.size))
            }
            try check(region, in: log)
        }
    }

    private func check(_ region: Int, in log: any LogStorage) throws {
        let (offset, length) = bounds(region)
        guard try Self.checksum(of: log, at: offset, count: length) == checksums[region] else {
            throw StorageError(.corrupted(
                path: log.path, offset: offset,
                reason: "the \(length) bytes from here, which the checkpoint covers, no longer match its checksum; open the store with `recoverValidPrefix` or run `mirrorstore verify`"))
        }
        if checked.insert(region) == checksums.count { complete.store(true, ordering: .releasing) }
    }
}
