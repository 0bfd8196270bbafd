import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// Values read in place come once each, with their own keys, in file order.
@Suite struct FileOrderTests {
    @Test(arguments: [UInt64(1) << 10, UInt64(1) << 20, UInt64(1) << 33, (UInt64(1) << 40) - 1])
    func radixSortMatchesASortByOffset(largestOffset: UInt64) {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0xF11E) &+ largestOffset)
        var items = (0..<5_000).map { index in
            FileOrder.Item(
                packed: ValueLocation(offset: UInt64.random(in: 0...largestOffset, using: &random), length: Int.random(in: 0..<300, using: &random)).packed,
                payload: Int64(index))
        }
        let expected = items.sorted { ($0.packed >> 24, $0.payload) < ($1.packed >> 24, $1.payload) }
        FileOrder.sort(&items, largestOffset: largestOffset)
        #expect(items.map { $0.packed >> 24 } == expected.map { $0.packed >> 24 })
        #expect(Set(items.map(\.payload)).count == 5_000, "every item once")
        // Stable: equal offsets keep their first order.
        #expect(items.map(\.payload) == expected.map(\.payload))
    }

    static func check(_ engine: StorageEngine, expected: [StorageKey: [UInt8]], ordered: Bool) throws {
        try check(engine.snapshot(), expected: expected, ordered: ordered)
    }

    static func check(_ snapshot: EngineSnapshot, expected: [StorageKey: [UInt8]], ordered: Bool) throws {
        var seen: [StorageKey: [UInt8]] = [:]
        var offsets: [Int] = []
        let values = snapshot.values(ofType: "T")
        try snapshot.forEachValueInPlace(type: "T") { key, location, bytes in
            #expect(seen[key] == nil, "\(key) twice")
            seen[key] = Array(bytes)
            // A location the pass gives reads the same bytes again, and is the key's.
            let (reread, found) = (try values.value(at: location), try values.location(for: key))
            #expect(reread == Array(bytes))
            #expect(found == location)
            if let base = bytes.baseAddress { offsets.append(Int(bitPattern: base)) }
        }
        #expect(seen == expected)
        if ordered { #expect(offsets == offsets.sorted(), "file order") }
        // The pass in batches gives the same values, keys and locations in the same order.
        var one: [(StorageKey, ValueLocation, [UInt8])] = []
        try snapshot.forEachValueInPlace(type: "T") { one.append(($0, $1, Array($2))) }
        var batched: [(StorageKey, ValueLocation, [UInt8])] = []
        try snapshot.forEachValueBatchInPlace(type: "T") { batch in
            #expect((1...ValueBatch.capacity).contains(batch.values.count))
            for index in batch.values.indices { batched.append((batch.key(at: index), batch.location(at: index), Array(batch.values[index]))) }
        }
        #expect(batched.map(\.0) == one.map(\.0))
        #expect(batched.map(\.1) == one.map(\.1))
        #expect(batched.map(\.2) == one.map(\.2))
    }

    @Test func valuesInPlaceComeOnceInFileOrder() throws {
        let directory = TemporaryDirectory()
        let engine = try StorageEngine(path: directory.file("order.store"), configuration: fastConfiguration())
        var random = SeededRandom(seed: SeededRandom.seed(default: 0xF11F))
        var expected: [StorageKey: [UInt8]] = [:]
        var older: (EngineSnapshot, [StorageKey: [UInt8]])?
        for round in 0..<40 {
            var batch = WriteBatch()
            for _ in 0..<25 {
                let key: StorageKey = random.chance(70) ? .integer(Int64.random(in: -500...500, using: &random)) : .string("k\(Int.random(in: 0..<200, using: &random))")
                let value = (0..<Int.random(in: 0..<40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                batch.put(type: "T", key: key, value: value)
                expected[key] = value
            }
            if round % 7 == 3, let victim = expected.keys.first {
                batch.delete(type: "T", key: victim)
                expected[victim] = nil
            }
            try engine.commit(batch)
            // Each scan keeps its file order for later scans of the same objects; a commit must
            // drop it, or this scan would read the last round's locations.
            try Self.check(engine, expected: expected, ordered: true)
            try Self.check(engine, expected: expected, ordered: true)
            if round == 10 { older = (engine.snapshot(), expected) }
        }
        let (snapshot, itsObjects) = try #require(older)
        try Self.check(snapshot, expected: itsObjects, ordered: true)
        let memory = StorageEngine(inMemoryWith: fastConfiguration())
        var batch = WriteBatch()
        for (key, value) in expected { batch.put(type: "T", key: key, value: value) }
        try memory.commit(batch)
        try Self.check(memory, expected: expected, ordered: false)
        try engine.close()
        // An encrypted log lends its values from its cached pages, one call each.
        var configuration = fastConfiguration()
        configuration.encryption = .key(testEncryptionKey)
        let encrypted = try StorageEngine(path: directory.file("encrypted.store"), configuration: configuration)
        try encrypted.commit(batch)
        try Self.check(encrypted, expected: expected, ordered: false)
        try encrypted.close()
    }
}
