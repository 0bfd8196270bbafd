/// What a scan of a log found after its last good unit.
struct LogProblem: Equatable, Sendable {
    enum Kind: Equatable, Sendable {
        /// The final unit is cut short, or it fails its checksum while its declared length reaches
        /// the end of the file, and nothing valid follows it: the one commit a crash can tear.
        /// Dropped in every recovery mode, its bytes kept beside the store.
        case tornTail
        /// Anything else: a bad unit followed by a valid one or by more bytes than it declares,
        /// a good checksum over a bad sequence or payload. Strict mode refuses to open.
        case damage
        /// Damage inside the units compaction wrote, which end at `compactedEnd`: no prefix of
        /// them is a state any commit made, so no recovery mode opens the file.
        case damagedCompaction(compactedEnd: UInt64)
    }

    var kind: Kind
    /// The first byte of the bad unit: everything from here on is not applied.
    var offset: UInt64
    var reason: String
    /// How many commits the bytes from `offset` on held, as far as can be told: the bad unit,
    /// and every sequence number up to the highest one found intact after it.
    var commitsDropped = 1
}

/// The state rebuilt from a log's valid prefix.
struct RecoveredLog: Sendable {
    var index = KeyIndex()
    var types = TypeTable()
    var formatVersion = LogHeader.currentVersion
    /// Where the units compaction wrote end (0 when the file was not written by compaction).
    var compactedEnd: UInt64 = 0
    var lastSequence: UInt64 = 0
    /// The end of the last good unit: where the next commit goes once the rest is cut off.
    var validEnd = UInt64(LogHeader.size)
    /// Where the first unit starts (after the header region in format 2).
    var unitsStart = UInt64(LogHeader.size)
    /// The checkpoint the state was opened from, nil when the whole log was replayed.
    var checkpoint: CheckpointSlot?
    /// The highest number either header slot holds, valid or not: the next checkpoint takes a
    /// higher one, so a slot that outlived its checkpoint is never preferred to it.
    var highestCheckpointNumber: UInt64 = 0
    var fileSize: UInt64 = 0
    var unitsChecked = 0
    var problem: LogProblem?
    /// The file is empty or shorter than a header it starts like: its creation was interrupted.
    var needsHeader = false
    /// Which sequence numbers may follow the last good unit: where a reader beside a writer
    /// goes on from (`Recovery.follow`). Nil when the scan stopped before the units.
    var numbering: Recovery.Numbering?
    /// The pieces of streamed commits not committed by the last good unit: a reader beside a
    /// writer keeps them for the commit that may follow; an opener drops them.
    var streams = PendingStreams()
    /// The most keys of one type the replay held in memory at once, after a unit was applied.
    var mostKeysInMemory = 0
}

/// Rebuilds the index by reading a log from the start, and classifies whatever follows the
/// last good unit.
///
/// A unit is bad when its header is cut short, its declared length runs past the end of the
/// file, its checksum fails, or its sequence number does not follow its predecessor's
/// (`Numbering`). A crash can tear only the last append, and a torn append ends at or before the
/// end its header declares (the file was cut short, or extended with pages that never reached
/// the disk). So a bad unit is a torn tail only if its header is cut short, or its checksum
/// fails and its declared end reaches the end of the file, and no valid unit (checksum good,
/// sequence plausible) starts at any byte after it.
/// Anything else is damage: a valid unit after it, or bytes past the end it declares (a zeroed
/// span over several commits reads as a unit of length 0 followed by more bytes), or a good
/// checksum over a bad sequence or payload. Damage before `compactedEnd` is damage to the output
/// of one compaction, which forms a state only as a whole. No operation of a bad unit is applied.
struct Recovery {
    let storage: any LogStorage
    private var window: [UInt8] = []
    private var windowStart: UInt64 = 0
    private var size: UInt64 = 0
    /// The file's format has index units (format 2).
    private var allowsIndex = false
    /// The scan is a reader's beside a writer that may be appending: a checkpoint it validated
    /// may be read through the log's mapping, which otherwise covers nothing yet.
    private var followsWriter = false
    /// Where the scan takes the log to end, when before its size.
    private var end = UInt64.max
    /// Writes the key table as runs into a scratch log once a type holds its bound of keys in
    /// memory, for a replay that must not hold every key (`verifyStoreFile`), and where the
    /// scratch log ends.
    private var keyRuns: RewriteKeyRuns?
    private var scratchEnd: UInt64 = 0

    static let windowSize = 1 << 20

    init(storage: any LogStorage) {
        self.storage = storage
    }

    /// Scans the log from the newest valid checkpoint (when `fromCheckpoint` and the file has
    /// one), else from the start. Throws only for a missing or bad header and for I/O errors;
    /// damage after the header is reported in `problem`. A checkpoint whose runs turn out damaged
    /// while its tail is replayed is given up for a replay of the whole log.
    ///
    /// With `followingWriter`, the scan is a reader's beside a writer that may be appending: it
    /// maps only what it validated (see `checkpoint(at:)`), and the numbering it reports lets
    /// `follow` go on from where it stopped.
    ///
    /// With `end`, the scan reads the log as if it ended there (at the most its size), so that
    /// two scans beside a writer that goes on appending see the same commits.
    ///
    /// With `keyRuns`, each type's keys go to runs in that writer's log once it holds the
    /// writer's bound in memory (as a rewrite's do), so that the replay holds a bounded number
    /// of keys per type rather than every key; the state's runs then lie in that log.
    static func scan(
        _ storage: any LogStorage, fromCheckpoint: Bool = true, followingWriter: Bool = false, endingAt end: UInt64 = .max,
        keyRuns: RewriteKeyRuns? = nil
    ) throws -> RecoveredLog {
        var recovery = Recovery(storage: storage)
        recovery.followsWriter = followingWriter
        recovery.end = end
        if fromCheckpoint, let found = try? recovery.run(fromCheckpoint: true) { return found }
        recovery = Recovery(storage: storage)
        recovery.followsWriter = followingWriter
        recovery.end = end
        recovery.keyRuns = keyRuns
        return try recovery.run(fromCheckpoint: false)
    }

    private mutating func run(fromCheckpoint: Bool) throws -> RecoveredLog {
        size = min(try storage.size(), end)
        var result = RecoveredLog()
        result.fileSize = size
        let headerBytes = try storage.read(at: 0, count: Int(min(size, UInt64(LogHeader.size))))
        if LogHeader.isInterruptedCreation(headerBytes) {
            result.needsHeader = true
            result.validEnd = 0
            return result
        }
        let header = try LogHeader.decode(headerBytes, path: storage.path)
        result.formatVersion = header.version
        result.compactedEnd = header.compactedEnd
        result.unitsStart = header.unitsStart
        result.validEnd = header.unitsStart
        allowsIndex = header.version >= 2
        if size < header.unitsStart {
            // The header region is written whole before any unit: no commit was made.
            result.needsHeader = true
            result.validEnd = 0
            return result
        }
        var numbering = Numbering(
            compactedEnd: header.compactedEnd, startsAtOne: header.flags & LogHeader.numberedFromOne != 0)
        var offset = header.unitsStart
        if header.version >= 2 {
            let slots = try CheckpointSlot.offsets.compactMap { slotOffset in
                CheckpointSlot.decode(try storage.read(at: slotOffset, count: CheckpointSlot.size))
            }
            result.highestCheckpointNumber = slots.map(\.number).max() ?? 0
            if fromCheckpoint {
                for slot in slots.sorted(by: { $0.number > $1.number }) {
                    guard let found = try checkpoint(at: slot, header: header) else { continue }
                    result.index = found.index
                    result.types = found.types
                    result.lastSequence = found.sequence
                    result.checkpoint = slot
                    numbering.accept(found.sequence)
                    offset = slot.unitOffset + UInt64(slot.unitLength)
                    result.validEnd = offset
                    break
                }
            }
        }
        result.index.packing = OperationCodec.Packing(format: header.version)
        while offset < size {
            let unit: (buffer: [UInt8], payload: Range<Int>, sequence: UInt64, isIndex: Bool)
            switch try readUnit(at: offset, numbering: numbering) {
            case .success(let found):
                unit = found
            case .failure(let bad):
                // A reader's scan judges the bad unit too, but cuts nothing off: its opener decides.
                result.numbering = numbering
                result.problem = try classify(bad, at: offset, lastSequence: result.lastSequence, compactedEnd: result.compactedEnd)
                return result
            }
            let payloadOffset = offset + UInt64(LogFrame.headerSize)
            let unitEnd = payloadOffset + UInt64(unit.payload.count)
            guard unitEnd <= ValueLocation.offsetLimit else {
                result.problem = damage(at: offset, "the unit ends past the largest offset the format addresses", compactedEnd: result.compactedEnd)
                return result
            }
            guard offset >= result.compactedEnd || unitEnd <= result.compactedEnd else {
                result.problem = damage(at: offset, "the unit runs past the end of the compacted units at byte \(result.compactedEnd)", compactedEnd: result.compactedEnd)
                return result
            }
            if unit.isIndex {
                let kind = unit.payload.isEmpty ? nil : IndexUnit.Kind(rawValue: unit.buffer[unit.payload.lowerBound])
                guard kind != nil else {
                    result.problem = damage(at: payloadOffset, "an index unit with a valid checksum is of no known kind", compactedEnd: result.compactedEnd)
                    return result
                }
                if kind == .streamPiece,
                   let bad = Self.keepPiece(unit.buffer, payload: unit.payload, at: offset, streams: &result.streams) {
                    result.problem = damage(at: offset + UInt64(bad.offset), bad.reason, compactedEnd: result.compactedEnd)
                    return result
                }
                result.unitsChecked += 1
                result.validEnd = unitEnd
                offset = unitEnd
                continue
            }
            let operations: [DecodedOperation]
            do throws(DecodeFailure) {
                operations = try Self.commitOperations(
                    unit.buffer, payload: unit.payload, payloadOffset: payloadOffset, types: &result.types, streams: &result.streams)
            } catch {
                let at = payloadOffset + UInt64(error.offset - unit.payload.lowerBound)
                result.problem = damage(at: at, "a unit with a valid checksum holds a bad operation: \(error.reason)", compactedEnd: result.compactedEnd)
                return result
            }
            // Every put takes at least 5 bytes of the file, so no honest hint asks for more. Only
            // the runs of a checkpoint can make this throw: `scan` then replays the whole log.
            try result.index.apply(operations, capacityLimit: min(Int(min(size / 5, UInt64(Int32.max))), keyRuns?.bound ?? .max))
            if keyRuns != nil {
                for objects in result.index.types.values { result.mostKeysInMemory = max(result.mostKeysInMemory, objects.memoryCount) }
                if let written = try keyRuns?.spill(&result.index, at: scratchEnd) { scratchEnd = written }
            }
            numbering.accept(unit.sequence)
            result.lastSequence = unit.sequence
            result.unitsChecked += 1
            result.validEnd = unitEnd
            offset = unitEnd
        }
        result.numbering = numbering
        if result.validEnd < result.compactedEnd {
            // Compaction syncs its file before renaming it into place, so no crash cuts it short.
            result.problem = damage(
                at: result.validEnd, "the file ends before the end of the compacted units at byte \(result.compactedEnd)",
                compactedEnd: result.compactedEnd)
        }
        return result
    }

    /// Damage at `offset`, or damage to the compacted units when it lies among them.
    private func damage(at offset: UInt64, _ reason: String, compactedEnd: UInt64, commitsDropped: Int = 1) -> LogProblem {
        let kind: LogProblem.Kind = offset < compactedEnd ? .damagedCompaction(compactedEnd: compactedEnd) : .damage
        return LogProblem(kind: kind, offset: offset, reason: reason, commitsDropped: commitsDropped)
    }

    /// Decides whether the bad unit at `offset` is a torn final append or damage (see the type's comment).
    private mutating func classify(_ bad: BadUnit, at offset: UInt64, lastSequence: UInt64, compactedEnd: UInt64) throws -> LogProblem {
        let search = try laterUnits(after: offset, lastSequence: lastSequence)
        if let later = search.highest {
            let highest = max(later, bad.sequenceAfterGap ?? later)
            let dropped = highest > lastSequence ? Int(clamping: highest - lastSequence) : 1
            return damage(at: offset, bad.reason + ", and a valid unit follows it", compactedEnd: compactedEnd, commitsDropped: dropped)
        }
        if let end = bad.declaredEnd {
            if bad.checksumMatched {
                // A gap hides the commits numbered between the last kept one and the bad unit's.
                let dropped = bad.sequenceAfterGap.map { Int(clamping: $0 - lastSequence) } ?? 1
                return damage(at: offset, bad.reason, compactedEnd: compactedEnd, commitsDropped: dropped)
            }
            if search.gaveUp {
                return damage(
                    at: offset, bad.reason + ", and the search for a valid unit after it checked \(search.checked) bytes, more than the rest of the file holds several times over, without finding one, so it is not an interrupted last append",
                    compactedEnd: compactedEnd)
            }
            if end < size {
                return damage(
                    at: offset, bad.reason + ", and \(size - end) more bytes follow the end it declares, so it is not an interrupted last append",
                    compactedEnd: compactedEnd)
            }
        }
        if offset < compactedEnd {
            // Compaction syncs its file before renaming it into place, so no crash tears it.
            return damage(at: offset, bad.reason, compactedEnd: compactedEnd)
        }
        return LogProblem(kind: .tornTail, offset: offset, reason: bad.reason)
    }

    private struct BadUnit: Error {
        var reason: String
        /// Where the unit's header says it ends; nil when the header itself is cut short.
        var declaredEnd: UInt64?
        /// The checksum matched, so the unit is intact and bad for another reason.
        var checksumMatched = false
        /// The sequence number of an intact unit that skips numbers after its predecessor's.
        var sequenceAfterGap: UInt64?
    }

    /// Which sequence numbers may follow one another (docs/FILE_FORMAT.md, "Units"): each commit
    /// takes the next number, so a gap is a unit missing; the units of one compacted run share
    /// one number; a file starts at 1 unless it starts with such a run.
    struct Numbering {
        /// Where the compacted run the header records ends (0 for none).
        let compactedEnd: UInt64
        /// The header says the file numbered its units from 1 (`LogHeader.numberedFromOne`).
        let startsAtOne: Bool
        var previous: UInt64?
        /// Every unit so far carried the first one's number: in a file from before the header
        /// recorded compacted runs, they may be one.
        var inFirstRun = true

        mutating func accept(_ sequence: UInt64) {
            if let previous, sequence != previous { inFirstRun = false }
            previous = sequence
        }

        /// Why an intact unit numbered `sequence` at `offset` cannot come next, or nil when it can.
        func problem(with sequence: UInt64, at offset: UInt64) -> String? {
            guard sequence <= LogFrame.maximumSequence else {
                return "the unit's sequence number \(sequence) is above \(LogFrame.maximumSequence), the highest a store writes"
            }
            guard let previous else {
                guard offset >= compactedEnd, startsAtOne, sequence != 1 else { return nil }
                return "the first unit's sequence number is \(sequence), but a store's first commit takes 1, so the units before it are missing"
            }
            if offset < compactedEnd {
                guard sequence != previous else { return nil }
                return "the unit's sequence number \(sequence) differs from \(previous), which every unit of the compacted run carries"
            }
            if sequence < previous {
                return "the unit's sequence number \(sequence) is below its predecessor's \(previous)"
            }
            if sequence == previous {
                if inFirstRun, compactedEnd == 0, !startsAtOne { return nil }
                return "the unit's sequence number \(sequence) repeats its predecessor's, as only the units of one compaction do"
            }
            guard sequence - previous == 1 else {
                return "the unit's sequence number \(sequence) does not follow its predecessor's \(previous): each commit takes the next number, so the units between them are missing"
            }
            return nil
        }
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
        at offset: UInt64, numbering: Numbering
    ) throws -> Result<(buffer: [UInt8], payload: Range<Int>, sequence: UInt64, isIndex: Bool), BadUnit> {
        guard let (head, start) = try bytes(at: offset, count: LogFrame.headerSize) else {
            return .failure(BadUnit(reason: "the unit header is cut short by the end of the file"))
        }
        var reader = ByteReader(head, from: start, to: start + LogFrame.headerSize)
        guard let field = try? reader.uint32(), let masked = try? reader.uint32(), let sequence = try? reader.uint64() else {
            return .failure(BadUnit(reason: "the unit header is cut short by the end of the file"))
        }
        let isIndex = allowsIndex && field & LogFrame.indexFlag != 0
        let length = isIndex ? field & ~LogFrame.indexFlag : field
        let declaredEnd = offset + UInt64(LogFrame.headerSize) + UInt64(length)
        guard Int(length) <= LogFrame.maximumPayload else {
            return .failure(BadUnit(reason: "the unit declares \(length) payload bytes, more than any unit holds", declaredEnd: declaredEnd))
        }
        // Compared with the file's size before anything is read or allocated.
        guard declaredEnd <= size else {
            return .failure(BadUnit(reason: "the unit's declared length of \(length) bytes runs past the end of the file", declaredEnd: declaredEnd))
        }
        guard try frameChecksumMatches(at: offset, length: Int(length), masked: masked) else {
            return .failure(BadUnit(reason: "the unit's checksum does not match its contents", declaredEnd: declaredEnd))
        }
        guard let (buffer, frameStart) = try bytes(at: offset, count: LogFrame.headerSize + Int(length)) else {
            return .failure(BadUnit(reason: "the unit's declared length of \(length) bytes runs past the end of the file", declaredEnd: declaredEnd))
        }
        if isIndex {
            // An index unit repeats the number of the last commit before it.
            let expected = numbering.previous ?? 0
            guard sequence == expected else {
                return .failure(BadUnit(
                    reason: "the index unit's sequence number \(sequence) differs from \(expected), the last commit's before it",
                    declaredEnd: declaredEnd, checksumMatched: true))
            }
            let payloadStart = frameStart + LogFrame.headerSize
            return .success((buffer, payloadStart..<(payloadStart + Int(length)), sequence, true))
        }
        if let problem = numbering.problem(with: sequence, at: offset) {
            let gap = numbering.previous.flatMap { sequence > $0 + 1 && sequence <= LogFrame.maximumSequence ? sequence : nil }
            return .failure(BadUnit(reason: problem, declaredEnd: declaredEnd, checksumMatched: true, sequenceAfterGap: gap))
        }
        let payloadStart = frameStart + LogFrame.headerSize
        return .success((buffer, payloadStart..<(payloadStart + Int(length)), sequence, false))
    }

    /// The checkpoint `slot` points at, when the unit there is intact, is a checkpoint, carries
    /// the slot's number and sequence, and lies after the header region and any compacted run;
    /// nil otherwise (a torn, stale or damaged checkpoint: the other slot or a full replay decides).
    private func checkpoint(at slot: CheckpointSlot, header: LogHeader) throws -> IndexUnit.Checkpoint? {
        let length = UInt64(slot.unitLength)
        guard slot.unitOffset >= header.unitsStart, slot.unitOffset >= header.compactedEnd,
              length > UInt64(LogFrame.headerSize), length <= UInt64(LogFrame.headerSize + LogFrame.maximumPayload),
              slot.unitOffset <= size, length <= size - slot.unitOffset
        else { return nil }
        // Read once: decoded whole here, never read again. An encrypted log then decrypts its
        // pages into the frame without keeping them; a plain one reads from its mapping as ever.
        let frame = try storage.authenticatesReads
            ? storage.readOnce(at: slot.unitOffset, count: Int(length)) : storage.read(at: slot.unitOffset, count: Int(length))
        var reader = ByteReader(frame)
        guard let field = try? reader.uint32(), let masked = try? reader.uint32(), let sequence = try? reader.uint64(),
              field & LogFrame.indexFlag != 0, UInt64(field & ~LogFrame.indexFlag) == length - UInt64(LogFrame.headerSize),
              sequence == slot.sequence,
              LogFrame.checksum(frame, frameStart: 0, payloadLength: Int(length) - LogFrame.headerSize) == CRC32C.unmask(masked)
        else { return nil }
        if followsWriter {
            // Whole and synced before its slot was written: the checkpoint's runs may be mapped.
            (storage as? FileLog)?.extendMapping(to: slot.unitOffset + length)
        }
        guard let found = try? IndexUnit.decodeCheckpoint(
            frame, range: LogFrame.headerSize..<frame.count, unitOffset: slot.unitOffset, unitsStart: header.unitsStart, log: storage),
            found.number == slot.number, found.sequence == slot.sequence
        else { return nil }
        return found
    }

    /// The checksum of the unit at `offset`, read at most a window at a time. Holes in the file
    /// read as zeros, so they are hashed as zeros without being read: a unit declaring a gigabyte
    /// over a sparse file costs a few system calls.
    private func checksumInPieces(at offset: UInt64, payloadLength: Int) throws -> UInt32 {
        let head = try storage.read(at: offset, count: LogFrame.headerSize)
        var crc = head.withUnsafeBytes { raw in
            CRC32C.update(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<4])), UnsafeRawBufferPointer(rebasing: raw[8..<16]))
        }
        var position = offset + UInt64(LogFrame.headerSize)
        let end = position + UInt64(payloadLength)
        while position < end {
            let data = min(storage.dataStart(from: position) ?? end, end)
            if data > position {
                crc = CRC32C.extendWithZeros(crc, count: data - position)
                position = data
                continue
            }
            let stop = max(position + 1, min(storage.holeStart(from: position), end, position + UInt64(Self.windowSize)))
            let piece = try storage.read(at: position, count: Int(stop - position))
            crc = piece.withUnsafeBytes { CRC32C.update(crc, $0) }
            position = stop
        }
        return crc
    }

    /// What the search for valid units after a bad one found.
    struct LaterUnits {
        /// The highest sequence number of the valid units found, nil when none was.
        var highest: UInt64?
        /// The bytes whose checksums the search computed.
        var checked: UInt64 = 0
        /// The search stopped at its budget before the end of the file.
        var gaveUp = false
    }

    /// The valid units that start after `offset`. A unit is valid here when its checksum matches
    /// and its sequence lies within `last ... last + 2 + distance/16` of the last one found (every
    /// commit adds one and every unit is at least 16 bytes), which rejects almost every candidate
    /// position before its checksum is computed. Each valid unit found is skipped whole. Bytes
    /// crafted so that every 16th position passes that test would still make each one hash up to
    /// the end of the file, so the search stops once it has hashed four times the rest of the file
    /// (and 64 MiB): no torn tail holds that many plausible headers.
    private mutating func laterUnits(after offset: UInt64, lastSequence: UInt64) throws -> LaterUnits {
        var found = LaterUnits()
        let budget = 4 * (size - offset) + (64 << 20)
        var base = lastSequence
        var baseOffset = offset
        var candidate = offset + 1
        // Where the data `candidate` lies in ends. A header lying wholly in a hole is sixteen zero
        // bytes, which never make a valid unit, so holes are skipped instead of searched.
        var dataEnd = storage.holeStart(from: candidate)
        while candidate + UInt64(LogFrame.headerSize) <= size {
            if candidate >= dataEnd {
                guard let data = storage.dataStart(from: candidate) else { break }
                candidate = max(candidate, data - min(data, UInt64(LogFrame.headerSize - 1)))
                dataEnd = max(storage.holeStart(from: data), data + 1)
                continue
            }
            guard let (head, start) = try bytes(at: candidate, count: LogFrame.headerSize) else { break }
            var reader = ByteReader(head, from: start, to: start + LogFrame.headerSize)
            guard let field = try? reader.uint32(), let masked = try? reader.uint32(), let sequence = try? reader.uint64() else {
                break
            }
            let length = allowsIndex ? field & ~LogFrame.indexFlag : field
            let distance = candidate - baseOffset
            let frameLength = LogFrame.headerSize + Int(length)
            guard sequence >= base, sequence - base <= 2 + distance / UInt64(LogFrame.headerSize),
                  Int(length) <= LogFrame.maximumPayload, candidate + UInt64(frameLength) <= size
            else {
                candidate += 1
                continue
            }
            found.checked += UInt64(frameLength)
            if found.checked > budget {
                found.gaveUp = true
                break
            }
            guard try frameChecksumMatches(at: candidate, length: Int(length), masked: masked) else {
                candidate += 1
                continue
            }
            found.highest = max(found.highest ?? sequence, sequence)
            base = sequence
            candidate += UInt64(frameLength)
            baseOffset = candidate
        }
        return found
    }

    /// Whether the unit at `offset` with a `length`-byte payload has the checksum `masked`. A
    /// unit larger than the window is checked a window at a time before anything reads it whole,
    /// so that a length no commit wrote (over a hole, say) costs no more memory than the window.
    private mutating func frameChecksumMatches(at offset: UInt64, length: Int, masked: UInt32) throws -> Bool {
        if LogFrame.headerSize + length > Self.windowSize {
            return try checksumInPieces(at: offset, payloadLength: length) == CRC32C.unmask(masked)
        }
        guard let (buffer, frameStart) = try bytes(at: offset, count: LogFrame.headerSize + length) else { return false }
        return LogFrame.checksum(buffer, frameStart: frameStart, payloadLength: length) == CRC32C.unmask(masked)
    }
}

/// The commits a reader beside a writer found after the end it had validated (`Recovery.follow`).
struct FollowedTail: Sendable {
    /// The operations of the new commits, in order, to apply to the reader's index.
    var operations: [DecodedOperation] = []
    var types: TypeTable
    var numbering: Recovery.Numbering
    var lastSequence: UInt64
    /// The end of the last whole, valid unit: what the reader may now read.
    var validEnd: UInt64
    /// The types the new commits wrote (put, delete or delete all).
    var writtenTypes: Set<String> = []
    /// The pieces of streamed commits read and not yet committed.
    var streams: PendingStreams
}

extension Recovery {
    /// Reads the units a writer appended after `validEnd`, which a reader validated earlier, up
    /// to the first one not (yet) whole and valid: a unit is applied only once its frame, checksum
    /// and sequence number are good, so a reader never sees a commit in part. Reads through
    /// `pread` anything past `validEnd` (never a mapping of bytes it has not checked).
    static func follow(
        _ storage: any LogStorage, from validEnd: UInt64, types: TypeTable, numbering: Numbering, lastSequence: UInt64,
        formatVersion: UInt32, streams: PendingStreams
    ) throws -> FollowedTail {
        var recovery = Recovery(storage: storage)
        recovery.followsWriter = true
        recovery.allowsIndex = formatVersion >= 2
        recovery.size = try storage.size()
        var tail = FollowedTail(types: types, numbering: numbering, lastSequence: lastSequence, validEnd: validEnd, streams: streams)
        var offset = validEnd
        while offset < recovery.size {
            guard case .success(let unit) = try recovery.readUnit(at: offset, numbering: tail.numbering) else { break }
            let payloadOffset = offset + UInt64(LogFrame.headerSize)
            let unitEnd = payloadOffset + UInt64(unit.payload.count)
            guard unitEnd <= ValueLocation.offsetLimit else { break }
            if unit.isIndex {
                // Key runs and checkpoints: the reader keeps its own index in memory.
                guard !unit.payload.isEmpty, let kind = IndexUnit.Kind(rawValue: unit.buffer[unit.payload.lowerBound]) else { break }
                if kind == .streamPiece {
                    var streams = tail.streams
                    guard keepPiece(unit.buffer, payload: unit.payload, at: offset, streams: &streams) == nil else { break }
                    tail.streams = streams
                }
                tail.validEnd = unitEnd
                offset = unitEnd
                continue
            }
            var unitTypes = tail.types
            var streams = tail.streams
            let operations: [DecodedOperation]
            do throws(DecodeFailure) {
                operations = try commitOperations(
                    unit.buffer, payload: unit.payload, payloadOffset: payloadOffset, types: &unitTypes, streams: &streams)
            } catch {
                break
            }
            tail.streams = streams
            for operation in operations {
                switch operation {
                case .put(let type, _, _, _), .delete(let type, _), .deleteAll(let type): tail.writtenTypes.insert(type)
                case .setSchema, .setMetadata, .reserveCapacity: break
                }
            }
            tail.types = unitTypes
            tail.operations += operations
            tail.numbering.accept(unit.sequence)
            tail.lastSequence = unit.sequence
            tail.validEnd = unitEnd
            offset = unitEnd
        }
        return tail
    }
}

extension Recovery {
    /// Keeps the stream piece whose payload is `bytes[payload]` (its unit at `offset`) in
    /// `streams`; returns where in the unit and why it is bad, or nil.
    static func keepPiece(
        _ bytes: [UInt8], payload: Range<Int>, at offset: UInt64, streams: inout PendingStreams
    ) -> (offset: Int, reason: String)? {
        let payloadOffset = offset + UInt64(LogFrame.headerSize)
        let piece: (header: StreamPiece.Header, operations: [DecodedOperation])
        do throws(DecodeFailure) {
            piece = try StreamPiece.decode(bytes, range: payload, payloadOffset: payloadOffset)
        } catch {
            let at = LogFrame.headerSize + error.offset - payload.lowerBound
            return (at, "a piece of a streamed commit with a valid checksum holds a bad operation: \(error.reason)")
        }
        let checksum = StreamPiece.frameChecksum(bytes, payloadStart: payload.lowerBound)
        if let reason = streams.add(piece.header, operations: piece.operations, frameChecksum: checksum, at: offset) {
            return (LogFrame.headerSize, reason)
        }
        return nil
    }

    /// The operations a commit unit applies: those of the streamed pieces it names (taken out
    /// of `streams`), then its own. `types` gains the unit's definitions only if all of it decodes.
    static func commitOperations(
        _ bytes: [UInt8], payload: Range<Int>, payloadOffset: UInt64, types: inout TypeTable, streams: inout PendingStreams
    ) throws(DecodeFailure) -> [DecodedOperation] {
        let (reference, rest) = try StreamReference.decode(bytes, range: payload)
        let own = try OperationCodec.decode(
            bytes, range: rest, fileOffset: payloadOffset + UInt64(rest.lowerBound - payload.lowerBound), types: &types)
        guard let reference else { return own }
        switch streams.take(reference) {
        case .success(let streamed): return streamed + own
        case .failure(let failure): throw DecodeFailure(offset: payload.lowerBound, reason: failure.reason)
        }
    }
}
