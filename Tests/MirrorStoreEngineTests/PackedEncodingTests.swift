import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// The packed encodings of format 3 (`putIntegers` payloads, packed key-run blocks) beside the
/// plain ones format 2 keeps writing: the same operations decode alike, crafted bytes never
/// trap, and a store of either format reads the same objects.
@Suite struct PackedEncodingTests {
    /// Random operations of two types, integer keys dense and scattered among the other kinds,
    /// byte-string keys of one byte and of sixteen.
    static func randomBatch(_ generator: inout SeededRandom) -> WriteBatch {
        var batch = WriteBatch()
        var next = Int64.random(in: -3...3, using: &generator)
        for _ in 0..<Int.random(in: 0...60, using: &generator) {
            let type = generator.chance(70) ? "P" : "Q"
            let value = (0..<Int.random(in: 0...(generator.chance(5) ? 300 : 20), using: &generator)).map { _ in generator.integer(UInt8.self) }
            switch Int.random(in: 0..<100, using: &generator) {
            case 0..<45:
                batch.put(type: type, key: .integer(next), value: value)
                next &+= 1
            case 45..<60:
                let key: Int64 = generator.chance(50) ? generator.integer() : Int64.random(in: -1_000...1_000, using: &generator)
                batch.put(type: type, key: .integer(key), value: value)
            case 60..<70: batch.put(type: type, key: .string("k\(Int.random(in: 0..<50, using: &generator))"), value: value)
            case 70..<72: batch.put(type: type, key: .bytes([generator.integer(UInt8.self)]), value: value)
            case 72..<78:
                // UUID-like keys, which format 7 packs into runs, a few of them repeated.
                let key = (0..<16).map { _ in UInt8.random(in: 0...(generator.chance(50) ? 1 : 255), using: &generator) }
                batch.put(type: type, key: .bytes(key), value: value)
            case 78..<85: batch.delete(type: type, key: .integer(Int64.random(in: -3...40, using: &generator)))
            case 85..<88: batch.deleteAll(type: type)
            case 88..<93: batch.setSchema(type: type, schema: value)
            default: batch.setMetadata(key: "m\(Int.random(in: 0..<4, using: &generator))", value: value)
            }
        }
        return batch
    }

    /// An operation with its value's bytes in place of where they lie, to compare two payloads.
    static func resolved(_ operations: [DecodedOperation], in payload: [UInt8], at fileOffset: UInt64) -> [String] {
        operations.map { operation in
            guard case .put(let type, let key, let offset, let length) = operation else { return "\(operation)" }
            let start = Int(offset - fileOffset)
            return "put \(type) \(key) \(payload[start..<(start + length)])"
        }
    }

    @Test(arguments: 0..<200) func bothPayloadEncodingsDecodeToTheSameOperations(seed: Int) throws {
        var generator = SeededRandom(seed: UInt64(seed) &+ 0x9AC4)
        let operations = Self.randomBatch(&generator).operations
        var resolved: [[String]] = []
        var sizes: [Int] = []
        // Plain puts (format 2), integer runs (format 3 to 6), byte-string key runs too (format 7).
        for format: UInt32 in [2, 6, LogHeader.currentVersion] {
            var writeTypes = TypeTable()
            let (payload, decoded) = OperationCodec.encode(operations, types: &writeTypes, fileOffset: 77, packing: .init(format: format))
            var readTypes = TypeTable()
            let reread = try OperationCodec.decode(payload, range: 0..<payload.count, fileOffset: 77, types: &readTypes)
            #expect(reread == decoded)
            #expect(readTypes.names == writeTypes.names)
            resolved.append(Self.resolved(decoded, in: payload, at: 77))
            sizes.append(payload.count)
        }
        #expect(resolved[0] == resolved[1] && resolved[1] == resolved[2])
        #expect(sizes[2] <= sizes[1] && sizes[1] <= sizes[0])
    }

    /// Keys that count up cost nothing beside their values' length; a gap among them costs a
    /// stepped run until they count up again.
    @Test func runsOfConsecutiveKeysWriteTheirValuesAlone() throws {
        var batch = WriteBatch()
        for key in 1_000..<1_100 { batch.put(type: "P", key: .integer(Int64(key)), value: [1, 2, 3]) }
        var types = TypeTable()
        let (payload, decoded) = OperationCodec.encode(batch.operations, types: &types, fileOffset: 0, packing: .current)
        // The type's definition (4), the run's opcode, type id, count (2) and first key (2), then
        // per put its length and value (4).
        #expect(payload.count == 4 + 1 + 1 + 2 + 2 + 100 * 4)
        #expect(decoded.count == 100)

        var gaps = WriteBatch()
        for key: Int64 in [5, 6, 7, 20, 9, 30, 31, 32, .max - 1, .max, .min, .min + 1] { gaps.put(type: "P", key: .integer(key), value: [1]) }
        var gapTypes = TypeTable()
        let (gapPayload, gapDecoded) = OperationCodec.encode(gaps.operations, types: &gapTypes, fileOffset: 0, packing: .current)
        var readTypes = TypeTable()
        #expect(try OperationCodec.decode(gapPayload, range: 0..<gapPayload.count, fileOffset: 0, types: &readTypes) == gapDecoded)
        #expect(gapDecoded.map { if case .put(_, let key, _, _) = $0 { key } else { StorageKey.string("") } } == gaps.operations.map {
            if case .put(_, let key, _) = $0 { key } else { StorageKey.string("") }
        })
    }

    /// The live bytes a store reports count each put as its format writes it: in format 3 a
    /// run of integer puts names no key, so counting a plain put's header made the live bytes
    /// exceed the file's and hid what was dead; in format 2 the plain header is what is written.
    /// Either way only framing and the run's header are left as dead, before and after a reopen.
    @Test func liveBytesCountPutsAsTheirFormatWritesThem() throws {
        let directory = TemporaryDirectory()
        let older = directory.file("format2.store")
        let newer = directory.file("format3.store")
        try Self.createFormat2(at: older)
        var batch = WriteBatch()
        let keys = (1...1_000).map { StorageKey.integer(Int64($0)) }
        for key in keys { batch.put(type: "P", key: key, value: [UInt8](repeating: 7, count: 100)) }
        batch.put(type: "P", key: .string("x"), value: [9])
        var live: [Int] = []
        for path in [older, newer] {
            let engine = try StorageEngine(path: path, configuration: fastConfiguration())
            try engine.commit(batch)
            let statistics = engine.statistics
            let unitsStart = LogHeader(version: statistics.formatVersion).unitsStart
            #expect(statistics.liveBytes + unitsStart <= statistics.fileSize)
            #expect(statistics.deadBytes < 64, "format \(statistics.formatVersion): \(statistics.deadBytes) dead bytes")
            live.append(Int(statistics.liveBytes))
            try engine.close()
            // Now with the key run and checkpoint closing wrote, which count as live.
            let reopened = try StorageEngine(path: path, configuration: fastConfiguration())
            #expect(reopened.statistics.liveBytes + unitsStart <= reopened.statistics.fileSize)
            #expect(reopened.statistics.deadBytes < 64, "format \(statistics.formatVersion) reopened: \(reopened.statistics.deadBytes) dead bytes")
            try reopened.close()
        }
        let packedLive = 1_000 * 101 + 2 + OperationCodec.encodedSize(of: .string("x")) + 2
        #expect(live == [packedLive + keys.reduce(0) { $0 + 2 + OperationCodec.encodedSize(of: $1) }, packedLive])
    }

    /// Crafted runs of puts (integer and byte-string keys): a count past the bytes, a step past
    /// the last integer, a key length or a value past the end; every mutation decodes or throws,
    /// and what decodes lies inside the payload.
    @Test func mutatedPutRunsDecodeOrThrowNeverTrap() throws {
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x9A11))
        var valid: [[UInt8]] = []
        for _ in 0..<20 {
            var types = TypeTable()
            valid.append(OperationCodec.encode(Self.randomBatch(&generator).operations, types: &types, fileOffset: 0, packing: .current).payload)
        }
        valid.append([1, 0, 1, 80, 9, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F])
        valid.append([1, 0, 1, 80, 9, 0, 2, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0, 1, 0])
        // Dense keys from the largest integer on: the second would pass it.
        valid.append([1, 0, 1, 80, 9, 0, 5, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0, 0])
        // Runs of byte-string keys: two 3-byte keys; a count past the bytes; a key length of 2^64 − 1.
        valid.append([1, 0, 1, 80, 10, 0, 2, 3, 1, 2, 3, 1, 9, 4, 5, 6, 0])
        valid.append([1, 0, 1, 80, 10, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 16] + [UInt8](repeating: 7, count: 17))
        valid.append([1, 0, 1, 80, 10, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0, 0])
        var decoded = 0
        for round in 0..<20_000 {
            var payload = generator.pick(valid)
            if round > 0, !payload.isEmpty {
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    payload[Int.random(in: 0..<payload.count, using: &generator)] = generator.integer(UInt8.self)
                }
                if generator.chance(10) { payload = Array(payload.prefix(Int.random(in: 0...payload.count, using: &generator))) }
            }
            var types = TypeTable()
            guard let operations = try? OperationCodec.decode(payload, range: 0..<payload.count, fileOffset: 1_000, types: &types) else { continue }
            decoded += 1
            for case .put(_, _, let offset, let length) in operations {
                #expect(offset >= 1_000 && Int(offset - 1_000) + length <= payload.count)
            }
        }
        #expect(decoded > 100)
    }

    /// A writable file of format 2: the header region alone, as a store of that format starts.
    static func createFormat2(at path: String) throws {
        try writeFile(path, LogHeader(version: 2).encoded())
    }

    static func configuration(_ mode: EngineConfiguration.RecoveryMode = .strict) -> EngineConfiguration {
        CheckpointTests.checkpointing(600, mode)
    }

    /// The same random commits to a store of format 2 and one of format 3, reopened and read
    /// through checkpoints and replays: the same objects, the older file still of its format and
    /// written without the packed encodings, until its compaction makes it format 3.
    @Test(arguments: 0..<8) func storesOfBothFormatsReadTheSame(seed: Int) throws {
        var generator = SeededRandom(seed: UInt64(seed) &+ 0x2F3)
        let directory = TemporaryDirectory()
        let older = directory.file("format2.store")
        let newer = directory.file("format3.store")
        try Self.createFormat2(at: older)
        let engines = [try StorageEngine(path: older, configuration: Self.configuration()), try StorageEngine(path: newer, configuration: Self.configuration())]
        #expect(engines.map(\.statistics.formatVersion) == [2, LogHeader.currentVersion])
        var committed = [try StoreState(engines[1].snapshot())]
        for _ in 0..<Int.random(in: 20...60, using: &generator) {
            let batch = Self.randomBatch(&generator)
            for engine in engines { try engine.commit(batch) }
            let states = try engines.map { try StoreState($0.snapshot()) }
            #expect(states[0] == states[1])
            committed.append(states[1])
        }
        #expect(engines.allSatisfy { $0.statistics.checkpoints > 0 })
        let expected = try StoreState(engines[1].snapshot())
        for engine in engines { try engine.close() }
        let bytes = try [older, newer].map(readFile)
        #expect(bytes[0][8] == 2 && UInt32(bytes[1][8]) == LogHeader.currentVersion)
        #expect(bytes[1].count < bytes[0].count)
        #expect(!Self.holdsPackedEncodings(bytes[0]))
        // Damaged, either file opens as a state its commits made, the same in both, or throws.
        let damagedPath = directory.file("damaged.store")
        for round in 0..<40 {
            let file = round % 2
            var damaged = bytes[file]
            let at = flipRandomBit(of: &damaged, from: LogHeader.regionSize, using: &generator)
            for mode in [EngineConfiguration.RecoveryMode.strict, .recoverValidPrefix] {
                try replaceStore(at: damagedPath, with: damaged)
                let state: StoreState
                do {
                    state = try openState(damagedPath, Self.configuration(mode))
                } catch is StorageError {
                    continue
                }
                #expect(committed.contains(state), "format \(file + 2), flip at \(at), \(mode): a state no commit made")
            }
        }
        for path in [older, newer] {
            for mode in [EngineConfiguration.RecoveryMode.strict, .recoverValidPrefix] {
                #expect(try openState(path, Self.configuration(mode)) == expected)
            }
            #expect(try verifyStoreFile(at: path).isIntact)
        }
        // Compaction rewrites the older file in the current format, with the same objects.
        let engine = try StorageEngine(path: older, configuration: Self.configuration())
        try engine.compact()
        #expect(engine.statistics.formatVersion == LogHeader.currentVersion)
        #expect(try StoreState(engine.snapshot()) == expected)
        try engine.close()
        #expect(UInt32(try readFile(older)[8]) == LogHeader.currentVersion)
        #expect(try openState(older, Self.configuration()) == expected)
    }

    /// A file written by the code of format 2 (`Fixtures/customers-v2.store`, made at 9d7a6af by
    /// `store-benchmarks --prepare MirrorStore --small --objects 1000`: 1,000 customers in one
    /// streamed transaction, then a checkpoint whose key run is in the integer layout) reads as it
    /// did, from its checkpoint and by a replay, and goes on being written in format 2 until its
    /// compaction.
    @Test func aFileOfFormat2ReadsAndIsWrittenAsBefore() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/customers-v2.store")
        let original = Array(try Data(contentsOf: fixture))
        #expect(original[8] == 2)
        #expect(!Self.holdsPackedEncodings(original))
        let directory = TemporaryDirectory()
        let path = directory.file("customers.store")
        try writeFile(path, original)
        let fromCheckpoint = try openState(path, Self.configuration())
        #expect(try openState(path, Self.configuration(.recoverValidPrefix)) == fromCheckpoint)
        var expected = fromCheckpoint
        let customers = try #require(expected.objects["Customer"])
        #expect(Set(customers.keys) == Set((1...1_000).map { StorageKey.integer(Int64($0)) }))

        let engine = try StorageEngine(path: path, configuration: Self.configuration())
        #expect(engine.statistics.formatVersion == 2)
        var batch = WriteBatch()
        for key in 1_001...1_300 { batch.put(type: "Customer", key: .integer(Int64(key)), value: Array("customer \(key)".utf8)) }
        batch.put(type: "Customer", key: .integer(7), value: [7])
        batch.delete(type: "Customer", key: .integer(5))
        try engine.commit(batch)
        #expect(engine.statistics.checkpoints > 0)
        for key in 1_001...1_300 { expected.objects["Customer"]?[.integer(Int64(key))] = Array("customer \(key)".utf8) }
        expected.objects["Customer"]?[.integer(7)] = [7]
        expected.objects["Customer"]?[.integer(5)] = nil
        expected.sequence += 1
        #expect(try StoreState(engine.snapshot()) == expected)
        try engine.close()
        let written = try readFile(path)
        #expect(written[8] == 2)
        #expect(!Self.holdsPackedEncodings(written))
        #expect(try openState(path, Self.configuration()) == expected)
        #expect(try openState(path, Self.configuration(.recoverValidPrefix)) == expected)

        let compacting = try StorageEngine(path: path, configuration: Self.configuration())
        try compacting.compact()
        #expect(compacting.statistics.formatVersion == LogHeader.currentVersion)
        try compacting.close()
        let compacted = try readFile(path)
        #expect(UInt32(compacted[8]) == LogHeader.currentVersion)
        #expect(Self.holdsPackedEncodings(compacted))
        #expect(compacted.count < written.count)
        #expect(try openState(path, Self.configuration()) == expected)
    }

    /// Whether any commit or piece of the plain log `bytes` holds a `putIntegers` operation, or any
    /// key run a packed block.
    static func holdsPackedEncodings(_ bytes: [UInt8]) -> Bool {
        PlainLogUnits.operations(of: bytes).contains { $0.opcode == OperationCodec.Opcode.putIntegers.rawValue }
            || PlainLogUnits.keyRunBlockLayouts(of: bytes).contains { [RunBlockReader.packedLayout, RunBlockReader.walkedLayout].contains($0) }
    }
}
