import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// A query's lookup of a key (`TypeValues.location(for:)`, which reads a string key's memory map
/// from its own constant copy) against the key table's (`TypeIndex.location(for:)`), on random
/// keys in persisted runs and in memory, deleted and absent, composed and decomposed, intact and
/// with a damaged run block.
@Suite struct TypeValuesLookupTests {
    static let seed = SeededRandom.seed(default: 0x7E_10C)

    static func text(_ random: inout SeededRandom) -> String {
        random.pick(["a", "é", "e\u{301}", "Élodie", "ß", "🙂", "", "ev-", "abcdefgh"]) + String(Int.random(in: 0..<60, using: &random))
    }

    /// Probes: the stored keys, their decomposed forms, random others and keys of other kinds.
    static func probes(_ keys: some Sequence<StorageKey>, _ random: inout SeededRandom) -> [StorageKey] {
        var probes: [StorageKey] = []
        for key in keys {
            probes.append(key)
            if case .string(let text) = key, random.chance(30) { probes.append(.string(text.decomposedStringWithCanonicalMapping)) }
        }
        return probes + (0..<40).map { _ in .string(text(&random)) } + [.integer(3), .bytes([1, 2])]
    }

    /// Compares both lookups of every probe: equal locations, or both throwing. Returns how many
    /// were found and how many threw.
    @discardableResult
    static func compare(_ snapshot: EngineSnapshot, type: String, _ probes: [StorageKey], _ context: String) -> (found: Int, failed: Int) {
        let values = snapshot.values(ofType: type)
        let objects = snapshot.index.types[type]
        var (found, failed) = (0, 0)
        for probe in probes {
            let fast = Result { try values.location(for: probe) }
            let general = Result { try objects?.location(for: probe).map(ValueLocation.init(packed:)) }
            switch (fast, general) {
            case (.success(let fast), .success(let general)):
                #expect(fast == general, "\(context), probe \(probe)")
                if fast != nil { found += 1 }
            case (.failure, .failure):
                failed += 1
            default:
                Issue.record("\(context), probe \(probe): \(fast) but \(general)")
            }
        }
        return (found, failed)
    }

    @Test("a query's lookup agrees with the key table's, with runs persisted and changes since in memory")
    func lookupsAgreeWithRunsAndMemory() throws {
        var random = SeededRandom(seed: Self.seed)
        let directory = TemporaryDirectory()
        let engine = try StorageEngine(path: directory.file("lookup.store"), configuration: CheckpointTests.checkpointing(300))
        var stored: [StorageKey: [UInt8]] = [:]
        var found = 0
        for step in 0..<120 {
            var batch = WriteBatch()
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                if random.chance(20), let victim = random.pick(from: stored.keys, by: StorageKey.precedes) {
                    batch.delete(type: "T", key: victim)
                    stored[victim] = nil
                } else {
                    let key = StorageKey.string(Self.text(&random))
                    let value = (0..<Int.random(in: 0...20, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                    batch.put(type: "T", key: key, value: value)
                    stored[key] = value
                }
            }
            try engine.commit(batch)
            let keys = stored.keys.sorted(by: StorageKey.precedes)
            found += Self.compare(engine.snapshot(), type: "T", Self.probes(keys, &random), "seed \(Self.seed), step \(step)").found
        }
        #expect(engine.statistics.checkpoints > 0, "runs were persisted")
        #expect(found > 1_000, "seed \(Self.seed)")
        try engine.close()
    }

    @Test("a damaged run block fails both lookups alike, and other blocks read alike")
    func damagedBlockFailsBothLookups() throws {
        var random = SeededRandom(seed: Self.seed &+ 1)
        let directory = TemporaryDirectory()
        let path = directory.file("damaged.store")
        let engine = try StorageEngine(path: path, configuration: CheckpointTests.checkpointing(1))
        var batch = WriteBatch()
        let keys = (0..<6_000).map { StorageKey.string("key-\($0)-" + String(repeating: "x", count: $0 % 13)) }
        for key in keys { batch.put(type: "T", key: key, value: [1, 2, 3]) }
        try engine.commit(batch)
        let run = try #require(engine.snapshot().index.types["T"]?.runs.first)
        #expect(run.blockOffsets.count > 3)
        try engine.close()
        let intact = try readFile(path)
        var failed = 0
        for round in 0..<6 {
            var bytes = intact
            let block = Int.random(in: 0..<run.blockOffsets.count, using: &random)
            bytes[Int(run.blockOffsets[block]) + Int.random(in: 8...60, using: &random)] ^= 0x10
            try writeFile(path, bytes)
            let damaged = try StorageEngine(path: path, configuration: CheckpointTests.checkpointing(1))
            // A commit after the damage puts keys in memory beside the runs; it is refused when
            // finding what its keys replace reads the damaged block, and the runs alone are compared.
            var later = WriteBatch()
            for number in 0..<20 { later.put(type: "T", key: .string("later-\(round)-\(number)"), value: [4]) }
            _ = try? damaged.commit(later)
            let probes = Self.probes(keys.shuffled(using: &random).prefix(600) + (0..<20).map { .string("later-\(round)-\($0)") }, &random)
            failed += Self.compare(damaged.snapshot(), type: "T", probes, "seed \(Self.seed), round \(round), block \(block)").failed
            try damaged.close()
        }
        #expect(failed > 0, "damage was met, seed \(Self.seed)")
    }
}
