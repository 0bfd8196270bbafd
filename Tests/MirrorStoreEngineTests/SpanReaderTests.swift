import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// A pass over every object of a type (`SpanReader`) that holds few locations at a time takes
/// the keys in windows, each read in file order: it must give every object once with its value,
/// as one that holds them all does, hold no more than its limit, and read a type whose keys lie
/// in key order in file order.
@Suite struct SpanReaderTests {
    @Test func aPassInWindowsGivesEveryObjectOnce() throws {
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
        func pass(limit: Int) throws -> (seen: [(StorageKey, [UInt8])], held: Int) {
            var seen: [(StorageKey, [UInt8])] = []
            let held = try SpanReader.forEach(objects, in: snapshot.index, source: snapshot.generation, limit: limit) { seen.append(($0, $1)) }
            return (seen, held)
        }
        func inKeyOrder(_ seen: [(StorageKey, [UInt8])]) -> [(StorageKey, [UInt8])] {
            seen.sorted { StorageKey.precedes($0.0, $1.0) }
        }
        let whole = try pass(limit: .max).seen
        #expect(whole.count == objects.count)
        #expect(Set(whole.map(\.0)).count == whole.count, "each key once")
        for limit in [1, 3, 7, 40] {
            let (windowed, held) = try pass(limit: limit)
            #expect(held <= limit, "limit \(limit): held \(held)")
            #expect(inKeyOrder(windowed).map(\.0) == inKeyOrder(whole).map(\.0), "limit \(limit): the same keys")
            #expect(inKeyOrder(windowed).map(\.1) == inKeyOrder(whole).map(\.1), "limit \(limit): the same values")
        }
        try engine.close()
    }

    @Test func keysInKeyOrderAreReadInFileOrder() throws {
        let directory = TemporaryDirectory()
        let engine = try StorageEngine(path: directory.file("ordered.store"), configuration: CheckpointTests.checkpointing(2_000))
        for first in stride(from: 0, to: 600, by: 50) {
            var batch = WriteBatch()
            // Values of 16 bytes so that the commits pass the checkpoint interval: consecutive
            // integer puts cost little more than their values in a log of format 3.
            for number in first..<(first + 50) {
                batch.put(type: "P", key: .integer(Int64(number)), value: [UInt8](repeating: UInt8(number & 0xFF), count: 16))
            }
            try engine.commit(batch)
        }
        let snapshot = engine.snapshot()
        let objects = try #require(snapshot.index.types["P"])
        #expect(objects.runs.isEmpty == false, "some keys lie in runs")
        for limit in [1, 7, 64, .max] {
            var seen: [StorageKey] = []
            try SpanReader.forEach(objects, in: snapshot.index, source: snapshot.generation, limit: limit) { key, _ in seen.append(key) }
            #expect(seen == (0..<600).map { .integer(Int64($0)) }, "limit \(limit)")
        }
        try engine.close()
    }
}
