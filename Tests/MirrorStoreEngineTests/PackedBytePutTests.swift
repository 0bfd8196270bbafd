import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// Runs of byte-string puts (`putByteKeys`, format 7: consecutive puts of one type whose keys are
/// byte strings of one length, as UUIDs are) beside the plain puts format 6 keeps writing: exact
/// bytes, the same commits to both formats, a file of format 6 written as before, streamed
/// commits, and damaged files (cut at every byte, bits flipped) that give a committed state or a
/// typed error. Random payloads of both encodings and mutated ones are in `PackedEncodingTests`.
@Suite struct PackedBytePutTests {
    static let opcode = OperationCodec.Opcode.putByteKeys.rawValue

    /// Whether any commit or stream piece of the plain log `bytes` holds a run of byte-string puts.
    static func holdsBytePutRuns(_ bytes: [UInt8]) -> Bool {
        PlainLogUnits.operations(of: bytes).contains { $0.opcode == opcode }
    }

    /// A run takes the type, the count and the key length once, then per put the key's bytes, the
    /// value's length and the value; a key of another length or kind, or another type, ends it.
    @Test func aRunWritesEachKeyAndValueAlone() throws {
        var batch = WriteBatch()
        for number in 0..<200 { batch.put(type: "P", key: .bytes(PackedByteKeyTests.uuid(number)), value: [1, 2, 3]) }
        var types = TypeTable()
        let (payload, decoded) = OperationCodec.encode(batch.operations, types: &types, fileOffset: 10, packing: .current)
        // The type's definition (4), the run's opcode, type id, count (2) and key length, then per
        // put its key, length and value (20).
        #expect(payload.count == 4 + 1 + 1 + 2 + 1 + 200 * 20)
        var plainTypes = TypeTable()
        let plain = OperationCodec.encode(batch.operations, types: &plainTypes, fileOffset: 10, packing: .init(format: 6))
        #expect(plain.payload.count == 4 + 200 * 24)
        var readTypes = TypeTable()
        #expect(try OperationCodec.decode(payload, range: 0..<payload.count, fileOffset: 10, types: &readTypes) == decoded)
        #expect(decoded.count == 200)

        var mixed = WriteBatch()
        mixed.put(type: "P", key: .bytes([1, 2]), value: [9])
        mixed.put(type: "P", key: .bytes([3, 4]), value: [])
        mixed.put(type: "P", key: .bytes([5]), value: [8])
        mixed.put(type: "Q", key: .bytes([6]), value: [7])
        mixed.put(type: "Q", key: .integer(3), value: [6])
        mixed.put(type: "Q", key: .bytes([]), value: [5])
        var mixedTypes = TypeTable()
        let (mixedPayload, mixedDecoded) = OperationCodec.encode(mixed.operations, types: &mixedTypes, fileOffset: 0, packing: .current)
        let expected: [[UInt8]] = [
            [1, 0, 1, 80, 10, 0, 2, 2, 1, 2, 1, 9, 3, 4, 0],
            [10, 0, 1, 1, 5, 1, 8],
            [1, 1, 1, 81, 10, 1, 1, 1, 6, 1, 7],
            [9, 1, 2, 6, 1, 6],
            [10, 1, 1, 0, 1, 5],
        ]
        #expect(mixedPayload == expected.flatMap { $0 })
        var mixedRead = TypeTable()
        #expect(try OperationCodec.decode(mixedPayload, range: 0..<mixedPayload.count, fileOffset: 0, types: &mixedRead) == mixedDecoded)
        let keys: [StorageKey] = mixedDecoded.map { if case .put(_, let key, _, _) = $0 { key } else { StorageKey.integer(-1) } }
        let written: [StorageKey] = [.bytes([1, 2]), .bytes([3, 4]), .bytes([5]), .bytes([6]), .integer(3), .bytes([])]
        #expect(keys == written)
    }

    /// Crafted runs no writer makes are damage, with the offset of the count.
    @Test func runsThatCannotFitAreDamage() {
        let cases: [(payload: [UInt8], reason: String)] = [
            ([1, 0, 1, 80, 10, 0, 0, 16], "a run of 0 puts of 16-byte keys does not fit the 0 bytes left"),
            ([1, 0, 1, 80, 10, 0, 3, 2, 1, 2, 0, 3, 4, 0], "a run of 3 puts of 2-byte keys does not fit the 6 bytes left"),
            ([1, 0, 1, 80, 10, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0, 0],
             "a run of 1 puts of 18446744073709551615-byte keys does not fit the 2 bytes left"),
        ]
        for (payload, reason) in cases {
            var types = TypeTable()
            #expect(throws: DecodeFailure(offset: 6, reason: reason)) {
                try OperationCodec.decode(payload, range: 0..<payload.count, fileOffset: 0, types: &types)
            }
        }
        // A run whose count fits but whose last value does not.
        let short: [UInt8] = [1, 0, 1, 80, 10, 0, 2, 1, 7, 0, 8, 5, 1]
        var types = TypeTable()
        #expect(throws: DecodeFailure.self) { try OperationCodec.decode(short, range: 0..<short.count, fileOffset: 0, types: &types) }
    }

    /// The same random commits to a store of format 6 and one of format 7: the same objects, read
    /// through checkpoints and replays; only the format-7 file holds runs of byte-string puts, and
    /// it is smaller.
    @Test(arguments: 0..<3) func storesOfBothFormatsReadTheSame(seed: Int) throws {
        var generator = SeededRandom(seed: UInt64(seed) &+ 0xB9D0)
        let directory = TemporaryDirectory()
        let older = directory.file("format6.store")
        let newer = directory.file("format7.store")
        try writeFile(older, LogHeader(version: 6).encoded())
        let configuration = CheckpointTests.checkpointing(8 << 10)
        let engines = [try StorageEngine(path: older, configuration: configuration), try StorageEngine(path: newer, configuration: configuration)]
        #expect(engines.map(\.statistics.formatVersion) == [6, LogHeader.currentVersion])
        var reference: CheckpointTests.Reference = [:]
        for round in 0..<30 {
            var batch = CheckpointTests.randomBatch(&generator, applyingTo: &reference, deletesBelow: 90, key: PackedByteKeyTests.key)
            for _ in 0..<Int.random(in: 0...200, using: &generator) {
                let key = StorageKey.bytes(PackedByteKeyTests.uuid(Int.random(in: 0..<5_000, using: &generator)))
                let value = CheckpointTests.value(&generator)
                batch.put(type: "P", key: key, value: value)
                reference["P", default: [:]][key] = value
            }
            for engine in engines { try engine.commit(batch) }
            if round % 5 == 4 {
                for engine in engines { try CheckpointTests.check(engine, reference, "seed \(seed), round \(round)") }
            }
        }
        let expected = try StoreState(engines[1].snapshot())
        #expect(try StoreState(engines[0].snapshot()) == expected)
        for engine in engines { try engine.close() }
        let bytes = try [older, newer].map(readFile)
        #expect(!Self.holdsBytePutRuns(bytes[0]) && Self.holdsBytePutRuns(bytes[1]))
        #expect(bytes[0][8] == 6 && UInt32(bytes[1][8]) == LogHeader.currentVersion)
        #expect(bytes[1].count < bytes[0].count)
        for path in [older, newer] {
            for mode in [EngineConfiguration.RecoveryMode.strict, .recoverValidPrefix] {
                #expect(try openState(path, CheckpointTests.checkpointing(8 << 10, mode)) == expected)
                #expect(try openState(path, CheckpointTests.checkpointing(1 << 30, mode)) == expected)
            }
            #expect(try verifyStoreFile(at: path).isIntact)
        }
    }

    /// A file of format 6 goes on being written with plain puts until a compaction makes it
    /// format 7, whose commits after it pack their byte-string puts; the live bytes follow.
    @Test func aFileOfFormat6IsWrittenAsBeforeUntilCompaction() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("older.store")
        try writeFile(path, LogHeader(version: 6).encoded())
        let configuration = CheckpointTests.checkpointing(4 << 10)
        var engine = try StorageEngine(path: path, configuration: configuration)
        func commit(_ numbers: Range<Int>) throws {
            var batch = WriteBatch()
            for number in numbers { batch.put(type: "P", key: .bytes(PackedByteKeyTests.uuid(number)), value: Array("value \(number)".utf8)) }
            try engine.commit(batch)
            let statistics = engine.statistics
            #expect(statistics.liveBytes + LogHeader().unitsStart <= statistics.fileSize)
        }
        try commit(0..<1_000)
        try engine.close()
        engine = try StorageEngine(path: path, configuration: configuration)
        #expect(engine.statistics.formatVersion == 6)
        try commit(1_000..<2_000)
        try engine.close()
        let written = try readFile(path)
        #expect(written[8] == 6 && !Self.holdsBytePutRuns(written))

        engine = try StorageEngine(path: path, configuration: configuration)
        try engine.compact()
        #expect(engine.statistics.formatVersion == LogHeader.currentVersion)
        try commit(2_000..<3_000)
        let expected = try StoreState(engine.snapshot())
        #expect(expected.objects["P"]?.count == 3_000)
        try engine.close()
        let compacted = try readFile(path)
        #expect(UInt32(compacted[8]) == LogHeader.currentVersion && Self.holdsBytePutRuns(compacted))
        for mode in [EngineConfiguration.RecoveryMode.strict, .recoverValidPrefix] {
            #expect(try openState(path, CheckpointTests.checkpointing(4 << 10, mode)) == expected)
        }
    }

    /// A streamed commit writes its pieces' byte-string puts as runs; they read back before and
    /// after reopening.
    @Test func streamedPiecesPackTheirPuts() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("stream.store")
        let engine = try StorageEngine(path: path, configuration: fastConfiguration())
        let stream = try #require(try engine.beginStream())
        var expected: [StorageKey: [UInt8]] = [:]
        for chunk in 0..<3 {
            var batch = WriteBatch()
            for item in 0..<4_000 {
                let key = StorageKey.bytes(PackedByteKeyTests.uuid(chunk * 4_000 + item))
                let value = Array(repeating: UInt8(truncatingIfNeeded: item), count: 100)
                batch.put(type: "P", key: key, value: value)
                expected[key] = value
            }
            _ = try stream.write(batch)
        }
        #expect(stream.state.withLock { $0.pieces.count } >= 2)
        try engine.wait(for: engine.submit(WriteBatch(), completing: stream))
        #expect(try StoreState(engine.snapshot()).objects["P"] == expected)
        try engine.close()
        let bytes = try readFile(path)
        let pieces = PlainLogUnits.units(of: bytes).filter { $0.indexKind == IndexUnit.Kind.streamPiece.rawValue }.map(\.payload.upperBound)
        let runs = PlainLogUnits.operations(of: bytes).filter { $0.opcode == Self.opcode }
        #expect(!runs.isEmpty && runs.allSatisfy { pieces.contains($0.unit.upperBound) })
        #expect(try openState(path, fastConfiguration()).objects["P"] == expected)
    }

    /// A small store of UUID keys, byte-string puts in runs, with checkpoints and key runs,
    /// recorded commit by commit.
    static func record(at path: String, commits: Int, seed: UInt64) throws -> RecordedCommits {
        let recorded = try PackedByteKeyTests.record(at: path, commits: commits, seed: seed)
        #expect(holdsBytePutRuns(recorded.bytes))
        return recorded
    }

    @Test func truncationAtEveryOffsetGivesACommittedPrefix() throws {
        let directory = TemporaryDirectory()
        let recorded = try Self.record(at: directory.file("source.store"), commits: 14, seed: 0xB9D1)
        let path = directory.file("cut.store")
        let unitsStart = Int(LogHeader().unitsStart)
        for length in Array(stride(from: 0, to: unitsStart, by: 61)) + Array(unitsStart...recorded.bytes.count) {
            try replaceStore(at: path, with: Array(recorded.bytes[0..<length]))
            #expect(try openState(path, CheckpointTests.checkpointing(300)) == recorded.state(upTo: length).state, "cut at \(length)")
        }
    }

    @Test func bitFlipsGiveACommittedStateOrATypedError() throws {
        let directory = TemporaryDirectory()
        let recorded = try Self.record(at: directory.file("source.store"), commits: 30, seed: 0xB9D2)
        let path = directory.file("flipped.store")
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0xB9D3))
        var outcomes: [String: Int] = [:]
        let runUnits = PlainLogUnits.operations(of: recorded.bytes).filter { $0.opcode == Self.opcode }.map(\.unit)
        #expect(!runUnits.isEmpty)
        for round in 0..<400 {
            var damaged = recorded.bytes
            // Half the flips in units that hold runs of byte-string puts.
            let at = if round % 2 == 0 {
                Int.random(in: generator.pick(runUnits), using: &generator)
            } else {
                Int.random(in: Int(LogHeader().unitsStart)..<damaged.count, using: &generator)
            }
            flipRandomBit(of: &damaged, at: at, using: &generator)
            try recorded.expectCommittedStateOrTypedError(
                opening: damaged, flippedAt: at, as: path, configuration: { CheckpointTests.checkpointing(300, $0) },
                "round \(round)", outcomes: &outcomes)
        }
        #expect((outcomes["typed error"] ?? 0) > 0 && (outcomes["prefix"] ?? 0) > 0, "\(outcomes)")
    }
}
