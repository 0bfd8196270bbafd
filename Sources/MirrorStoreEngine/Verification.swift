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
    /// The sequence number the newest valid checkpoint covers, nil when the file has none.
    public var checkpointSequence: UInt64?
    /// The persisted key runs that checkpoint lists, over every type.
    public var persistedRuns: Int = 0
    /// The persisted runs of secondary indexes that checkpoint lists, over every index.
    public var persistedIndexRuns: Int = 0
    /// Why opening from the checkpoint would not give the state a replay of the whole log gives
    /// (a damaged run block, a key or location that differs), or nil when they agree.
    public var checkpointDisagreement: String?
    /// The most keys of one type the replay held in memory at once: for tests that it does not
    /// grow with the store.
    var replayKeysHeld = 0

    /// Whether every byte of the file belongs to a good unit.
    public var isIntact: Bool { firstDamageOffset == nil && checkpointDisagreement == nil }

    /// A one-line summary.
    public var description: String {
        let units = "\(unitsChecked) unit\(unitsChecked == 1 ? "" : "s") checked, last sequence \(lastSequence)"
        if let checkpointDisagreement {
            return "'\(path)' has a checkpoint that disagrees with its log (\(checkpointDisagreement)): \(units); opening in strict mode may fail to read some objects, and recoverValidPrefix replays the whole log."
        }
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
/// what earlier recoveries left out and kept in sidecar files. When the file has a checkpoint, it
/// also opens from it and checks that every run block is intact and that the state it gives
/// equals the state the whole log gives, and that every persisted index run is intact, in order,
/// holds the counts the checkpoint lists and, merged with the other runs of its index, counts
/// each entry once or not at all. (Whether an index holds the keys its objects give depends on
/// the definitions, which only the layer above knows; it checks that when it defines them.)
///
/// ```swift
/// let report = try verifyStoreFile(at: "heroes.store")
/// print(report)   // 'heroes.store' is intact: format version 1, 42 units checked, ...
/// ```
///
/// Throws `notAStore`, `newerFormat`, `corrupted` (for a damaged header) or `io`.
///
/// A writer may be committing meanwhile (the check takes no lock): a last unit it is appending
/// looks torn, and a commit between the full replay and the checkpoint's makes them disagree. So
/// a check that finds either runs again (up to five times, 20 ms apart) on the file as it then
/// is; a torn tail that stays is reported. The file is
/// read with `pread`, and through a mapping only up to what the scan validated, so a writer that
/// cuts off a torn tail meanwhile cannot make the check fault. The replay holds at most 65,536
/// keys of a type in memory and writes the rest as key runs to an unnamed scratch file in the
/// temporary directory (`TMPDIR`, else `/tmp`), never to the store.
public func verifyStoreFile(at path: String, encryption: EngineConfiguration.Encryption? = nil) throws -> VerificationReport {
    try verifyStoreFile(at: path, encryption: encryption, replayKeysInMemory: EngineConfiguration().rewriteKeysInMemory)
}

/// `verifyStoreFile(at:encryption:)`, the replay of the whole log holding at most
/// `replayKeysInMemory` keys per type in memory: past that they go to key runs in an unnamed
/// scratch file of the temporary directory (`RewriteKeyRuns`), which the replay's state then
/// reads, so that checking a store holds a bounded number of keys rather than about 17 bytes
/// per object. Where no scratch file can be made, the replay holds every key.
func verifyStoreFile(at path: String, encryption: EngineConfiguration.Encryption?, replayKeysInMemory: Int) throws -> VerificationReport {
    let keys = try encryption.map { (encryption) throws(StorageError) in try EncryptionKeys(encryption.secret) }
    let descriptor = try FileSystem.openRegularFile(path, flags: O_RDONLY)
    guard descriptor >= 0 else { throw FileSystem.ioError("open the store file", path) }
    let file = FileLog(path: path, descriptor: descriptor, faults: nil, mappedSize: 0)
    let log = try EncryptedLog.storage(for: file, keys: keys, writable: false, followsWriter: true)
    var attempt = 0
    while true {
        attempt += 1
        let (report, unsettled) = try verify(log, path: path, replayKeysInMemory: replayKeysInMemory)
        guard unsettled, attempt < 5 else { return report }
        var pause = timespec(tv_sec: 0, tv_nsec: 20_000_000)
        _ = nanosleep(&pause, nil)
    }
}

/// One check of `log`, and whether what it found may be a writer's commit in progress (a torn
/// tail, or a checkpoint that disagrees with the replay).
private func verify(_ log: any LogStorage, path: String, replayKeysInMemory: Int) throws -> (VerificationReport, unsettled: Bool) {
    // The scratch file lives as long as the replay's state, whose runs lie in it.
    let keyRuns = ScratchFile.make(sealed: log.authenticatesReads).map { RewriteKeyRuns(bound: replayKeysInMemory, log: $0, sequence: 1, valuesInLog: false) }
    let recovered = try Recovery.scan(log, fromCheckpoint: false, keyRuns: keyRuns)
    (log as? FileLog)?.extendMapping(to: recovered.validEnd)
    if recovered.needsHeader {
        throw StorageError(.notAStore(path: path))
    }
    var checkpointSequence: UInt64?
    var persistedRuns = 0
    var persistedIndexRuns = 0
    var disagreement: String?
    var unsettled = recovered.problem?.kind == .tornTail
    if recovered.problem == nil, recovered.formatVersion >= 2 {
        do {
            // Up to the replay's end: a writer's later commits are not part of this check.
            let fromCheckpoint = try Recovery.scan(log, fromCheckpoint: true, endingAt: recovered.validEnd)
            if fromCheckpoint.lastSequence != recovered.lastSequence {
                unsettled = true
                disagreement = "the checkpoint's scan reached commit \(fromCheckpoint.lastSequence), the replay \(recovered.lastSequence)"
            } else if let slot = fromCheckpoint.checkpoint {
                checkpointSequence = slot.sequence
                persistedRuns = fromCheckpoint.index.types.values.reduce(0) { $0 + $1.runs.count }
                try fromCheckpoint.index.regions?.verifyAll(in: log)
                persistedIndexRuns = fromCheckpoint.index.persistedIndexes.values.reduce(0) { $0 + $1.runs.count }
                disagreement = try StateComparison.difference(fromCheckpoint.index, recovered.index)
                    ?? StateComparison.indexDamage(fromCheckpoint.index.persistedIndexes)
            }
        } catch {
            disagreement = "\(error)"
        }
    }
    let report = VerificationReport(
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
        keptRecoveries: try keptRecoveries(ofStoreAt: path),
        checkpointSequence: checkpointSequence,
        persistedRuns: persistedRuns,
        persistedIndexRuns: persistedIndexRuns,
        checkpointDisagreement: disagreement,
        replayKeysHeld: recovered.mostKeysInMemory)
    return (report, unsettled)
}

/// Compares two in-memory states of one log, as a checkpoint and a full replay give them.
enum StateComparison {
    /// The first difference between `lhs` and `rhs` (objects, their locations, schemas,
    /// metadata), or nil when they hold the same state. Reading runs may throw. Each key `lhs`
    /// lists is looked up in `rhs`, so the check holds nothing per object beyond the two states:
    /// with the counts equal and every key listed once, that is the same set of keys.
    static func difference(_ lhs: KeyIndex, _ rhs: KeyIndex) throws -> String? {
        if lhs.metadata != rhs.metadata { return "the metadata differs" }
        for name in Set(lhs.types.keys).union(rhs.types.keys).sorted() {
            let left = lhs.types[name] ?? TypeIndex(), right = rhs.types[name] ?? TypeIndex()
            if left.schema != right.schema { return "the schema of '\(name)' differs" }
            if left.count != right.count { return "'\(name)' has \(left.count) objects against \(right.count)" }
            var listed = 0
            var previous: StorageKey?
            var found: String?
            // In key order, so that a key listed twice shows as one not above the one before.
            try left.forEachInKeyOrder { key, packed in
                guard found == nil else { return }
                listed += 1
                if let previous, !StorageKey.precedes(previous, key) {
                    found = "'\(name)' lists object \(key) out of order or twice"
                    return
                }
                previous = key
                guard let other = try right.location(for: key), rhs.resolve(other) == lhs.resolve(packed) else {
                    found = "object \(key) of '\(name)' lies elsewhere or is missing"
                    return
                }
            }
            if let found { return found }
            if listed != left.count { return "'\(name)' lists \(listed) objects but counts \(left.count)" }
        }
        return nil
    }

    /// The first fault of the persisted indexes' runs: an entry out of order, block counts that
    /// are not the checkpoint's, an entry counted other than once or not at all over the runs,
    /// or a total that is not the index's count. Reading a damaged block throws.
    static func indexDamage(_ indexes: [String: PersistedIndex]) throws -> String? {
        for (name, index) in indexes.sorted(by: { $0.key < $1.key }) {
            for run in index.runs {
                var previous: IndexEntry?
                for block in run.fences.indices {
                    run.blocks.prefetch(forPassAt: block)
                    var live = 0
                    for position in 0..<run.count(inBlock: block) {
                        let (entry, isLive) = try run.entry(block, position)
                        if let previous, !IndexEntry.precedes(previous, entry) { return "a run of index '\(name)' is out of order at \(entry.key)" }
                        if position == 0, entry != run.fences[block] { return "a block of index '\(name)' does not start with its fence" }
                        previous = entry
                        if isLive { live += 1 }
                    }
                    if live != Int(run.liveCounts[block]) { return "a block of index '\(name)' holds other counts than the checkpoint lists" }
                }
            }
            var merge = IndexMerge(try index.runs.map { try IndexCursor(run: $0, after: .noEntry) }, forward: true)
            var total = 0
            while let (entry, weight) = try merge.next() {
                guard weight == 0 || weight == 1 else { return "the runs of index '\(name)' count \(entry.key) of \(entry.object) \(weight) times" }
                total += weight
            }
            if total != index.count { return "the runs of index '\(name)' hold \(total) entries, not \(index.count)" }
        }
        return nil
    }
}
