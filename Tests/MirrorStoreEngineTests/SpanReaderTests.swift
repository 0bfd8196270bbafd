import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// A pass over every object of a type (`SpanReader`) that holds few locations at a time reads
/// the file in windows: it must give the same objects in the same file order as one that holds
/// them all.
@Suite struct SpanReaderTests {
    @Test func aPassInWindowsGivesEveryObjectInFileOrder() throws {
        let directory = TemporaryDirectory()
        let engine = try StorageEngine(path: directory.file("spans.store"), configuration: CheckpointTests.checkpointing(2_000))
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x5FA7))
        for _ in 0..<30 {
            var batch = WriteBatch()
            for _ in 0..<20 {
                batch.put(type: "P", key: CheckpointTests.key(&generator), value: CheckpointTests.value(&generator))
                batch.put(type: "Q", key: .integer(Int64.random(in: 0..<50, using: &generator)), value: [1, 2])
            }
            try engine.commit(batch)
        }
        let snapshot = engine.snapshot()
        let objects = try #require(snapshot.index.types["P"])
        func pass(limit: Int) throws -> [(StorageKey, [UInt8])] {
            var seen: [(StorageKey, [UInt8])] = []
            try SpanReader.forEach(objects, in: snapshot.index, source: snapshot.generation, limit: limit) { seen.append(($0, $1)) }
            return seen
        }
        let whole = try pass(limit: .max)
        #expect(whole.count == objects.count)
        for limit in [1, 3, 7, 40] {
            let windowed = try pass(limit: limit)
            #expect(windowed.map(\.0) == whole.map(\.0), "limit \(limit): the same keys in the same order")
            #expect(windowed.map(\.1) == whole.map(\.1), "limit \(limit): the same values")
        }
        try engine.close()
    }
}
