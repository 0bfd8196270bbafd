/// What a scan of a log found after its last good unit.
enum LogProblem: Equatable, Sendable {
    /// The final unit is cut short or fails its checksum and nothing valid follows it:
    /// a commit interrupted by a crash. Always dropped, in every recovery mode.
    case tornTail(offset: UInt64, reason: String)
    /// A bad unit with a valid unit somewhere after it, or a checksummed unit whose payload
    /// does not decode: damage, not an interrupted append.
    case damage(offset: UInt64, reason: String)

    var offset: UInt64 {
        switch self {
        case .tornTail(let offset, _), .damage(let offset, _): return offset
        }
    }

    var reason: String {
        switch self {
        case .tornTail(_, let reason), .damage(_, let reason): return reason
        }
    }
}

/// The state rebuilt from a log's valid prefix.
struct RecoveredLog: Sendable {
    var index = KeyIndex()
    var types = TypeTable()
    var formatVersion = LogHeader.currentVersion
    var lastSequence: UInt64 = 0
    /// The end of the last good unit: where the next commit goes once the rest is cut off.
    var validEnd = UInt64(LogHeader.size)
    var fileSize: UInt64 = 0
    var unitsChecked = 0
    var problem: LogProblem?
    /// The file is empty or shorter than a header it starts like: its creation was interrupted.
    var needsHeader = false
}

/// Rebuilds the index by reading a log from the start, and classifies whatever follows the
/// last good unit.
///
/// The rule that separates a torn tail from damage: a unit is bad when its header is cut
/// short, its declared length runs past the end of the file, its checksum fails, or its
/// sequence number goes backwards. If any valid unit (checksum good, sequence plausible)
/// starts at any byte after a bad one, the bad one cannot be the interrupted last append,
/// so it is damage; otherwise it is a torn tail. A unit whose checksum is good but whose
/// payload does not decode is always damage. No operation of a bad unit is ever applied.
struct Recovery {
    let storage: any LogStorage
    private var window: [UInt8] = []
    private var windowStart: UInt64 = 0
    private var size: UInt64 = 0

    static let windowSize = 1 << 20

    init(storage: any LogStorage) {
        self.storage = storage
    }

    /// Scans the whole log. Throws only for a missing or bad header and for I/O errors;
    /// damage after the header is reported in `problem`.
    static func scan(_ storage: any LogStorage) throws -> RecoveredLog {
        var recovery = Recovery(storage: storage)
        return try recovery.run()
    }

    private mutating func run() throws -> RecoveredLog {
        size = try storage.size()
        var result = RecoveredLog()
        result.fileSize = size
        let headerBytes = try storage.read(at: 0, count: Int(min(size, UInt64(LogHeader.size))))
        if LogHeader.isInterruptedCreation(headerBytes) {
            result.needsHeader = true
            result.validEnd = 0
            return result
        }
        result.formatVersion = try LogHeader.decode(headerBytes, path: storage.path).version
        var offset = UInt64(LogHeader.size)
        while offset < size {
            let unit: (buffer: [UInt8], payload: Range<Int>, sequence: UInt64)
            switch try readUnit(at: offset, previousSequence: result.lastSequence) {
            case .success(let found):
                unit = found
            case .failure(let bad):
                let laterUnit = try validUnitExists(after: offset, lastSequence: result.lastSequence)
                result.problem = laterUnit
                    ? .damage(offset: offset, reason: bad.reason + ", and a valid unit follows it")
                    : .tornTail(offset: offset, reason: bad.reason)
                return result
            }
            let payloadOffset = offset + UInt64(LogFrame.headerSize)
            let unitEnd = payloadOffset + UInt64(unit.payload.count)
            guard unitEnd <= ValueLocation.offsetLimit else {
                result.problem = .damage(offset: offset, reason: "the unit ends past the largest offset the format addresses")
                return result
            }
            do throws(DecodeFailure) {
                let operations = try OperationCodec.decode(
                    unit.buffer, range: unit.payload, fileOffset: payloadOffset, types: &result.types)
                // Every put takes at least 5 bytes of the file, so no honest hint asks for more.
                result.index.apply(operations, capacityLimit: Int(min(size / 5, UInt64(Int32.max))))
            } catch {
                let at = payloadOffset + UInt64(error.offset - unit.payload.lowerBound)
                result.problem = .damage(offset: at, reason: "a unit with a valid checksum holds a bad operation: \(error.reason)")
                return result
            }
            result.lastSequence = unit.sequence
            result.unitsChecked += 1
            result.validEnd = unitEnd
            offset = unitEnd
        }
        return result
    }

    private struct BadUnit: Error {
        var reason: String
    }

    /// The bytes `offset..<offset+count` as (buffer, start index), refilling the window if needed.
    /// Returns nil when the file ends first.
    private mutating func bytes(at offset: UInt64, count: Int) throws -> (buffer: [UInt8], start: Int)? {
        guard offset <= size, UInt64(count) <= size - offset else { return nil }
        if offset < windowStart || offset + UInt64(count) > windowStart + UInt64(window.count) {
            let length = Int(min(size - offset, UInt64(max(count, Self.windowSize))))
            window = try storage.read(at: offset, count: length)
            windowStart = offset
        }
        return (window, Int(offset - windowStart))
    }

    private mutating func readUnit(
        at offset: UInt64, previousSequence: UInt64
    ) throws -> Result<(buffer: [UInt8], payload: Range<Int>, sequence: UInt64), BadUnit> {
        guard let (head, start) = try bytes(at: offset, count: LogFrame.headerSize) else {
            return .failure(BadUnit(reason: "the unit header is cut short by the end of the file"))
        }
        var reader = ByteReader(head, from: start, to: start + LogFrame.headerSize)
        guard let length = try? reader.uint32(), let masked = try? reader.uint32(), let sequence = try? reader.uint64() else {
            return .failure(BadUnit(reason: "the unit header is cut short by the end of the file"))
        }
        guard Int(length) <= LogFrame.maximumPayload else {
            return .failure(BadUnit(reason: "the unit declares \(length) payload bytes, more than any unit holds"))
        }
        guard let (buffer, frameStart) = try bytes(at: offset, count: LogFrame.headerSize + Int(length)) else {
            return .failure(BadUnit(reason: "the unit's declared length of \(length) bytes runs past the end of the file"))
        }
        guard LogFrame.checksum(buffer, frameStart: frameStart, payloadLength: Int(length)) == CRC32C.unmask(masked) else {
            return .failure(BadUnit(reason: "the unit's checksum does not match its contents"))
        }
        guard sequence >= previousSequence else {
            return .failure(BadUnit(reason: "the unit's sequence number \(sequence) is below its predecessor's \(previousSequence)"))
        }
        let payloadStart = frameStart + LogFrame.headerSize
        return .success((buffer, payloadStart..<(payloadStart + Int(length)), sequence))
    }

    /// Whether a valid unit starts at any byte after `offset`. Cheap per candidate: a real later
    /// unit's sequence lies within `lastSequence ... lastSequence + 2 + distance/16`, because
    /// every commit adds one and every unit is at least 16 bytes, so almost every candidate is
    /// rejected before its checksum is computed.
    private mutating func validUnitExists(after offset: UInt64, lastSequence: UInt64) throws -> Bool {
        guard size >= UInt64(LogFrame.headerSize) else { return false }
        var candidate = offset + 1
        while candidate + UInt64(LogFrame.headerSize) <= size {
            defer { candidate += 1 }
            guard let (head, start) = try bytes(at: candidate, count: LogFrame.headerSize) else { return false }
            var reader = ByteReader(head, from: start, to: start + LogFrame.headerSize)
            guard let length = try? reader.uint32(), let masked = try? reader.uint32(), let sequence = try? reader.uint64() else {
                continue
            }
            let distance = candidate - offset
            guard sequence >= lastSequence, sequence - lastSequence <= 2 + distance / UInt64(LogFrame.headerSize) else { continue }
            guard Int(length) <= LogFrame.maximumPayload,
                  let (buffer, frameStart) = try bytes(at: candidate, count: LogFrame.headerSize + Int(length)) else { continue }
            if LogFrame.checksum(buffer, frameStart: frameStart, payloadLength: Int(length)) == CRC32C.unmask(masked) {
                return true
            }
        }
        return false
    }
}
