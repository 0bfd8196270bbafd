import Testing
import TestSupport
@testable import MirrorStoreEngine

/// The tournament merge of a rewrite's index runs (`IndexRunTournament`) gives what the general
/// merge (`IndexMerge`) gives, each entry once, on seeded random entries of every kind of key
/// spread over one to forty runs; on a damaged block both throw; runs that hold a mark or an
/// entry twice, which a rewrite never writes, make it throw rather than give another index. The
/// same with the blocks read with `pread` (`IndexRun.readingOnce`), as a rewrite merges.
@Suite struct IndexRunTournamentTests {
    static let seed = SeededRandom.seed(default: 0x70_0A_0026)

    /// Distinct entries (no two that `IndexEntry.precedes` finds equal), in index order.
    static func distinctEntries(_ random: inout SeededRandom) -> [IndexEntry] {
        var distinct: [IndexEntry] = []
        for entry in IndexEntrySortingTests.entries(&random).sorted(by: IndexEntry.precedes) {
            if let last = distinct.last, !IndexEntry.precedes(last, entry) { continue }
            distinct.append(entry)
        }
        return distinct
    }

    /// `entries` dealt at random over `count` runs written to `log`, each entry live unless
    /// `marked` says otherwise.
    static func runs(
        _ entries: [IndexEntry], count: Int, in log: MemoryLog, _ random: inout SeededRandom, marked: (IndexEntry) -> Bool = { _ in false }
    ) throws -> [IndexRun] {
        var dealt = [[IndexEntry]](repeating: [], count: count)
        for entry in entries { dealt[Int.random(in: 0..<count, using: &random)].append(entry) }
        return try dealt.compactMap { entries in
            var writer = IndexRunWriter(log: log, sequence: 1, offset: log.size())
            for entry in entries { try writer.append(entry, isLive: !marked(entry)) }
            return try writer.finish()
        }
    }

    static func tournament(_ runs: [IndexRun]) throws -> [IndexEntry] {
        var merge = try IndexRunTournament(runs)
        var merged: [IndexEntry] = []
        while let entry = try merge.next() { merged.append(entry) }
        return merged
    }

    static func general(_ runs: [IndexRun]) throws -> [IndexEntry] {
        var merge = IndexMerge(try runs.map { try IndexCursor(run: $0, after: .noEntry) }, forward: true)
        var merged: [IndexEntry] = []
        while let (entry, weight) = try merge.next() {
            #expect(weight == 1)
            merged.append(entry)
        }
        return merged
    }

    @Test func givesWhatTheGeneralMergeGives() throws {
        var random = SeededRandom(seed: Self.seed)
        for round in 0..<200 {
            let entries = Self.distinctEntries(&random)
            let log = MemoryLog(LogHeader().encoded())
            let runs = try Self.runs(entries, count: Int.random(in: 1...40, using: &random), in: log, &random)
            let merged = try Self.tournament(runs)
            #expect(merged == (try Self.general(runs)), "round \(round)")
            #expect(merged == entries, "round \(round)")
            // As a rewrite merges: each block read with `pread`, not through the mapping.
            #expect(try Self.tournament(runs.map { $0.readingOnce() }) == entries, "round \(round): read once")
        }
        #expect(try Self.tournament([]).isEmpty)
    }

    @Test func aDamagedBlockThrowsAsInTheGeneralMerge() throws {
        var random = SeededRandom(seed: Self.seed ^ 1)
        for round in 0..<60 {
            var entries = Self.distinctEntries(&random)
            while entries.count < 50 { entries = Self.distinctEntries(&random) }
            let log = MemoryLog(LogHeader().encoded())
            let runs = try Self.runs(entries, count: Int.random(in: 2...20, using: &random), in: log, &random)
            // One byte of one block changed: its checksum no longer matches.
            let damaged = random.pick(runs)
            let offset = random.pick(damaged.blocks.offsets) + UInt64(RunBlockReader.prefixSize)
            var byte = try log.read(at: offset, count: 1)
            byte[0] ^= 0x5A
            log.write(byte, at: offset)
            // A block that failed its checksum stays unchecked, so each merge meets it.
            #expect(throws: StorageError.self, "round \(round)") { try Self.tournament(runs) }
            #expect(throws: StorageError.self, "round \(round)") { try Self.general(runs) }
            #expect(throws: StorageError.self, "round \(round)") { try Self.tournament(runs.map { $0.readingOnce() }) }
        }
    }

    @Test func aMarkOrAnEntryTwiceThrows() throws {
        var random = SeededRandom(seed: Self.seed ^ 2)
        var entries = Self.distinctEntries(&random)
        while entries.count < 20 { entries = Self.distinctEntries(&random) }
        let marked = entries[entries.count / 2]
        let log = MemoryLog(LogHeader().encoded())
        let withMark = try Self.runs(entries, count: 3, in: log, &random) { $0 == marked }
        #expect(throws: StorageError.self) { try Self.tournament(withMark) }
        let twice = try Self.runs(entries, count: 2, in: log, &random) + Self.runs([marked], count: 1, in: log, &random)
        #expect(throws: StorageError.self) { try Self.tournament(twice) }
    }
}
