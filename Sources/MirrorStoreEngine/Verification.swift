#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `verifyStoreFile(at:)` found.
public struct VerificationReport: Sendable, Equatable, CustomStringConvertible {
    /// The file checked.
    public var path: String
    /// The header's format version.
    public var formatVersion: UInt32
    /// The file's size in bytes.
    public var fileSize: UInt64
    /// Units whose checksum and payload were checked and found good.
    public var unitsChecked: Int
    /// The sequence number of the last good unit (0 if none).
    public var lastSequence: UInt64
    /// The end of the last good unit; everything after it would be cut off on open.
    public var validEnd: UInt64
    /// The first byte of the first bad unit, or nil when the whole file is good.
    public var firstDamageOffset: UInt64?
    /// Why that unit is bad.
    public var damageReason: String?
    /// Whether the bad unit is a torn final commit (opening drops it in any mode) rather than
    /// damage (opening in `.strict` mode throws `corrupted`).
    public var isTornTail: Bool
    /// Whether the damage lies inside the units compaction wrote, so that no recovery mode
    /// opens the file (it throws `compactionDamaged`).
    public var isCompactionDamage: Bool
    /// How many commits the bytes after `validEnd` held, at least (0 when the file is intact).
    public var commitsDropped: Int
    /// Objects per type in the valid prefix.
    public var objectCounts: [String: Int]
    /// What earlier recoveries left out of this store and kept in sidecar files, oldest first.
    public var keptRecoveries: [RecoveryReport]

    /// Whether every byte of the file belongs to a good unit.
    public var isIntact: Bool { firstDamageOffset == nil }

    /// A one-line summary.
    public var description: String {
        let units = "\(unitsChecked) unit\(unitsChecked == 1 ? "" : "s") checked, last sequence \(lastSequence)"
        guard let offset = firstDamageOffset else {
            return "'\(path)' is intact: format version \(formatVersion), \(units), \(fileSize) bytes."
        }
        let kind = isTornTail ? "a torn final commit" : "damage"
        let dropped = "the last \(fileSize - validEnd) bytes (at least \(commitsDropped) commit\(commitsDropped == 1 ? "" : "s"))"
        let opening: String
        if isTornTail {
            opening = "opening drops \(dropped) and keeps them in a sidecar file"
        } else if isCompactionDamage {
            opening = "no recovery mode opens it, because the damage lies inside the units compaction wrote, which make a state only together"
        } else {
            opening = "opening in strict mode refuses it; recoverValidPrefix drops \(dropped) and keeps them in a sidecar file"
        }
        return "'\(path)' has \(kind) at byte offset \(offset) (\(damageReason ?? "unknown reason")): \(units), valid up to byte \(validEnd) of \(fileSize); \(opening)."
    }
}

/// Scans the store file at `path` without locking it or opening it for writing, checking every
/// unit's checksum and payload, and reports the first damage, what opening would leave out, and
/// what earlier recoveries left out and kept in sidecar files.
///
/// ```swift
/// let report = try verifyStoreFile(at: "heroes.store")
/// print(report)   // 'heroes.store' is intact: format version 1, 42 units checked, ...
/// ```
///
/// Throws `notAStore`, `newerFormat`, `corrupted` (for a damaged header) or `io`. A writer
/// appending at the same time may make the last unit look torn.
public func verifyStoreFile(at path: String) throws -> VerificationReport {
    let descriptor = try FileSystem.openRegularFile(path, flags: O_RDONLY)
    guard descriptor >= 0 else { throw FileSystem.ioError("open the store file", path) }
    let log = FileLog(path: path, descriptor: descriptor, faults: nil)
    let recovered = try Recovery.scan(log)
    if recovered.needsHeader {
        throw StorageError(.notAStore(path: path))
    }
    return VerificationReport(
        path: path,
        formatVersion: recovered.formatVersion,
        fileSize: recovered.fileSize,
        unitsChecked: recovered.unitsChecked,
        lastSequence: recovered.lastSequence,
        validEnd: recovered.validEnd,
        firstDamageOffset: recovered.problem?.offset,
        damageReason: recovered.problem?.reason,
        isTornTail: recovered.problem?.kind == .tornTail,
        isCompactionDamage: {
            if case .damagedCompaction = recovered.problem?.kind { return true }
            return false
        }(),
        commitsDropped: recovered.problem?.commitsDropped ?? 0,
        objectCounts: recovered.index.types.mapValues(\.count).filter { $0.value > 0 },
        keptRecoveries: try keptRecoveries(ofStoreAt: path))
}
