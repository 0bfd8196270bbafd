import Foundation
import Testing
import TestSupport
@_spi(Testing) @testable import MirrorStoreEngine

/// A streamed commit whose keys pass `streamKeysInMemory` for a type goes on publishing them
/// into key runs of a scratch file (`StreamSpill`) rather than memory: every read must give what
/// the same commits give with the keys held in memory (and a plain reference), overwrites and
/// deletions inside the stream and of keys in persisted runs included, until and after the
/// checkpoint that merges those runs into the log, and after a reopen.
@Suite struct StreamSpillTests {
    static func configuration(interval: Int, keysInMemory: Int, encrypted: Bool = false) -> EngineConfiguration {
        var configuration = CheckpointTests.checkpointing(interval)
        configuration.streamKeysInMemory = keysInMemory
        if encrypted { configuration.encryption = .key(testEncryptionKey) }
        return configuration
    }

    /// `configuration`, encrypted with the test key when `encrypted`.
    static func encrypting(_ configuration: EngineConfiguration, _ encrypted: Bool) -> EngineConfiguration {
        var configuration = configuration
        if encrypted { configuration.encryption = .key(testEncryptionKey) }
        return configuration
    }

    /// One stream of a script: its pieces, its tail, a plain commit after it, and what the
    /// reference holds after each.
    struct Round {
        var pieces: [WriteBatch] = []
        var tail = WriteBatch()
        var after = WriteBatch()
        var afterStream = CheckpointTests.Reference()
        var afterCommit = CheckpointTests.Reference()
    }

    /// The same commits, made once: the batches choose keys to delete from the reference's
    /// dictionaries, whose order differs between two that hold the same keys.
    static func script(
        seed: UInt64, key: (inout SeededRandom) -> StorageKey = CheckpointTests.key
    ) -> (base: [WriteBatch], baseReference: CheckpointTests.Reference, rounds: [Round]) {
        var generator = SeededRandom(seed: seed)
        var reference = CheckpointTests.Reference()
        let base = (0..<20).map { _ in CheckpointTests.randomBatch(&generator, applyingTo: &reference, deletesBelow: 90, key: key) }
        let baseReference = reference
        var rounds: [Round] = []
        for _ in 0..<6 {
            var round = Round()
            // Each write is a piece of its own; deletes of whole types are rare (3 in 100).
            for _ in 0..<Int.random(in: 4...40, using: &generator) {
                round.pieces.append(CheckpointTests.randomBatch(&generator, applyingTo: &reference, deletesBelow: 97, key: key))
            }
            round.tail = CheckpointTests.randomBatch(&generator, applyingTo: &reference, deletesBelow: 90, key: key)
            round.afterStream = reference
            round.after = CheckpointTests.randomBatch(&generator, applyingTo: &reference, deletesBelow: 90, key: key)
            round.afterCommit = reference
            rounds.append(round)
        }
        return (base, baseReference, rounds)
    }

    @Test(arguments: 0..<6) func spilledStreamsReadAsHeldOnes(seed: UInt64) throws {
        try checkSpilledStreams(seed: SeededRandom.seed(default: 0x5911_0000 + seed), encrypted: false)
    }

    /// The same on an encrypted store, whose scratch runs are sealed (`EncryptedLog.scratch(in:)`).
    @Test(arguments: 0..<3) func encryptedSpilledStreamsReadAsHeldOnes(seed: UInt64) throws {
        try checkSpilledStreams(seed: SeededRandom.seed(default: 0x5911_E000 + seed), encrypted: true)
    }

    /// UUID-sized keys (the fixed-width layout of `ByteKeyMap`), a few shorter ones among them
    /// (which end that layout), and long ASCII strings sharing prefixes, through the same streams.
    @Test(arguments: 0..<4) func spilledStreamsOfUUIDAndStringKeysReadAsHeldOnes(seed: UInt64) throws {
        try checkSpilledStreams(seed: SeededRandom.seed(default: 0x5911_0A00 + seed), encrypted: seed == 3, key: Self.wideKey)
    }

    static func wideKey(_ generator: inout SeededRandom) -> StorageKey {
        let number = UInt8.random(in: 0..<80, using: &generator)
        switch Int.random(in: 0..<20, using: &generator) {
        case 0: return .bytes([number, 1, 2, 3, 4])
        case 1..<6: return .string("user_" + String(repeating: "x", count: Int(number % 7)) + String(number))
        default: return .bytes([number] + (1..<16).map { UInt8(truncatingIfNeeded: Int($0) * Int(number) &+ 7) })
        }
    }

    func checkSpilledStreams(seed: UInt64, encrypted: Bool, key: (inout SeededRandom) -> StorageKey = CheckpointTests.key) throws {
        let (base, baseReference, rounds) = Self.script(seed: seed, key: key)
        let directory = TemporaryDirectory()
        var states: [StoreState] = []
        var runs: [Int] = []
        for keysInMemory in [1 << 30, 3] {
            let context = "seed \(seed), \(keysInMemory) keys in memory\(encrypted ? ", encrypted" : "")"
            let path = directory.file("spill-\(keysInMemory).store")
            // Persisted runs first, below what the streams write.
            var engine = try StorageEngine(
                path: path, configuration: Self.configuration(interval: 300, keysInMemory: keysInMemory, encrypted: encrypted))
            for batch in base { try engine.commit(batch) }
            try CheckpointTests.check(engine, baseReference, "\(context), base")
            try engine.close()
            // No checkpoint but at closing: the scratch runs stay in use between commits.
            engine = try StorageEngine(
                path: path, configuration: Self.configuration(interval: 1 << 30, keysInMemory: keysInMemory, encrypted: encrypted))
            var mostRuns = 0
            for (number, round) in rounds.enumerated() {
                let stream = try #require(try engine.beginStream())
                for piece in round.pieces { _ = try stream.write(piece) }
                try engine.wait(for: engine.submit(round.tail, completing: stream))
                try CheckpointTests.check(engine, round.afterStream, "\(context), stream \(number)")
                mostRuns = max(mostRuns, engine.statistics.persistedRuns)
                try engine.commit(round.after)
                try CheckpointTests.check(engine, round.afterCommit, "\(context), commit \(number)")
            }
            #expect(engine.statistics.checkpoints == 0, "\(context)")
            states.append(try StoreState(engine.snapshot()))
            runs.append(mostRuns)
            try engine.close()
            let reopened = try StorageEngine(path: path, configuration: Self.encrypting(fastConfiguration(), encrypted))
            try CheckpointTests.check(reopened, rounds.last?.afterCommit ?? baseReference, "\(context), reopened")
            try reopened.close()
            #expect(
                try openState(path, Self.encrypting(fastConfiguration(.recoverValidPrefix), encrypted)) == states.last, "\(context): replayed")
            let report = try verifyStoreFile(at: path, encryption: encrypted ? .key(testEncryptionKey) : nil)
            #expect(report.isIntact && report.checkpointDisagreement == nil, "\(context): \(report)")
        }
        #expect(states[0] == states[1], "seed \(seed)")
        #expect(runs[1] > runs[0], "seed \(seed): the streams' keys went to scratch runs (\(runs))")
    }

    /// The same streams on a store with three secondary indexes (`PersistedIndexTests`), whose
    /// entries past 3 in memory go to scratch runs (`StreamIndexSpill`): every read of every
    /// index agrees with the reference after each stream and commit, before any checkpoint,
    /// after the one at closing, and reopened; the indexes had runs outside the log meanwhile.
    @Test(arguments: 0..<4) func spilledIndexEntriesReadAsTheReference(seed: UInt64) throws {
        try checkSpilledIndexEntries(seed: SeededRandom.seed(default: 0x5911_1D00 + seed), encrypted: false)
    }

    /// The same on an encrypted store, whose scratch runs are sealed.
    @Test(arguments: 0..<2) func encryptedSpilledIndexEntriesReadAsTheReference(seed: UInt64) throws {
        try checkSpilledIndexEntries(seed: SeededRandom.seed(default: 0x5911_1DE0 + seed), encrypted: true)
    }

    func checkSpilledIndexEntries(seed: UInt64, encrypted: Bool) throws {
        var generator = SeededRandom(seed: seed)
        let (base, baseReference, rounds) = Self.script(seed: seed)
        let directory = TemporaryDirectory()
        let path = directory.file("indexes.store")
        let reads = PersistedIndexTests.Reads()
        var engine = try StorageEngine(path: path, configuration: Self.configuration(interval: 300, keysInMemory: 3, encrypted: encrypted))
        try engine.defineIndexes(PersistedIndexTests.definitions(reads))
        for batch in base { try engine.commit(batch) }
        try engine.close()
        engine = try StorageEngine(path: path, configuration: Self.configuration(interval: 1 << 30, keysInMemory: 3, encrypted: encrypted))
        try engine.defineIndexes(PersistedIndexTests.definitions(reads))
        try PersistedIndexTests.check(engine.snapshot(), baseReference, &generator, "seed \(seed), base")
        var spilledRuns = 0
        for (number, round) in rounds.enumerated() {
            let stream = try #require(try engine.beginStream())
            for piece in round.pieces { _ = try stream.write(piece) }
            try engine.wait(for: engine.submit(round.tail, completing: stream))
            let snapshot = engine.snapshot()
            try PersistedIndexTests.check(snapshot, round.afterStream, &generator, "seed \(seed), stream \(number)")
            for name in PersistedIndexTests.names {
                let runs = try #require(snapshot.index(named: name)).storage.runs
                spilledRuns += runs.filter { $0.log !== snapshot.generation }.count
            }
            try engine.commit(round.after)
            try PersistedIndexTests.check(engine.snapshot(), round.afterCommit, &generator, "seed \(seed), commit \(number)")
        }
        #expect(engine.statistics.checkpoints == 0, "seed \(seed)")
        #expect(spilledRuns > 0, "seed \(seed): the streams' index entries went to scratch runs")
        try engine.close()
        let final = rounds.last?.afterCommit ?? baseReference
        engine = try StorageEngine(path: path, configuration: Self.configuration(interval: 1 << 30, keysInMemory: 3, encrypted: encrypted))
        try engine.defineIndexes(PersistedIndexTests.definitions(reads))
        try PersistedIndexTests.check(engine.snapshot(), final, &generator, "seed \(seed), reopened")
        try engine.close()
        let report = try verifyStoreFile(at: path, encryption: encrypted ? .key(testEncryptionKey) : nil)
        #expect(report.isIntact && report.checkpointDisagreement == nil, "seed \(seed): \(report)")
    }

    /// A unique index whose entries a stream spills: a stream giving two objects one key (two
    /// of its own, or one of its own and a committed one) is refused whole, and one that frees a
    /// key before taking it again is not, as with the entries in memory. The streams are small
    /// beside the index, so each of their entries is looked up rather than the whole index read,
    /// the spilled ones read back from the scratch runs.
    @Test(arguments: [3, 1 << 30]) func aSpilledUniqueIndexRefusesAsAHeldOne(keysInMemory: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("unique-\(keysInMemory).store")
        let engine = try StorageEngine(path: path, configuration: Self.configuration(interval: 1 << 30, keysInMemory: keysInMemory))
        let unique = IndexDefinition(name: "U.value", typeName: "U", isUnique: true) { value in [.bytes(value)] }
        try engine.defineIndexes([unique])
        var committed = WriteBatch()
        committed.put(type: "U", key: .integer(0), value: [0, 0])
        for number in 0..<200 { committed.put(type: "U", key: .integer(1_000 + Int64(number)), value: [2, UInt8(number)]) }
        try engine.commit(committed)
        func stream(_ values: [(Int64, [UInt8]?)]) throws -> Bool {
            let stream = try #require(try engine.beginStream())
            for chunk in stride(from: 0, to: values.count, by: 7) {
                var piece = WriteBatch()
                for (key, value) in values[chunk..<min(values.count, chunk + 7)] {
                    if let value { piece.put(type: "U", key: .integer(key), value: value) } else { piece.delete(type: "U", key: .integer(key)) }
                }
                _ = try stream.write(piece)
            }
            do {
                try engine.wait(for: engine.submit(WriteBatch(), completing: stream))
                return true
            } catch let error as StorageError {
                guard case .uniqueConstraint(let index, _) = error.kind, index == "U.value" else { throw error }
                return false
            }
        }
        let many = (1...20).map { (Int64($0), [UInt8(1), UInt8($0)]) }
        // A committed key taken again, last, and first (its entry spilled long before the end).
        #expect(try !stream(many + [(61, [0, 0])]))
        #expect(try !stream([(61, [2, 5])] + many))
        #expect(engine.snapshot().count(type: "U") == 201)
        // Two of the stream's own objects, far apart.
        #expect(try !stream([(70, [9, 9])] + many + [(71, [9, 9])]))
        // The committed key freed first, then taken: accepted; as is a key moved between objects.
        #expect(try stream([(0, nil)] + many + [(61, [0, 0]), (62, [7, 7]), (62, [7, 8]), (63, [7, 7])]))
        let index = try #require(engine.snapshot().index(named: "U.value"))
        #expect(index.count == 223)
        var objects: [StorageKey] = []
        try index.forEach(from: IndexBound(.bytes([7, 7]), inclusive: true), to: IndexBound(.bytes([7, 8]), inclusive: true)) {
            objects.append($0.object)
            return true
        }
        #expect(objects == [.integer(63), .integer(62)])
        // And now a committed key of a spilled stream, taken by the next stream.
        #expect(try !stream([(80, [1, 5])]))
        try engine.close()
    }

    /// A transaction's table of where its streamed records lie, with at most 4 keys in memory:
    /// random keys of every kind set and set again read as a dictionary holding them does.
    /// Sealed (an encrypted store's) for odd seeds.
    @Test(arguments: 0..<4) func aKeyTableReadsAsADictionary(seed: UInt64) throws {
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x5911_0100 + seed))
        var table = StreamKeyTable(keysInMemory: 4, sealed: seed % 2 == 1)
        var reference: [StorageKey: UInt64] = [:]
        for step in 0..<600 {
            let key = CheckpointTests.key(&generator)
            let value = UInt64.random(in: 1...UInt64(1 << 40), using: &generator)
            table.set(key, value)
            reference[key] = value
            if step % 50 == 0 {
                var listed: [StorageKey: UInt64] = [:]
                try table.forEach { key, value in
                    #expect(listed.updateValue(value, forKey: key) == nil, "seed \(seed): \(key) listed twice")
                }
                #expect(listed == reference, "seed \(seed), step \(step)")
            }
        }
        for (key, value) in reference { #expect(try table.value(for: key) == value, "seed \(seed): \(key)") }
        #expect(try table.value(for: .integer(1_000_000)) == nil)
        #expect(table.runCount > 0, "seed \(seed): the keys went to scratch runs")
        #expect(StreamKeyTable(keysInMemory: .max).runCount == 0)
    }
}
