import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// Bit flips and zero-filled spans must end in a typed error or in exactly a committed prefix
/// that ends before the damage, with whatever was left out reported and kept: never a crash,
/// never a damaged unit applied, never a state no commit made, never a silent loss.
@Suite struct DamageTests {
    /// How one open of a damaged image ended.
    enum Verdict: Hashable {
        case committedPrefix
        case typedError
        case wrong(String)
    }

    /// The two shapes of file the seeded tests damage.
    enum Layout: String, CustomStringConvertible, CaseIterable {
        /// 50 commits.
        case commits
        /// The output of compacting 40 commits (in units of about 200 bytes), then 20 commits.
        case compacted

        var description: String { rawValue }

        func record(at path: String, seed: UInt64) throws -> RecordedStore {
            switch self {
            case .commits: try RecordedStore.make(at: path, units: 50, seed: seed)
            case .compacted: try RecordedStore.makeCompacted(at: path, before: 40, after: 20, chunkSize: 200, seed: seed)
            }
        }
    }

    /// Opens `damaged` in `mode` and classifies the outcome. `firstDamaged` is the lowest changed
    /// byte; `compactedEnd` the end of the compacted units (0 for none). Removes the sidecars.
    static func classify(
        _ damaged: [UInt8], firstDamaged: Int, recorded: RecordedStore, compactedEnd: Int,
        mode: EngineConfiguration.RecoveryMode, at path: String
    ) throws -> Verdict {
        try writeFile(path, damaged)
        defer { for sidecar in droppedSidecars(of: path) { try? FileManager.default.removeItem(atPath: sidecar) } }
        let opened: (state: StoreState, report: RecoveryReport?)
        do {
            opened = try openStateAndReport(path, fastConfiguration(mode))
        } catch let error as StorageError {
            if firstDamaged < LogHeader.size {
                switch error.kind {
                case .notAStore, .newerFormat, .corrupted(_, 0, _), .corrupted(_, 8, _): return .typedError
                default: return .wrong("unexpected error for a damaged header: \(error)")
                }
            }
            switch error.kind {
            case .compactionDamaged(_, let offset, let end, _, _) where firstDamaged < compactedEnd:
                return offset <= UInt64(firstDamaged) && end == UInt64(compactedEnd)
                    ? .typedError : .wrong("compaction damage reported at \(offset), after the first damaged byte")
            case .corrupted(_, let offset, _) where mode == .strict && firstDamaged >= compactedEnd:
                return offset <= UInt64(firstDamaged) ? .typedError : .wrong("damage reported at \(offset), after the first damaged byte")
            default:
                return .wrong("unexpected error: \(error)")
            }
        } catch {
            return .wrong("untyped error \(error)")
        }
        if firstDamaged >= LogHeader.size, firstDamaged < Int(LogHeader().unitsStart) {
            // The checkpoint slots and the reserved rest of the header region: a damaged slot is
            // passed over for the other one or a replay, so the whole state opens.
            return opened.state == recorded.states.last && opened.report == nil
                ? .committedPrefix : .wrong("damage to the header region changed what opened: \(opened.state)")
        }
        guard let units = recorded.states.firstIndex(of: opened.state) else {
            return .wrong("a state no commit made: \(opened.state)")
        }
        guard recorded.unitEnds[units] <= firstDamaged else { return .wrong("a damaged unit was applied") }
        let last = recorded.states.count - 1
        guard units < last else { return .wrong("the damage went unnoticed") }
        guard let report = opened.report else { return .wrong("\(last - units) commits dropped silently") }
        let kept = Array(damaged[recorded.unitEnds[units]...])
        guard report.offset == UInt64(recorded.unitEnds[units]), report.droppedBytes == UInt64(kept.count),
              let sidecar = report.keptAt, try keptBytes(sidecar) == kept else {
            return .wrong("the left-out bytes were not reported or kept: \(report)")
        }
        if mode == .strict, units < last - 1 || report.cause != .tornFinalCommit {
            return .wrong("strict mode dropped \(last - units) commits: \(report)")
        }
        return .committedPrefix
    }

    /// Opens `damaged` in both modes; records an issue for every wrong outcome and counts the rest.
    static func check(
        _ damaged: [UInt8], original: [UInt8], recorded: RecordedStore, compactedEnd: Int, at path: String,
        context: String, tally: inout [Verdict: Int]
    ) throws {
        guard let firstDamaged = damaged.indices.first(where: { damaged[$0] != original[$0] }) else { return }
        for mode in [EngineConfiguration.RecoveryMode.strict, .recoverValidPrefix] {
            let verdict = try classify(damaged, firstDamaged: firstDamaged, recorded: recorded, compactedEnd: compactedEnd, mode: mode, at: path)
            tally[verdict, default: 0] += 1
            if case .wrong(let why) = verdict {
                Issue.record("\(context), \(mode): \(why)")
            }
        }
    }

    static func summary(_ tally: [Verdict: Int]) -> String {
        let wrong = tally.filter { if case .wrong = $0.key { true } else { false } }.map(\.value).reduce(0, +)
        return "\(tally[.committedPrefix] ?? 0) committed prefixes, \(tally[.typedError] ?? 0) typed errors, \(wrong) wrong"
    }

    @Test(arguments: Layout.allCases)
    func singleBitFlipsGiveACommittedPrefixOrATypedError(layout: Layout) throws {
        let directory = TemporaryDirectory()
        let seed = SeededRandom.seed(default: 0xB17F)
        let recorded = try layout.record(at: directory.file("source.store"), seed: seed)
        let compactedEnd = layout == .compacted ? recorded.unitEnds[0] : 0
        var generator = SeededRandom(seed: seed)
        var tally: [Verdict: Int] = [:]
        for round in 0..<1_000 {
            // Half the flips land inside the compacted units, where a partial result is most tempting.
            let range = layout == .compacted && round % 2 == 0 ? LogHeader.size..<compactedEnd : 0..<recorded.bytes.count
            let offset = Int.random(in: range, using: &generator)
            let bit = UInt8(1) << UInt8.random(in: 0..<8, using: &generator)
            var damaged = recorded.bytes
            damaged[offset] ^= bit
            try Self.check(damaged, original: recorded.bytes, recorded: recorded, compactedEnd: compactedEnd,
                           at: directory.file("damaged.store"),
                           context: "seed \(seed), \(layout), round \(round), flip bit \(bit) at \(offset)", tally: &tally)
        }
        print("bit flips, \(layout), seed \(seed): \(Self.summary(tally))")
        #expect(tally.keys.allSatisfy { if case .wrong = $0 { false } else { true } })
    }

    @Test(arguments: Layout.allCases)
    func zeroFilledSpansGiveACommittedPrefixOrATypedError(layout: Layout) throws {
        let directory = TemporaryDirectory()
        let seed = SeededRandom.seed(default: 0x2E60)
        let recorded = try layout.record(at: directory.file("source.store"), seed: seed)
        let compactedEnd = layout == .compacted ? recorded.unitEnds[0] : 0
        var generator = SeededRandom(seed: seed)
        var tally: [Verdict: Int] = [:]
        for round in 0..<500 {
            let start = Int.random(in: 0..<recorded.bytes.count, using: &generator)
            let length = Int.random(in: 1...(round % 3 == 0 ? 4_096 : 64), using: &generator)
            let end = min(recorded.bytes.count, start + length)
            var damaged = recorded.bytes
            damaged.replaceSubrange(start..<end, with: repeatElement(0, count: end - start))
            try Self.check(damaged, original: recorded.bytes, recorded: recorded, compactedEnd: compactedEnd,
                           at: directory.file("damaged.store"),
                           context: "seed \(seed), \(layout), round \(round), zeros at \(start)..<\(end)", tally: &tally)
        }
        print("zero spans, \(layout), seed \(seed): \(Self.summary(tally))")
        #expect(tally.keys.allSatisfy { if case .wrong = $0 { false } else { true } })
    }

    @Test func damageIsReportedWithItsOffsetAndVerifyFindsIt() throws {
        let directory = TemporaryDirectory()
        let recorded = try RecordedStore.make(at: directory.file("source.store"), units: 10, seed: 3)
        let path = directory.file("damaged.store")
        let unitStart = recorded.unitEnds[4]
        var damaged = recorded.bytes
        damaged[unitStart + LogFrame.headerSize] ^= 0x10
        try writeFile(path, damaged)
        let reason = "the unit's checksum does not match its contents, and a valid unit follows it"
        #expect(throws: StorageError(.corrupted(path: path, offset: UInt64(unitStart), reason: reason))) {
            try StorageEngine(path: path, configuration: fastConfiguration())
        }
        let report = try verifyStoreFile(at: path)
        #expect(report.firstDamageOffset == UInt64(unitStart))
        #expect(report.unitsChecked == 4)
        #expect(!report.isTornTail)
        #expect(report.commitsDropped == 6)
        let dropped = recorded.bytes.count - unitStart
        #expect(report.description == "'\(path)' has damage at byte offset \(unitStart) (\(reason)): 4 units checked, last sequence 4, valid up to byte \(unitStart) of \(recorded.bytes.count); opening in strict mode refuses it; recoverValidPrefix drops the last \(dropped) bytes (at least 6 commits) and keeps them in a sidecar file.")
        // Point-in-time recovery keeps the four good units and keeps the other six beside the store.
        let (state, recovery) = try openStateAndReport(path, fastConfiguration(.recoverValidPrefix))
        #expect(state == recorded.states[4])
        let expected = RecoveryReport(
            cause: .damage, offset: UInt64(unitStart), droppedBytes: UInt64(dropped), commitsDropped: 6,
            lastKeptSequence: 4, reason: reason, keptAt: path + ".dropped-1")
        #expect(recovery == expected)
        #expect(try keptBytes(path + ".dropped-1") == Array(damaged[unitStart...]))
        let verified = try verifyStoreFile(at: path)
        #expect(verified.isIntact)
        #expect(verified.keptRecoveries == [expected])
    }

    /// The probe's case: four corrupt bytes inside the last unit of a large store. It reads as
    /// a torn final commit, so it is dropped, but kept in a sidecar and reported, never silently.
    /// (Without checkpoints: closing would write one after the unit, which is then no longer
    /// the last, and its damage is found when the objects it holds are read.)
    @Test func aCorruptFinalUnitIsKeptBesideTheStoreAndReported() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("large.store")
        var withoutCheckpoints = fastConfiguration()
        withoutCheckpoints.checkpointInterval = 0
        let engine = try StorageEngine(path: path, configuration: withoutCheckpoints)
        var small = WriteBatch()
        small.setMetadata(key: "version", value: [1])
        try engine.commit(small)
        var large = WriteBatch()
        for number in 0..<10_000 {
            large.put(type: "Item", key: .integer(Int64(number)), value: Array("item number \(number)".utf8))
        }
        try engine.commit(large)
        let firstEnd = try #require(try RecordedStore.unitEnd(of: path, units: 1))
        try engine.close()
        let intact = try readFile(path)
        var damaged = intact
        let middle = (firstEnd + intact.count) / 2
        for index in middle..<(middle + 4) { damaged[index] ^= 0xA5 }
        try writeFile(path, damaged)

        let (state, report) = try openStateAndReport(path, fastConfiguration())
        #expect(state.sequence == 1)
        #expect(state.objects.isEmpty && state.metadata["version"] == [1])
        let expected = RecoveryReport(
            cause: .tornFinalCommit, offset: UInt64(firstEnd), droppedBytes: UInt64(intact.count - firstEnd),
            commitsDropped: 1, lastKeptSequence: 1, reason: "the unit's checksum does not match its contents",
            keptAt: path + ".dropped-1")
        #expect(report == expected)
        #expect(report?.description == "Recovery dropped \(intact.count - firstEnd) bytes (at least 1 commit after sequence 1) for a torn final commit at byte offset \(firstEnd) (the unit's checksum does not match its contents); they are kept in '\(path).dropped-1'.")
        #expect(try keptBytes(path + ".dropped-1") == Array(damaged[firstEnd...]))
        #expect(try readFile(path).count == firstEnd)

        // A second drop takes the next number and never overwrites the first.
        try writeFile(path, damaged)
        let second = try openStateAndReport(path, fastConfiguration()).report
        #expect(second?.keptAt == path + ".dropped-2")
        #expect(droppedSidecars(of: path) == [path + ".dropped-1", path + ".dropped-2"])
        #expect(try keptRecoveries(ofStoreAt: path).map(\.keptAt) == [path + ".dropped-1", path + ".dropped-2"])

        // A read-only open skips the same bytes without touching the file, and says so.
        try writeFile(path, damaged)
        let readOnly = try openStateAndReport(path, EngineConfiguration(readOnly: true)).report
        var skipped = expected
        skipped.keptAt = nil
        #expect(readOnly == skipped)
        #expect(readOnly?.description.hasSuffix("they are left in the file (read-only open).") == true)
        #expect(try readFile(path) == damaged)
    }

    /// Zeros over the last several acknowledged commits are damage, not a torn tail: only the
    /// last commit can be torn by a crash. Strict mode refuses; point-in-time recovery keeps the
    /// prefix and the zeroed bytes.
    @Test func zerosOverSeveralFinalCommitsAreDamage() throws {
        let directory = TemporaryDirectory()
        let recorded = try RecordedStore.make(at: directory.file("source.store"), units: 30, seed: 0x2E0)
        let path = directory.file("zeroed.store")
        for lost in 2...10 {
            let start = recorded.unitEnds[30 - lost]
            var damaged = recorded.bytes
            damaged.replaceSubrange(start..., with: repeatElement(0, count: damaged.count - start))
            try writeFile(path, damaged)
            let following = damaged.count - start - LogFrame.headerSize
            let reason = "the unit's checksum does not match its contents, and \(following) more bytes follow the end it declares, so it is not an interrupted last append"
            #expect(throws: StorageError(.corrupted(path: path, offset: UInt64(start), reason: reason)), "\(lost) units") {
                try StorageEngine(path: path, configuration: fastConfiguration())
            }
            let (state, report) = try openStateAndReport(path, fastConfiguration(.recoverValidPrefix))
            #expect(state == recorded.states[30 - lost])
            #expect(report?.cause == .damage)
            #expect(report?.droppedBytes == UInt64(damaged.count - start))
            #expect(try keptBytes(try #require(report?.keptAt)) == Array(damaged[start...]))
        }
        // Up to 4 KiB of zeros ending at the end of the file, from inside a unit, as the probe made them.
        let start = max(recorded.unitEnds[1] + 7, recorded.bytes.count - 4_096)
        var damaged = recorded.bytes
        damaged.replaceSubrange(start..., with: repeatElement(0, count: damaged.count - start))
        try writeFile(path, damaged)
        let error = try #require(throws: StorageError.self) { try StorageEngine(path: path, configuration: fastConfiguration()) }
        guard case .corrupted = error.kind else { Issue.record("\(error)"); return }
    }

    /// Damage inside the units one compaction wrote is refused in both modes, with an error
    /// that names what is out of reach: keeping the units before it would make a state no
    /// commit made (the probe found a subset of the compacted objects, once an empty store).
    @Test func damageInsideACompactedRunIsRefusedInBothModes() throws {
        let directory = TemporaryDirectory()
        let recorded = try RecordedStore.makeCompacted(
            at: directory.file("source.store"), before: 40, after: 5, chunkSize: 200, seed: 0xC0)
        let compactedEnd = recorded.unitEnds[0]
        let header = try LogHeader.decode(Array(recorded.bytes[0..<LogHeader.size]), path: "")
        #expect(header.compactedEnd == UInt64(compactedEnd))
        let path = directory.file("damaged.store")
        // The last compacted unit, with nothing valid of the run after it: as a tail it would
        // read as torn, and dropping it would leave part of the compacted state.
        let lastRunUnit = try #require(RecordedStore.unitStarts(in: recorded.bytes, until: compactedEnd).last)
        for (name, bytes) in [("whole", recorded.bytes), ("cut after the run", Array(recorded.bytes[0..<compactedEnd]))] {
            var damaged = bytes
            damaged[lastRunUnit + LogFrame.headerSize + 3] ^= 0x08
            try writeFile(path, damaged)
            let reason = bytes.count > compactedEnd
                ? "the unit's checksum does not match its contents, and a valid unit follows it"
                : "the unit's checksum does not match its contents"
            for mode in [EngineConfiguration.RecoveryMode.strict, .recoverValidPrefix] {
                let error = try #require(throws: StorageError.self, "\(name), \(mode)") {
                    try StorageEngine(path: path, configuration: fastConfiguration(mode))
                }
                #expect(error == StorageError(.compactionDamaged(
                    path: path, offset: UInt64(lastRunUnit), compactedEnd: UInt64(compactedEnd), fileSize: UInt64(bytes.count),
                    reason: reason)), "\(name), \(mode)")
                #expect(error.description == "The store at '\(path)' is corrupted at byte offset \(lastRunUnit), inside the units its last compaction wrote (which end at byte \(compactedEnd)): \(reason). Those units make a state only together and keeping the ones before the damage would make a state no commit made, so no recovery mode opens the file: the compacted objects and every commit after them (to the end of the file at byte \(bytes.count)) are out of reach until the file is repaired or restored.")
            }
            #expect(try readFile(path) == damaged, "\(name): left untouched")
            #expect(droppedSidecars(of: path).isEmpty)
            let report = try verifyStoreFile(at: path)
            #expect(report.isCompactionDamage)
        }
        // Cut inside the run at a unit boundary: the run is incomplete, which no crash leaves.
        try writeFile(path, Array(recorded.bytes[0..<lastRunUnit]))
        #expect(throws: StorageError(.compactionDamaged(
            path: path, offset: UInt64(lastRunUnit), compactedEnd: UInt64(compactedEnd), fileSize: UInt64(lastRunUnit),
            reason: "the file ends before the end of the compacted units at byte \(compactedEnd)"))) {
            try StorageEngine(path: path, configuration: fastConfiguration(.recoverValidPrefix))
        }
    }

    /// A real compaction records where its units end, and the file reopens to the same state.
    @Test func compactionRecordsTheEndOfItsUnits() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("compacted.store")
        let recorded = try RecordedStore.make(at: path, units: 20, seed: 0xC1)
        var configuration = fastConfiguration()
        configuration.checkpointInterval = 1
        let engine = try StorageEngine(path: path, configuration: configuration)
        try engine.compact()
        let size = engine.statistics.fileSize
        // A checkpoint follows the compacted units, so that reopening reads no unit.
        #expect(engine.statistics.checkpointEnd == size)
        try engine.close()
        let header = try LogHeader.decode(Array(try readFile(path)[0..<LogHeader.size]), path: path)
        #expect(header.compactedEnd > header.unitsStart && header.compactedEnd < size)
        #expect(try openState(path, fastConfiguration()) == recorded.states[20])
    }
}

extension RecordedStore {
    /// Where the units of the store file at `path` end after the first `units` of them.
    static func unitEnd(of path: String, units: Int) throws -> Int? {
        let bytes = try readFile(path)
        return unitStarts(in: bytes, until: bytes.count).dropFirst(units).first
    }

    /// The offsets where units start, from the header up to `end`, following the declared lengths.
    static func unitStarts(in bytes: [UInt8], until end: Int) -> [Int] {
        var starts: [Int] = []
        let header = bytes.count >= LogHeader.size ? try? LogHeader.decode(Array(bytes[0..<LogHeader.size]), path: "") : nil
        var offset = Int(header?.unitsStart ?? UInt64(LogHeader.size))
        while offset + LogFrame.headerSize <= end {
            starts.append(offset)
            let field = bytes[offset..<(offset + 4)].enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * $1.offset) }
            let length = Int(field & ~LogFrame.indexFlag)
            offset += LogFrame.headerSize + length
        }
        return starts
    }
}

/// A whole unit cut out, checksums untouched: each commit takes the next sequence number, so
/// the gap is damage like any other (the probe found such a file opened in strict mode, with no
/// report, as a state no commit made).
@Suite struct RemovedUnitTests {
    typealias Verdict = DamageTests.Verdict

    /// Opens the file with the unit at `start..<end` cut out, in `mode`, and classifies the outcome.
    static func classify(
        removing start: Int, _ end: Int, recorded: RecordedStore, compactedEnd: Int,
        mode: EngineConfiguration.RecoveryMode, at path: String
    ) throws -> Verdict {
        let damaged = Array(recorded.bytes[..<start] + recorded.bytes[end...])
        try writeFile(path, damaged)
        defer { for sidecar in droppedSidecars(of: path) { try? FileManager.default.removeItem(atPath: sidecar) } }
        let opened: (state: StoreState, report: RecoveryReport?)
        do {
            opened = try openStateAndReport(path, fastConfiguration(mode))
        } catch let error as StorageError {
            switch error.kind {
            case .compactionDamaged(_, let offset, let runEnd, _, _) where start < compactedEnd:
                return offset >= UInt64(start) && runEnd == UInt64(compactedEnd) ? .typedError : .wrong("compaction damage at \(offset)")
            case .corrupted(_, let offset, _) where mode == .strict && start >= compactedEnd:
                return offset == UInt64(start) ? .typedError : .wrong("damage reported at \(offset), not at the gap \(start)")
            default:
                return .wrong("unexpected error: \(error)")
            }
        } catch {
            return .wrong("untyped error \(error)")
        }
        guard start >= compactedEnd, let units = recorded.unitEnds.lastIndex(where: { $0 <= start }) else {
            return .wrong("a compacted run missing a unit opened: \(opened.state)")
        }
        guard opened.state == recorded.states[units] else { return .wrong("a state no commit made: \(opened.state)") }
        if end == recorded.bytes.count {
            // The last unit cut off is a committed prefix, whole: nothing to report.
            return opened.report == nil ? .committedPrefix : .wrong("an intact prefix reported \(String(describing: opened.report))")
        }
        guard mode == .recoverValidPrefix, let report = opened.report, report.cause == .damage,
              report.offset == UInt64(start), report.droppedBytes == UInt64(damaged.count - start),
              let sidecar = report.keptAt, try keptBytes(sidecar) == Array(damaged[start...]) else {
            return .wrong("\(mode) dropped the units after the gap without a report that keeps them: \(String(describing: opened.report))")
        }
        return .committedPrefix
    }

    @Test(arguments: DamageTests.Layout.allCases)
    func removingAWholeUnitGivesACommittedPrefixOrATypedError(layout: DamageTests.Layout) throws {
        let directory = TemporaryDirectory()
        let seed = SeededRandom.seed(default: 0xC07)
        let recorded = try layout.record(at: directory.file("source.store"), seed: seed)
        let compactedEnd = layout == .compacted ? recorded.unitEnds[0] : 0
        let starts = RecordedStore.unitStarts(in: recorded.bytes, until: recorded.bytes.count)
        let ends = Array(starts.dropFirst()) + [recorded.bytes.count]
        var tally: [Verdict: Int] = [:]
        for (index, (start, end)) in zip(starts, ends).enumerated() {
            for mode in [EngineConfiguration.RecoveryMode.strict, .recoverValidPrefix] {
                let verdict = try Self.classify(
                    removing: start, end, recorded: recorded, compactedEnd: compactedEnd, mode: mode, at: directory.file("cut.store"))
                tally[verdict, default: 0] += 1
                if case .wrong(let why) = verdict {
                    Issue.record("seed \(seed), \(layout), unit \(index + 1) of \(starts.count) at \(start)..<\(end), \(mode): \(why)")
                }
            }
        }
        print("removed units, \(layout), seed \(seed): \(DamageTests.summary(tally))")
        #expect(tally[.committedPrefix, default: 0] > 0 && tally[.typedError, default: 0] > 0)
        #expect(tally.keys.allSatisfy { if case .wrong = $0 { false } else { true } })
    }

    /// The gap is reported where it is found, with the commits it hides, by open and by verify.
    @Test func aGapInTheSequenceIsReportedByOpenAndVerify() throws {
        let directory = TemporaryDirectory()
        let recorded = try RecordedStore.make(at: directory.file("source.store"), units: 10, seed: 0x6A9)
        let path = directory.file("gap.store")
        // Units 5 and 6 cut out: unit 7 follows unit 4.
        let start = recorded.unitEnds[4]
        let damaged = Array(recorded.bytes[..<start] + recorded.bytes[recorded.unitEnds[6]...])
        try writeFile(path, damaged)
        let reason = "the unit's sequence number 7 does not follow its predecessor's 4: each commit takes the next number, so the units between them are missing, and a valid unit follows it"
        #expect(throws: StorageError(.corrupted(path: path, offset: UInt64(start), reason: reason))) {
            try StorageEngine(path: path, configuration: fastConfiguration())
        }
        let report = try verifyStoreFile(at: path)
        #expect(!report.isIntact && !report.isTornTail)
        #expect(report.firstDamageOffset == UInt64(start))
        #expect(report.damageReason == reason)
        #expect(report.commitsDropped == 6, "commits 5 to 10")
        let (state, recovery) = try openStateAndReport(path, fastConfiguration(.recoverValidPrefix))
        #expect(state == recorded.states[4])
        #expect(recovery?.offset == UInt64(start) && recovery?.cause == .damage && recovery?.commitsDropped == 6)
        #expect(try keptBytes(path + ".dropped-1") == Array(damaged[start...]))
    }

    /// A file created numbering from 1 must start there unless its header records a compacted
    /// run, so a missing first unit is damage. A file from before that flag may start anywhere,
    /// with a compacted run its header does not record.
    @Test func aMissingFirstUnitIsDamageUnlessTheFileIsOlderThanTheFlag() throws {
        let directory = TemporaryDirectory()
        let recorded = try RecordedStore.make(at: directory.file("source.store"), units: 3, seed: 0xF1)
        let path = directory.file("first.store")
        let starts = RecordedStore.unitStarts(in: recorded.bytes, until: recorded.bytes.count) + [recorded.bytes.count]
        /// The units of `recorded`, renumbered.
        func units(_ sequences: UInt64...) -> [UInt8] {
            sequences.enumerated().flatMap { index, sequence in
                LogFrame.encode(sequence: sequence, payload: Array(recorded.bytes[(starts[index] + LogFrame.headerSize)..<starts[index + 1]]))
            }
        }
        try writeFile(path, LogHeader().encoded() + units(5, 6, 7))
        let report = try verifyStoreFile(at: path)
        #expect(report.firstDamageOffset == LogHeader().unitsStart)
        #expect(report.damageReason == "the first unit's sequence number is 5, but a store's first commit takes 1, so the units before it are missing, and a valid unit follows it")
        #expect(throws: StorageError.self) { try StorageEngine(path: path, configuration: fastConfiguration()) }

        let older = LogHeader(flags: 0)
        try writeFile(path, older.encoded() + units(5, 6, 7))
        #expect(try verifyStoreFile(at: path).isIntact)
        // Older compactions numbered every unit of their run alike, and only there.
        try writeFile(path, older.encoded() + units(5, 5, 6))
        #expect(try verifyStoreFile(at: path).isIntact)
        try writeFile(path, older.encoded() + units(5, 6, 6))
        #expect(try verifyStoreFile(at: path).damageReason == "the unit's sequence number 6 repeats its predecessor's, as only the units of one compaction do")
        #expect(try verifyStoreFile(at: path).commitsDropped == 1)
        try writeFile(path, older.encoded() + units(5, 6, 8))
        #expect(try verifyStoreFile(at: path).firstDamageOffset == UInt64(starts[2]))
    }
}
