import Foundation
import Testing
import TestSupport
@_spi(Testing) @testable import MirrorStoreEngine

/// Rewrites (migrations, compactions) that write their key table as runs as they go
/// (`RewriteKeyRuns`): with a tiny bound every rewrite here writes many runs, which must give
/// exactly the state a plain reference holds, before and after reopening, and a file that
/// `verifyStoreFile` finds intact.
@Suite struct RewriteKeyRunTests {
    /// A configuration that writes a rewrite's keys to runs every `bound` keys per type.
    static func streaming(_ bound: Int) -> EngineConfiguration {
        var configuration = CheckpointTests.checkpointing(1 << 20)
        configuration.rewriteKeysInMemory = bound
        return configuration
    }

    /// The orders a rewrite's keys come in: ascending, shuffled, and mixed kinds shuffled.
    enum Order: CaseIterable {
        case ascendingIntegers, shuffledIntegers, shuffledStrings, shuffledMixed
    }

    static func keys(_ order: Order, count: Int, _ generator: inout SeededRandom) -> [StorageKey] {
        switch order {
        case .ascendingIntegers: return (0..<count).map { .integer(Int64($0) * 3 - 400) }
        case .shuffledIntegers: return (0..<count).map { StorageKey.integer(Int64($0) * 7 - 900) }.shuffled(using: &generator)
        case .shuffledStrings: return (0..<count).map { StorageKey.string("name \($0) é") }.shuffled(using: &generator)
        case .shuffledMixed:
            return (0..<count).map { number -> StorageKey in
                switch number % 3 {
                case 0: .integer(Int64(number))
                case 1: .string("s\(number)")
                default: .bytes([UInt8(number & 0xFF), UInt8(number >> 8)])
                }
            }.shuffled(using: &generator)
        }
    }

    @Test(arguments: Order.allCases)
    func aRewriteWritesItsKeysAsRunsAsItGoes(order: Order) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("rewritten.store")
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x2E77))
        var engine = try StorageEngine(path: path, configuration: Self.streaming(16))
        var old = WriteBatch()
        for number in 0..<50 { old.put(type: "Old", key: .integer(Int64(number)), value: [UInt8(number)]) }
        try engine.commit(old)

        let keys = Self.keys(order, count: 700, &generator)
        var reference: CheckpointTests.Reference = [:]
        try engine.rewrite(indexes: []) { snapshot, rewriter in
            try rewriter.setMetadata(key: "version", value: [2])
            try rewriter.setSchema(type: "P", schema: [1, 2, 3])
            try rewriter.reserveCapacity(type: "P", integers: keys.count, strings: keys.count, byteStrings: 0)
            for (number, key) in keys.enumerated() {
                let value = CheckpointTests.value(&generator) + [UInt8(number & 0xFF)]
                try rewriter.put(type: "P", key: key, value: value)
                reference["P", default: [:]][key] = value
            }
            // Keys put again replace what the runs already hold, and are counted once.
            for key in keys.shuffled(using: &generator).prefix(40) {
                let value = [0xEE] + CheckpointTests.value(&generator)
                try rewriter.put(type: "P", key: key, value: value)
                reference["P", default: [:]][key] = value
            }
            for key in keys.prefix(100) { #expect(try rewriter.contains(type: "P", key: key)) }
            #expect(try !rewriter.contains(type: "P", key: .integer(Int64.max)))
            #expect(try !rewriter.contains(type: "P", key: .string("absent")))
            try snapshot.forEachEntry(type: "Old") { key, value in try rewriter.put(type: "Old", key: key, value: value) }
        }
        reference["Old"] = (0..<50).reduce(into: [:]) { $0[.integer(Int64($1))] = [UInt8($1)] }

        let snapshot = engine.snapshot()
        // The rewrite is far below the checkpoint interval: only the streamed key table has runs.
        #expect(snapshot.index.types["P"]?.runs.count == 1, "the runs were merged into one at the end")
        #expect(snapshot.index.types["P"]?.memoryCount == 0)
        #expect(snapshot.count(type: "P") == keys.count)
        #expect(try StoreState(snapshot).objects == reference)
        #expect(snapshot.metadata(key: "version") == [2])
        try engine.close()

        let report = try verifyStoreFile(at: path)
        #expect(report.isIntact, "\(report)")
        #expect(report.objectCounts["P"] == keys.count)
        engine = try StorageEngine(path: path, configuration: Self.streaming(16))
        #expect(engine.statistics.checkpoints > 0 || engine.snapshot().index.types["P"]?.runs.isEmpty == false)
        #expect(try StoreState(engine.snapshot()).objects == reference, "after reopening")
        for key in keys.shuffled(using: &generator).prefix(50) {
            #expect(try engine.snapshot().value(type: "P", key: key) == reference["P"]?[key])
        }
        try engine.close()
    }

    @Test(arguments: [Order.ascendingIntegers, .shuffledStrings, .shuffledMixed])
    func aCompactionWritesItsKeysAsRunsAsItGoes(order: Order) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("compacted.store")
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0xC0A7))
        var engine = try StorageEngine(path: path, configuration: Self.streaming(8))
        var reference: CheckpointTests.Reference = [:]
        let keys = Self.keys(order, count: 400, &generator)
        for chunk in stride(from: 0, to: keys.count, by: 50) {
            var batch = WriteBatch()
            for key in keys[chunk..<min(keys.count, chunk + 50)] {
                let value = CheckpointTests.value(&generator)
                batch.put(type: "P", key: key, value: value)
                reference["P", default: [:]][key] = value
            }
            try engine.commit(batch)
        }
        var deletes = WriteBatch()
        for key in keys.shuffled(using: &generator).prefix(60) {
            deletes.delete(type: "P", key: key)
            reference["P"]?[key] = nil
        }
        try engine.commit(deletes)
        try engine.compact()
        #expect(engine.snapshot().index.types["P"]?.runs.count == 1)
        #expect(try StoreState(engine.snapshot()).objects == reference)
        try engine.close()

        let report = try verifyStoreFile(at: path)
        #expect(report.isIntact, "\(report)")
        engine = try StorageEngine(path: path, configuration: Self.streaming(8))
        #expect(try StoreState(engine.snapshot()).objects == reference, "after reopening")
        try engine.close()
    }

    /// The indexes of the types whose keys went to runs are written as index runs too (several,
    /// then merged), listed by the checkpoint after the rewrite and read from there at the next
    /// open without reading a value; a unique index the new state breaks refuses the rewrite.
    @Test(arguments: [Order.shuffledIntegers, .shuffledMixed])
    func aRewriteWritesItsIndexesAsRuns(order: Order) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("indexed.store")
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x1DE7))
        let reads = PersistedIndexTests.Reads()
        var engine = try StorageEngine(path: path, configuration: Self.streaming(32))
        var reference: CheckpointTests.Reference = [:]
        let keys = Self.keys(order, count: 600, &generator)
        try engine.rewrite(indexes: PersistedIndexTests.definitions(reads)) { _, rewriter in
            for (number, key) in keys.enumerated() {
                let value = CheckpointTests.value(&generator) + [UInt8(number & 0xFF)]
                try rewriter.put(type: "P", key: key, value: value)
                reference["P", default: [:]][key] = value
                try rewriter.put(type: "Q", key: .integer(Int64(number)), value: value)
                reference["Q", default: [:]][.integer(Int64(number))] = value
            }
        }
        try engine.defineIndexes(PersistedIndexTests.definitions(reads))
        for name in PersistedIndexTests.names {
            let index = try #require(engine.snapshot().index(named: name))
            var found: [IndexEntry] = []
            try index.forEach(from: nil, to: nil) { found.append($0); return true }
            #expect(found == PersistedIndexTests.expected(name, reference), "\(name) agrees with the objects")
            #expect(engine.snapshot().secondary.indexes[name]?.runs.count == 1, "\(name) is one run")
        }
        try engine.close()
        #expect(try verifyStoreFile(at: path).isIntact)
        _ = reads.take()
        engine = try StorageEngine(path: path, configuration: Self.streaming(32))
        try engine.defineIndexes(PersistedIndexTests.definitions(reads))
        #expect(reads.take().isEmpty, "every index was read from its runs")
        try engine.close()
        #expect(try PersistedIndexTests.openAndCheck(path, Self.streaming(32), "after reopening").objects == reference)

        let unique = IndexDefinition(name: "P.unique", typeName: "P", isUnique: true, fingerprint: "first byte") { value in
            [value.first.map { .integer(Int64($0)) } ?? .null]
        }
        engine = try StorageEngine(path: path, configuration: Self.streaming(32))
        let before = try readFile(path)
        #expect(throws: StorageError.self) {
            try engine.rewrite(indexes: [unique]) { _, rewriter in
                for number in 0..<100 { try rewriter.put(type: "P", key: .integer(Int64(number)), value: [UInt8(number % 60)]) }
            }
        }
        #expect(try readFile(path) == before, "the refused rewrite left the file")
        try engine.close()
    }

    /// An encrypted log gives no mapping: the runs a rewrite writes are read back decrypted.
    @Test func anEncryptedRewriteWritesItsKeysAsRuns() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("encrypted.store")
        var configuration = Self.streaming(16)
        configuration.encryption = .key([UInt8](repeating: 0x5A, count: 32))
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0xE5C))
        var engine = try StorageEngine(path: path, configuration: configuration)
        let keys = Self.keys(.shuffledMixed, count: 500, &generator)
        var reference: CheckpointTests.Reference = [:]
        try engine.rewrite(indexes: []) { _, rewriter in
            for key in keys {
                let value = CheckpointTests.value(&generator)
                try rewriter.put(type: "P", key: key, value: value)
                reference["P", default: [:]][key] = value
            }
            for key in keys.prefix(30) { #expect(try rewriter.contains(type: "P", key: key)) }
        }
        #expect(engine.snapshot().index.types["P"]?.runs.count == 1)
        try engine.close()
        #expect(try verifyStoreFile(at: path, encryption: configuration.encryption).isIntact)
        engine = try StorageEngine(path: path, configuration: configuration)
        #expect(try StoreState(engine.snapshot()).objects == reference)
        try engine.close()
    }

    /// Without a checkpoint interval nothing reads runs, so a rewrite keeps its keys in memory.
    @Test func aRewriteWithoutCheckpointsKeepsItsKeysInMemory() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("plain.store")
        var configuration = Self.streaming(4)
        configuration.checkpointInterval = 0
        let engine = try StorageEngine(path: path, configuration: configuration)
        try engine.rewrite(indexes: []) { _, rewriter in
            for number in (0..<100).reversed() { try rewriter.put(type: "P", key: .integer(Int64(number)), value: [1]) }
        }
        #expect(engine.snapshot().index.types["P"]?.runs.isEmpty == true)
        #expect(engine.snapshot().count(type: "P") == 100)
        try engine.close()
        #expect(try verifyStoreFile(at: path).isIntact)
    }
}
