import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Power cuts that tear an encrypted store's writes (docs/FILE_FORMAT.md, "Encryption"): a write
/// in flight may reach the disk as any mix of its 512-byte sectors, new and old. The file is
/// copied after commit *k* (state A) and after commit *k* + 1's writes (state B); every mix of the
/// sectors of the physical pages that differ must open as commit *k*'s state or commit *k* + 1's,
/// never as less and never as a `corrupted` error. Replay with MIRRORSTORE_SEED.
@Suite struct EncryptedTearTests {
    static let sector = 512
    static let pageSize = EncryptedFileHeader.pageSize
    static let sectorsPerPage = pageSize / sector

    /// Encrypted, unsynced (the copies stand for what reached the disk), and no checkpoint in
    /// the commits torn here: a checkpoint rewrites a header region page in place.
    static func configuration() -> EngineConfiguration {
        var configuration = encrypting(fastConfiguration())
        configuration.checkpointInterval = 1 << 30
        return configuration
    }

    /// A commit of one value of `length` bytes under `key`.
    static func batch(key: Int, length: Int) -> WriteBatch {
        var batch = WriteBatch()
        batch.put(type: "Torn", key: .integer(Int64(key)), value: (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ key) })
        return batch
    }

    /// Opens every tear of the writes that turned `before` into `after` and expects one of
    /// `allowed`. A tear keeps each sector of a differing page from `before` or from `after`
    /// (zeros where a file was not yet written); the file is as long as one of `lengths` (a
    /// growth or a cut that reached the disk or not). Tried: every mix of one page's sectors
    /// with the other differing pages all old or all new (which includes every prefix and suffix
    /// split), at the longest length; then `samples` seeded mixes over all the differing pages
    /// at once, each at every length.
    static func checkTears(
        before: [UInt8], after: [UInt8], lengths: [Int], allowed: [StoreState], samples: Int, seed: UInt64, label: String
    ) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("torn.store")
        let length = max(before.count, after.count)
        let old = before + [UInt8](repeating: 0, count: length - before.count)
        let new = after + [UInt8](repeating: 0, count: length - after.count)
        let pages = stride(from: 0, to: length, by: pageSize).filter { old[$0..<min(length, $0 + pageSize)] != new[$0..<min(length, $0 + pageSize)] }
        #expect(!pages.isEmpty, "\(label): the commit changed no page")
        var outcomes: [String: Int] = [:]
        func check(_ sectors: Set<Int>, lengths: [Int], description: @autoclosure () -> String) throws {
            var bytes = old
            for start in sectors {
                let end = min(length, start + sector)
                bytes.replaceSubrange(start..<end, with: new[start..<end])
            }
            for cut in lengths {
                try writeFile(path, Array(bytes.prefix(cut)))
                do {
                    let state = try openState(path, configuration())
                    if let which = allowed.firstIndex(of: state) {
                        outcomes["state \(which)", default: 0] += 1
                    } else {
                        Issue.record("\(label), \(description()), \(cut) bytes: opened as \(state), which no allowed commit made")
                    }
                } catch {
                    Issue.record("\(label), \(description()), \(cut) bytes: \(error)")
                }
            }
        }
        let allSectors = pages.flatMap { page in (0..<sectorsPerPage).map { page + $0 * sector }.filter { $0 < length } }
        for page in pages {
            let own = (0..<sectorsPerPage).map { page + $0 * sector }.filter { $0 < length }
            let others = Set(allSectors).subtracting(own)
            for mask in 0..<(1 << own.count) {
                let chosen = Set(own.indices.filter { mask & (1 << $0) != 0 }.map { own[$0] })
                let longest = [lengths.max() ?? length]
                try check(chosen, lengths: longest, description: "page \(page / pageSize) sectors \(String(mask, radix: 2)), other pages old")
                try check(chosen.union(others), lengths: longest, description: "page \(page / pageSize) sectors \(String(mask, radix: 2)), other pages new")
            }
        }
        var generator = SeededRandom(seed: seed)
        for round in 0..<samples {
            let chosen = Set(allSectors.filter { _ in generator.chance(50) })
            try check(chosen, lengths: lengths, description: "seed \(seed) round \(round)")
        }
        // Both ends must be reachable, or the test shows nothing.
        #expect(outcomes.count == allowed.count, "\(label): \(outcomes)")
    }

    /// A store with `commits` small commits, open; the file and state after each is what the
    /// scenarios tear from.
    static func store(at path: String, commits: Int, length: Int) throws -> (StorageEngine, StoreState) {
        let engine = try StorageEngine(path: path, configuration: configuration())
        for number in 0..<commits { try engine.commit(batch(key: number, length: length)) }
        return (engine, try StoreState(engine.snapshot()))
    }

    /// Commits one batch of `length` bytes to `engine` (open on `path`, in `stateA`), closes it,
    /// and tears that commit's writes (`checkTears`): every tear opens as `stateA` or the state
    /// after the commit. `afterCommit` checks the engine before it closes.
    static func checkTearsOfOneCommit(
        _ engine: StorageEngine, at path: String, stateA: StoreState, length: Int, samples: Int, seed: UInt64, label: String,
        afterCommit: (StorageEngine) throws -> Void = { _ in }
    ) throws {
        let before = try readFile(path)
        try engine.commit(batch(key: 1000, length: length))
        try afterCommit(engine)
        let stateB = try StoreState(engine.snapshot())
        let after = try readFile(path)
        try engine.close()
        try checkTears(
            before: before, after: after, lengths: Array(Set([before.count, after.count])).sorted(), allowed: [stateA, stateB],
            samples: samples, seed: seed, label: label)
    }

    @Test func aCommitWithinThePartialLastPage() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("extend.store")
        // 30 commits of 100 bytes: the units end inside a data page, well before its end.
        let (engine, stateA) = try Self.store(at: path, commits: 30, length: 100)
        try Self.checkTearsOfOneCommit(
            engine, at: path, stateA: stateA, length: 100, samples: 150, seed: SeededRandom.seed(default: 0x7EA2_0001), label: "extend")
    }

    /// The same with the partial page nearly full, so that its tail slot spans both its pages.
    @Test func aCommitThatNearlyFillsThePartialPage() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("nearly.store")
        let (engine, _) = try Self.store(at: path, commits: 28, length: 100)
        // A unit's bytes besides its value, from the last commit.
        let sizeBefore = engine.statistics.fileSize
        try engine.commit(Self.batch(key: 500, length: 100))
        let unitOverhead = Int(engine.statistics.fileSize - sizeBefore) - 100
        let stateA = try StoreState(engine.snapshot())
        let logical = Int(engine.statistics.fileSize) - LogHeader.regionSize
        let tailLength = logical % EncryptedLog.dataPageCapacity
        // The new last page holds about 4,060 of its 4,066 bytes: sealed with its page number
        // and version, over 4,096 bytes, past the slot's first page.
        let length = 4_060 - tailLength - unitOverhead
        #expect(length > 0)
        try Self.checkTearsOfOneCommit(
            engine, at: path, stateA: stateA, length: length, samples: 150, seed: SeededRandom.seed(default: 0x7EA2_0004), label: "nearly full"
        ) { engine in
            // (A unit's length varint may take a byte more.)
            #expect((4_051..<EncryptedLog.dataPageCapacity).contains(Int(engine.statistics.fileSize) - LogHeader.regionSize - logical + tailLength))
        }
    }

    @Test func aCommitThatFillsThePartialPageAndSpillsIntoNewOnes() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("spill.store")
        let (engine, stateA) = try Self.store(at: path, commits: 30, length: 100)
        // About two and a half pages: the partial page fills, a full page follows, then a partial one.
        try Self.checkTearsOfOneCommit(
            engine, at: path, stateA: stateA, length: 10_000, samples: 300, seed: SeededRandom.seed(default: 0x7EA2_0002), label: "spill")
    }

    /// Recovery cuts a torn tail (bytes that authenticate as pages but end in half a unit): the
    /// cut itself torn leaves the state before the torn unit. The torn bytes span a page boundary,
    /// so the cut both rewrites the last page shorter and removes pages.
    @Test func aTruncationOfATornTail() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("cut.store")
        let (engine, stateA) = try Self.store(at: path, commits: 30, length: 100)
        try engine.close()
        // Half a unit at the log's end, written below the engine: a frame that promises more
        // bytes than follow.
        let descriptor = open(path, O_RDWR)
        #expect(descriptor >= 0)
        let file = FileLog(path: path, descriptor: descriptor, faults: nil)
        let log = try EncryptedLog.storage(for: file, keys: EncryptionKeys(.key(testEncryptionKey)), writable: true)
        let end = try log.size()
        // Length 100,000 (little-endian), then filler where the checksum, sequence and payload go.
        let torn = [0xA0, 0x86, 0x01, 0x00] + [UInt8](repeating: 0xA5, count: 4_996)
        try log.write(torn, at: end)
        try log.sync()
        let before = try readFile(path)
        #expect(try openState(path, Self.configuration()) == stateA)
        let after = try readFile(path)
        #expect(after.count < before.count, "recovery cut the torn tail and the pages it filled")
        // The shortened page is written and synced before any page is cut: a cut never reaches
        // the disk before that write, so the tears keep the old length and the pages to be cut.
        try Self.checkTears(
            before: before, after: after + before.suffix(from: min(after.count, before.count)),
            lengths: [before.count], allowed: [stateA], samples: 150, seed: SeededRandom.seed(default: 0x7EA2_0003),
            label: "truncation")
        try writeFile(path, after)
        #expect(try openState(path, Self.configuration()) == stateA)
    }

    /// A clean close after a commit that filled pages writes the last page again as the next
    /// tail version (`EncryptedLog.settle()`), so the next open need not decrypt those pages to
    /// trust the tail. That write torn at any sector opens as the same state.
    @Test func theSettlingWriteOfACleanClose() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("settle.store")
        let (engine, _) = try Self.store(at: path, commits: 30, length: 100)
        // 9,000 bytes: the unit fills the partial page and the next one, and ends in a third.
        try engine.commit(Self.batch(key: 1000, length: 9_000))
        let state = try StoreState(engine.snapshot())
        let beforeClose = try readFile(path)
        try engine.close()
        let afterClose = try readFile(path)
        #expect(afterClose != beforeClose, "the close wrote a tail version")
        try Self.checkTears(
            before: beforeClose, after: afterClose, lengths: [afterClose.count], allowed: [state], samples: 60,
            seed: SeededRandom.seed(default: 0x7EA2_0005), label: "settle")
        #expect(try openState(path, Self.configuration()) == state)
    }

    /// A checkpoint rewrites its header slot's page in place (logical page 1 or 2). Its sealed
    /// page is 94 bytes, within the first 512-byte sector of its physical page, so a tear at
    /// sector grain leaves it old or new; a sector written partly (a drive without atomic
    /// sectors), cut at any byte and with the other changed pages all old or all new, leaves a
    /// page that does not authenticate. It reads as an invalid slot: opening takes the other
    /// slot's checkpoint (or replays the whole log) and gives state A or B, never `corrupted`.
    /// Then the next checkpoint is written into the torn slot, whole, and the store reopens from it.
    @Test func aTornCheckpointSlotPageLeavesTheOtherSlot() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("slots.store")
        var configuration = encrypting(fastConfiguration())
        // About three commits of 1,000 bytes between checkpoints.
        configuration.checkpointInterval = 3_000
        let engine = try StorageEngine(path: path, configuration: configuration)
        var key = 0
        /// Commits until one writes a checkpoint; the states after each commit and the file after the last.
        func commitUntilACheckpoint() throws -> (states: [StoreState], file: [UInt8], checkpointEnd: UInt64?) {
            let checkpoints = engine.statistics.checkpoints
            var states: [StoreState] = []
            while engine.statistics.checkpoints == checkpoints {
                try engine.commit(Self.batch(key: key % 7, length: 1_000 + key))
                key += 1
                states.append(try StoreState(engine.snapshot()))
                #expect(states.count < 20, "no checkpoint was written")
                if states.count >= 20 { break }
            }
            return (states, try readFile(path), engine.statistics.checkpointEnd)
        }
        let first = try commitUntilACheckpoint()
        // Checkpoint 2 rewrites slot 0 (logical page 1), checkpoint 3 slot 1 (logical page 2).
        var transitions: [(before: [UInt8], stateA: StoreState, endA: UInt64?, states: [StoreState], after: [UInt8], endB: UInt64?)] = []
        var previous = first
        for _ in 0..<2 {
            let next = try commitUntilACheckpoint()
            transitions.append((previous.file, previous.states.last ?? StoreState(), previous.checkpointEnd, next.states, next.file, next.checkpointEnd))
            previous = next
        }
        try engine.close()
        let tornPath = directory.file("torn.store")
        for (number, transition) in transitions.enumerated() {
            let label = "checkpoint \(number + 2)"
            // Logical page 1 + number at its place, after the header page and the two tail slots.
            let slotPage = Self.pageSize * (1 + number + 1 + 2 * EncryptedLog.tailSlotPages)
            let length = max(transition.before.count, transition.after.count)
            let old = transition.before + [UInt8](repeating: 0, count: length - transition.before.count)
            let new = transition.after + [UInt8](repeating: 0, count: length - transition.after.count)
            let changed = (slotPage..<(slotPage + Self.pageSize)).filter { old[$0] != new[$0] }
            let changedSectors = Set(changed.map { ($0 - slotPage) / Self.sector })
            #expect(changedSectors == [0], "\(label): the slot's write lies in its page's first sector")
            guard let firstChanged = changed.first, let lastChanged = changed.last else { continue }
            let allowed = [transition.stateA] + transition.states
            var outcomes: [String: Int] = [:]
            // Tears of the slot page's changed bytes: a new prefix up to byte `cut` or a new suffix
            // from it (every sector mix is among them: the page's first sector whole, old or new).
            for cut in firstChanged...(lastChanged + 1) {
                for newPrefix in [true, false] {
                    let torn = newPrefix ? slotPage..<cut : cut..<(slotPage + Self.pageSize)
                    for othersNew in [false, true] {
                        var bytes = othersNew ? new : old
                        for at in slotPage..<(slotPage + Self.pageSize) { bytes[at] = torn.contains(at) ? new[at] : old[at] }
                        let description = "\(label), new \(newPrefix ? "before" : "from") byte \(cut - slotPage), other pages \(othersNew ? "new" : "old")"
                        for mode in [EngineConfiguration.RecoveryMode.strict, .recoverValidPrefix] {
                            try writeFile(tornPath, bytes)
                            var reopen = configuration
                            reopen.recoveryMode = mode
                            do {
                                let reopened = try StorageEngine(path: tornPath, configuration: reopen)
                                let state = try StoreState(reopened.snapshot())
                                let end = reopened.statistics.checkpointEnd
                                try reopened.close()
                                guard allowed.contains(state) else {
                                    Issue.record("\(description), \(mode): opened as \(state), which no commit made")
                                    continue
                                }
                                // A committed state from A on, and all of it when the other pages are new.
                                #expect(!othersNew || state == transition.states.last, "\(description): \(state)")
                                let from = end == transition.endB ? "new checkpoint" : end == transition.endA ? "old checkpoint" : "whole log"
                                outcomes["\(othersNew ? "B" : "A") from \(from)", default: 0] += 1
                            } catch {
                                Issue.record("\(description), \(mode): \(error)")
                            }
                        }
                    }
                }
            }
            #expect(
                outcomes["A from old checkpoint", default: 0] > 0 && outcomes["B from old checkpoint", default: 0] > 0
                    && outcomes["B from new checkpoint", default: 0] > 0, "\(label): \(outcomes)")

            // A torn slot, then the next checkpoint: it goes to the torn slot, written whole.
            var bytes = new
            bytes[(firstChanged + lastChanged) / 2] ^= 0x10
            try writeFile(tornPath, bytes)
            #expect(try verifyStoreFile(at: tornPath, encryption: configuration.encryption).isIntact, "\(label): a torn slot is no damage")
            // A reader beside a writer reads the page again before it takes it for a torn one.
            var besideWriter = configuration
            besideWriter.readsBesideWriter = true
            #expect(try openState(tornPath, besideWriter) == transition.states.last, "\(label): a reader beside a writer")
            let writer = try StorageEngine(path: tornPath, configuration: configuration)
            #expect(writer.statistics.checkpointEnd == transition.endA, "\(label): opened from the other slot")
            let checkpoints = writer.statistics.checkpoints
            var count = 0
            while writer.statistics.checkpoints == checkpoints, count < 20 {
                try writer.commit(Self.batch(key: 100 + count, length: 1_000))
                count += 1
            }
            let final = try StoreState(writer.snapshot())
            let finalEnd = writer.statistics.checkpointEnd
            try writer.close()
            let rewritten = try readFile(tornPath)
            #expect(rewritten[slotPage..<(slotPage + 94)] != bytes[slotPage..<(slotPage + 94)], "\(label): the torn slot was written again")
            let report = try verifyStoreFile(at: tornPath, encryption: configuration.encryption)
            #expect(report.isIntact && report.checkpointSequence == final.sequence, "\(label): \(report)")
            let reopened = try StorageEngine(path: tornPath, configuration: configuration)
            #expect(reopened.statistics.checkpointEnd == finalEnd, "\(label): reopened from the rewritten slot")
            #expect(try StoreState(reopened.snapshot()) == final)
            try reopened.close()
        }
    }
}
