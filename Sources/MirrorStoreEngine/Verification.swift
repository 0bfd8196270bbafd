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
    /// Objects per type in the valid prefix.
    public var objectCounts: [String: Int]

    /// Whether every byte of the file belongs to a good unit.
    public var isIntact: Bool { firstDamageOffset == nil }

    /// A one-line summary.
    public var description: String {
        let units = "\(unitsChecked) unit\(unitsChecked == 1 ? "" : "s") checked, last sequence \(lastSequence)"
        guard let offset = firstDamageOffset else {
            return "'\(path)' is intact: format version \(formatVersion), \(units), \(fileSize) bytes."
        }
        let kind = isTornTail ? "a torn final commit" : "damage"
        return "'\(path)' has \(kind) at byte offset \(offset) (\(damageReason ?? "unknown reason")): \(units), valid up to byte \(validEnd) of \(fileSize)."
    }
}

/// Scans the store file at `path` without locking it or opening it for writing, checking every
/// unit's checksum and payload, and reports the first damage.
///
/// ```swift
/// let report = try verifyStoreFile(at: "heroes.store")
/// print(report)   // 'heroes.store' is intact: format version 1, 42 units checked, ...
/// ```
///
/// Throws `notAStore`, `newerFormat`, `corrupted` (for a damaged header) or `io`. A writer
/// appending at the same time may make the last unit look torn.
public func verifyStoreFile(at path: String) throws -> VerificationReport {
    let descriptor = FileSystem.open(path, flags: O_RDONLY)
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
        isTornTail: {
            if case .tornTail = recovered.problem { return true }
            return false
        }(),
        objectCounts: recovered.index.types.mapValues(\.count).filter { $0.value > 0 })
}
