import Foundation
import Testing
import TestSupport
@_spi(Testing) @testable import MirrorStoreEngine

/// A streamed commit's index entries kept encoded (`PendingIndexEntries`) and written as runs of
/// a scratch file, against the same streams with the entries held as values in memory (a store
/// whose streams may not spill): keys of every kind (strings with long shared beginnings, which
/// the sort settles eight bytes at a time; numbers of three kinds, -0.0 and NaN; byte
/// strings, tuples, null), several keys per object, string object keys, entries a stream adds
/// and removes again, objects emptied by a deletion of every object, unique clashes inside a
/// stream and against committed objects. After every stream each index reads alike, forward
/// and backward with its count, and a stream refused by one store is refused by the other;
/// then both are reopened intact, and reopened truncated and with flipped bytes, where each
/// index must agree with the objects the store opened with.
@Suite struct PendingIndexEntriesTests {
    static let longPrefix = "mirrorstore-customer-number-"

    /// Keys of every kind, from a value's bytes.
    static func mixedKeys(_ value: [UInt8]) -> [IndexKey] {
        guard let first = value.first else { return [.null] }
        let second = value.count > 1 ? value[1] : 0
        let key: IndexKey = switch first % 10 {
        case 0: .null
        case 1: .bool(second % 2 == 0)
        // Numbers of three kinds, none equal to one of another kind: the order takes 3 and 3.0
        // for one key, which no property's keys mix.
        case 2: .integer(Int64(second % 7) * 2 - 7)
        case 3: .double([-0.0, 0.5, 1.5, -2.25, .nan, 8.25, .infinity][Int(second) % 7])
        case 4: .unsigned(UInt64(20 + second % 5))
        case 5: .string(longPrefix + String(second % 23))
        case 6: .string(String(repeating: "x", count: Int(second % 40)))
        case 7: .bytes(Array(repeating: second % 3, count: Int(second % 20)))
        case 8: .tuple(IndexTuple([.integer(Int64(second % 3)), .string(longPrefix + String(second % 4))]))
        default: .string("é\(second % 6)")
        }
        // A second key for some objects, at times the first again (kept once).
        guard value.count > 2 else { return [key] }
        return [key, value[2] % 2 == 0 ? key : .string(longPrefix + longPrefix + String(value[2] % 9))]
    }

    static func definitions() -> [IndexDefinition] {
        [
            IndexDefinition(name: "V.mixed", typeName: "V", isUnique: false, fingerprint: "V.mixed v1") { mixedKeys($0) },
            // Unique: clashes where two objects' first two bytes agree past the long prefix.
            IndexDefinition(name: "V.unique", typeName: "V", isUnique: true, fingerprint: "V.unique v1") { value in
                guard value.count > 1 else { return [.null] }
                return [.string(longPrefix + longPrefix + "\(value[0])-\(value[1] % 16)")]
            },
        ]
    }

    static func configuration(keysInMemory: Int) -> EngineConfiguration {
        var configuration = fastConfiguration()
        configuration.checkpointInterval = 1 << 30
        configuration.streamKeysInMemory = keysInMemory
        return configuration
    }

    /// A random piece of a stream: puts (integer and string object keys), deletes, now and then
    /// a deletion of every object.
    static func piece(_ generator: inout SeededRandom) -> WriteBatch {
        var batch = WriteBatch()
        for _ in 0..<Int.random(in: 1...12, using: &generator) {
            let key: StorageKey = generator.chance(20) ? .string("k\(Int.random(in: 0..<30, using: &generator))")
                : .integer(Int64.random(in: 0..<90, using: &generator))
            switch Int.random(in: 0..<100, using: &generator) {
            case 0..<70:
                let value = (0..<Int.random(in: 0...3, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                batch.put(type: "V", key: key, value: value)
            case 70..<99: batch.delete(type: "V", key: key)
            default: batch.deleteAll(type: "V")
            }
        }
        return batch
    }

    /// Every entry of every index, in order, then in reverse, with the counts.
    static func entries(_ snapshot: EngineSnapshot) throws -> [String] {
        var lines: [String] = []
        for definition in definitions() {
            let index = try #require(snapshot.index(named: definition.name))
            var forward: [String] = []
            try index.forEach(from: nil, to: nil) { forward.append("\($0.key) \($0.object)"); return true }
            var backward: [String] = []
            try index.forEachReversed(from: nil, to: nil) { backward.append("\($0.key) \($0.object)"); return true }
            lines.append("\(definition.name) count \(index.count): \(forward)")
            lines.append("\(definition.name) reversed: \(Array(backward.reversed()))")
        }
        return lines
    }

    /// The entries the objects of `snapshot` give each index, as `entries` lists them.
    static func expectedEntries(_ snapshot: EngineSnapshot) throws -> [String] {
        var lines: [String] = []
        for definition in definitions() {
            var expected: [IndexEntry] = []
            try snapshot.forEachEntry(type: "V") { object, value in
                var seen = Set<IndexKey>()
                for key in try definition.keys(value) where seen.insert(key).inserted {
                    expected.append(IndexEntry(key: key, object: object))
                }
            }
            let forward = expected.sorted(by: IndexEntry.precedes).map { "\($0.key) \($0.object)" }
            lines.append("\(definition.name) count \(expected.count): \(forward)")
            lines.append("\(definition.name) reversed: \(forward)")
        }
        return lines
    }

    /// Runs the streams of `seed` on a store keeping `keysInMemory` keys and entries, returning
    /// what each stream did and the indexes after it.
    static func run(seed: UInt64, keysInMemory: Int, path: String) throws -> [String] {
        var generator = SeededRandom(seed: seed)
        let engine = try StorageEngine(path: path, configuration: configuration(keysInMemory: keysInMemory))
        try engine.defineIndexes(definitions())
        var log: [String] = []
        for number in 0..<30 {
            let stream = try #require(try engine.beginStream())
            for _ in 0..<Int.random(in: 1...25, using: &generator) { _ = try stream.write(piece(&generator)) }
            do {
                try engine.wait(for: engine.submit(piece(&generator), completing: stream))
                log.append("stream \(number) committed")
            } catch let error as StorageError {
                guard case .uniqueConstraint(let index, _) = error.kind, index == "V.unique" else { throw error }
                log.append("stream \(number) refused")
            }
            let snapshot = engine.snapshot()
            let read = try entries(snapshot)
            let wanted = try expectedEntries(snapshot)
            #expect(read == wanted, "seed \(seed), \(keysInMemory) in memory, stream \(number): \(zip(read, wanted).filter { $0 != $1 }.map { pair in let (a, b) = (pair.0.components(separatedBy: "\", \""), pair.1.components(separatedBy: "\", \"")); return "\n\(a.count) vs \(b.count) extra \(a.filter { !b.contains($0) }) missing \(b.filter { !a.contains($0) }) order \(a == b)" })")
            log += read
            // A plain commit between streams, which the next stream's entries meet in memory.
            if generator.chance(50) {
                do { try engine.commit(piece(&generator)) } catch let error as StorageError {
                    guard case .uniqueConstraint = error.kind else { throw error }
                }
            }
        }
        try engine.close()
        return log
    }

    /// The buffer grows by a quarter, so what it holds as allocated (which a spill's bound
    /// counts) stays near what its entries take: a doubling near the bound held three times it.
    @Test func heldBytesStayNearTheEntries() throws {
        var pending = PendingIndexEntries(index: "email")
        var generator = SeededRandom(seed: 26)
        for number in 0..<150_000 {
            let email = Self.longPrefix + String(Int.random(in: 0..<1_000_000, using: &generator)) + "@example.com"
            try pending.append(IndexEntry(key: .string(email), object: .integer(Int64(number))), isLive: true)
            // The starts double as arrays do, at 4 bytes an entry.
            let limit = (pending.byteCount + PendingIndexEntries.growthRoom) * 5 / 4 + 8 * pending.count + 8_192
            guard pending.heldBytes >= pending.byteCount + 4 * pending.count, pending.heldBytes <= limit else {
                Issue.record("entry \(number): \(pending.heldBytes) bytes held for \(pending.byteCount) bytes of \(pending.count) entries")
                return
            }
        }
    }

    @Test(arguments: 0..<4) func spilledEntriesReadAsHeldOnes(seed: UInt64) throws {
        let seed = SeededRandom.seed(default: 0x9E4D_1D00 + seed)
        let directory = TemporaryDirectory()
        // Held as values; encoded, one run a stream; encoded, runs of 3 entries merged in tiers.
        let held = try Self.run(seed: seed, keysInMemory: Int.max, path: directory.file("held.store"))
        for keysInMemory in [1 << 30, 3] {
            let path = directory.file("spilled-\(keysInMemory).store")
            let spilled = try Self.run(seed: seed, keysInMemory: keysInMemory, path: path)
            #expect(spilled == held, "seed \(seed), \(keysInMemory) in memory")
            #expect(held.contains("stream 0 committed") || held.contains("stream 1 committed"), "seed \(seed)")
            // Reopened intact, then damaged: each index agrees with the objects opened.
            try Self.reopenDamaged(path, directory: directory, seed: seed &+ UInt64(keysInMemory), "seed \(seed), \(keysInMemory) in memory")
        }
    }

    /// Opens copies of the store at `path`, intact, truncated and with a flipped byte, and checks
    /// that each index agrees with the objects opened (or that a damaged run is reported).
    static func reopenDamaged(_ path: String, directory: TemporaryDirectory, seed: UInt64, _ context: String) throws {
        var generator = SeededRandom(seed: seed)
        let intact = try readFile(path)
        let damagedPath = directory.file("damaged.store")
        for attempt in 0..<12 {
            var damaged = intact
            if attempt == 0 {
                // Intact.
            } else if attempt % 2 == 0 {
                damaged.removeSubrange(Int.random(in: LogHeader.regionSize..<damaged.count, using: &generator)...)
            } else {
                damaged[Int.random(in: LogHeader.regionSize..<damaged.count, using: &generator)] ^= 0x24
            }
            try replaceStore(at: damagedPath, with: damaged)
            let engine: StorageEngine
            do {
                engine = try StorageEngine(path: damagedPath, configuration: fastConfiguration(.recoverValidPrefix))
            } catch is StorageError {
                continue
            }
            do {
                try engine.defineIndexes(definitions())
                let snapshot = engine.snapshot()
                #expect(try entries(snapshot) == (try expectedEntries(snapshot)), "\(context), damage \(attempt)")
            } catch let error as StorageError {
                // A damaged run read by the index is reported, never answered from.
                guard case .corrupted = error.kind else { throw error }
            }
            try engine.close()
        }
    }

    /// One stream of thousands of objects into empty indexes, some replaced and deleted inside
    /// it, then the checkpoint at closing: with its entries encoded, each index is the stream's
    /// one scratch run, which the checkpoint copies block by block where the store holding them
    /// in memory writes them entry by entry. Both files must be the same bytes, and read alike
    /// reopened, intact and damaged.
    @Test(arguments: 0..<3) func aCopiedRunIsTheRunWritten(seed: UInt64) throws {
        let seed = SeededRandom.seed(default: 0xC0B1_ED00 + seed)
        let directory = TemporaryDirectory()
        var files: [[UInt8]] = []
        var read: [[String]] = []
        for keysInMemory in [Int.max, 1 << 30] {
            var generator = SeededRandom(seed: seed)
            let path = directory.file("bulk-\(keysInMemory).store")
            let engine = try StorageEngine(path: path, configuration: Self.configuration(keysInMemory: keysInMemory))
            try engine.defineIndexes(Self.definitions())
            let stream = try #require(try engine.beginStream())
            for first in stride(from: 0, to: 3_000, by: 100) {
                var piece = WriteBatch()
                for number in first..<(first + 100) {
                    // The first two bytes keep the unique keys apart.
                    let value = [UInt8(number % 256), UInt8(number / 256), UInt8.random(in: 0...255, using: &generator)]
                    let key: StorageKey = number % 7 == 0 ? .string("k\(number)") : .integer(Int64(number))
                    piece.put(type: "V", key: key, value: value)
                    if generator.chance(5) { piece.delete(type: "V", key: key) }
                }
                _ = try stream.write(piece)
            }
            try engine.wait(for: engine.submit(WriteBatch(), completing: stream))
            read.append(try Self.entries(engine.snapshot()))
            try engine.close()
            let reopened = try StorageEngine(path: path, configuration: Self.configuration(keysInMemory: keysInMemory))
            try reopened.defineIndexes(Self.definitions())
            let snapshot = reopened.snapshot()
            #expect(try Self.entries(snapshot) == read.last, "seed \(seed), \(keysInMemory) in memory, reopened")
            #expect(try Self.entries(snapshot) == (try Self.expectedEntries(snapshot)), "seed \(seed), \(keysInMemory) in memory")
            try reopened.close()
            files.append(try readFile(path))
            try Self.reopenDamaged(path, directory: directory, seed: seed, "seed \(seed), \(keysInMemory) in memory, bulk")
        }
        #expect(read[0] == read[1], "seed \(seed)")
        #expect(files[0] == files[1], "seed \(seed): the copied runs differ from the written ones")
    }
}
