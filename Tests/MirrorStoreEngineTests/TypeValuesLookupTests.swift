import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// A query's lookup of a key (`TypeValues.location(for:)`, the key table's `TypeIndex.location(for:)`,
/// which reads the memory's maps in place) against the keys and values written, on random string
/// and byte-string keys in persisted runs and in memory, deleted and absent, composed and
/// decomposed, intact and with a damaged run block.
@Suite struct TypeValuesLookupTests {
    static let seed = SeededRandom.seed(default: 0x7E_10C)

    static func text(_ random: inout SeededRandom) -> String {
        random.pick(["a", "é", "e\u{301}", "Élodie", "ß", "🙂", "", "ev-", "abcdefgh"]) + String(Int.random(in: 0..<60, using: &random))
    }

    /// A random key: mostly a string, else a byte string of 16 bytes (as UUIDs are) or of 1 to 3.
    static func key(_ random: inout SeededRandom) -> StorageKey {
        guard random.chance(25) else { return .string(text(&random)) }
        let count = random.chance(50) ? 16 : Int.random(in: 1...3, using: &random)
        return .bytes((0..<count).map { _ in UInt8.random(in: 0...7, using: &random) })
    }

    /// Probes: the stored keys, their decomposed forms, random others and keys of other kinds.
    static func probes(_ keys: some Sequence<StorageKey>, _ random: inout SeededRandom) -> [StorageKey] {
        var probes: [StorageKey] = []
        for key in keys {
            probes.append(key)
            if case .string(let text) = key, random.chance(30) { probes.append(.string(text.decomposedStringWithCanonicalMapping)) }
        }
        return probes + (0..<40).map { _ in key(&random) } + [.integer(3), .bytes([1, 2])]
    }

    /// Looks every probe up through the snapshot's values, and compares what is found, its
    /// location and its bytes, with `stored`: a probe stored is found with its bytes, another is
    /// not, unless the lookup throws (a damaged block). Returns how many were found and how many threw.
    @discardableResult
    static func compare(
        _ snapshot: EngineSnapshot, type: String, _ probes: [StorageKey], stored: [StorageKey: [UInt8]], _ context: String
    ) -> (found: Int, failed: Int) {
        let values = snapshot.values(ofType: type)
        var (found, failed) = (0, 0)
        for probe in probes {
            do {
                let location = try values.location(for: probe)
                #expect((location != nil) == (stored[probe] != nil), "\(context), probe \(probe)")
                guard let location else { continue }
                found += 1
                #expect(try values.value(at: location) == stored[probe], "\(context), probe \(probe)")
                #expect(try snapshot.value(type: type, key: probe) == stored[probe], "\(context), probe \(probe): by the snapshot")
            } catch {
                failed += 1
            }
        }
        return (found, failed)
    }

    @Test("a query's lookup finds what was written, with runs persisted and changes since in memory")
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
                    let key = Self.key(&random)
                    let value = (0..<Int.random(in: 0...20, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                    batch.put(type: "T", key: key, value: value)
                    stored[key] = value
                }
            }
            try engine.commit(batch)
            let keys = stored.keys.sorted(by: StorageKey.precedes)
            let context = "seed \(Self.seed), step \(step)"
            let (stepFound, failed) = Self.compare(engine.snapshot(), type: "T", Self.probes(keys, &random), stored: stored, context)
            #expect(failed == 0, "\(context): nothing is damaged")
            found += stepFound
        }
        #expect(engine.statistics.checkpoints > 0, "runs were persisted")
        #expect(found > 1_000, "seed \(Self.seed)")
        try engine.close()
    }

    @Test("a damaged run block fails a lookup that reads it, and others find what was written")
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
            var stored = Dictionary(uniqueKeysWithValues: keys.map { ($0, [UInt8]([1, 2, 3])) })
            if (try? damaged.commit(later)) != nil {
                for number in 0..<20 { stored[.string("later-\(round)-\(number)")] = [4] }
            }
            let probes = Self.probes(keys.shuffled(using: &random).prefix(600) + (0..<20).map { .string("later-\(round)-\($0)") }, &random)
            failed += Self.compare(damaged.snapshot(), type: "T", probes, stored: stored, "seed \(Self.seed), round \(round), block \(block)").failed
            try damaged.close()
        }
        #expect(failed > 0, "damage was met, seed \(Self.seed)")
    }
}
