import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// Streamed commits (`WriteStream`): pieces written as they come, visible only with the commit
/// unit naming them, never after an abandon or a crash. Replay a failure with MIRRORSTORE_SEED=<seed>.
@Suite struct StreamTests {
    /// A streamed commit in the model: its batches apply at its commit, after everything before.
    struct OpenStream {
        var stream: WriteStream
        var batches: [WriteBatch] = []
    }

    /// Streams (committed and abandoned) interleaved with plain commits, checkpoints, compaction,
    /// reopening and a reader beside the writer; after every step the writer, a fresh open and
    /// the refreshed reader must all equal the model.
    @Test func streamsMatchTheModel() throws {
        let seed = SeededRandom.seed(default: 0x5743_0001)
        var generator = SeededRandom(seed: seed)
        let directory = TemporaryDirectory()
        let path = directory.file("streams.store")
        var configuration = fastConfiguration()
        configuration.checkpointInterval = 400
        var engine = try StorageEngine(path: path, configuration: configuration)
        var readerConfiguration = fastConfiguration()
        readerConfiguration.readsBesideWriter = true
        let reader = try StorageEngine(path: path, configuration: readerConfiguration)
        var model = ModelTests.Model()
        var open: OpenStream?
        var number = 0
        var streamsCommitted = 0
        for step in 0..<1_000 {
            let context = "seed \(seed), step \(step)"
            number += 1
            switch Int.random(in: 0..<20, using: &generator) {
            case 0..<6:
                let batch = randomBatch(&generator, number: number)
                let sequence = try engine.commit(batch)
                if !batch.isEmpty { model.apply(batch, sequence: sequence) }
            case 6..<9:
                if open == nil, let stream = try engine.beginStream() { open = OpenStream(stream: stream) }
            case 9..<13:
                guard var current = open else { continue }
                let batch = randomBatch(&generator, number: number)
                let locations = try current.stream.write(batch)
                let puts = batch.operations.compactMap { operation -> [UInt8]? in
                    if case .put(_, _, let value) = operation { value } else { nil }
                }
                #expect(try locations.map(current.stream.value(at:)) == puts, "\(context): a streamed value reads back")
                current.batches.append(batch)
                open = current
            case 13..<15:
                guard let current = open else { continue }
                open = nil
                let tail = randomBatch(&generator, number: number)
                let sequence = try engine.wait(for: engine.submit(tail, completing: current.stream))
                streamsCommitted += 1
                if !(current.batches.allSatisfy(\.isEmpty) && tail.isEmpty) {
                    for batch in current.batches + [tail] { model.apply(batch, sequence: sequence) }
                }
            case 15:
                open?.stream.abandon()
                open = nil
            case 16:
                try engine.compact()
                if let current = open {
                    // Compaction leaves the stream's pieces in the old file: its commit is refused.
                    #expect(throws: StorageError(.streamEnded(path: path))) { try engine.wait(for: engine.submit(WriteBatch(), completing: current.stream)) }
                    open = nil
                }
            case 17:
                // Closing with a stream open abandons it, as a crash would.
                open = nil
                try engine.close()
                engine = try StorageEngine(path: path, configuration: configuration)
            default:
                try reader.refresh()
                #expect(try StoreState(reader.snapshot()) == model.state, "\(context): the reader")
            }
            #expect(try StoreState(engine.snapshot()) == model.state, "\(context): the writer")
            if step % 25 == 0 {
                let copy = directory.file("copy-\(step).store")
                try FileManager.default.copyItem(atPath: path, toPath: copy)
                #expect(try openState(copy, fastConfiguration()) == model.state, "\(context): reopened")
                #expect(try openState(copy, fastConfiguration(.recoverValidPrefix)) == model.state, "\(context): replayed whole")
            }
        }
        try reader.refresh()
        #expect(try StoreState(reader.snapshot()) == model.state, "seed \(seed): the reader at the end")
        #expect(streamsCommitted > 30, "seed \(seed): \(streamsCommitted) streams committed")
        open = nil
        try engine.close()
        try reader.close()
        let report = try verifyStoreFile(at: path)
        #expect(report.isIntact && report.checkpointDisagreement == nil, "seed \(seed): \(report)")
        #expect(report.checkpointSequence != nil, "seed \(seed): checkpoints were written between streams")
    }

    /// A store with streams in it cut at every byte reopens to exactly a committed prefix: a
    /// stream is in it whole once its commit unit fits, and not at all before.
    @Test func everyTruncationOfStreamsReopensToACommittedPrefix() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("source.store")
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0x5743_0002))
        let engine = try StorageEngine(path: path, configuration: fastConfiguration())
        var ends = [Int(engine.statistics.fileSize)]
        var states = [try StoreState(engine.snapshot())]
        func record() throws {
            ends.append(Int(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0))
            states.append(try StoreState(engine.snapshot()))
        }
        for number in 1...9 {
            if number % 3 == 0 {
                let stream = try #require(try engine.beginStream())
                for part in 0..<3 { _ = try stream.write(randomBatch(&generator, number: number * 10 + part)) }
                if number % 6 == 0 {
                    stream.abandon()
                    continue
                }
                try engine.wait(for: engine.submit(randomBatch(&generator, number: number), completing: stream))
            } else {
                try engine.commit(randomBatch(&generator, number: number))
            }
            try record()
        }
        try engine.close()
        let bytes = try readFile(path)
        let copy = directory.file("copy.store")
        for length in 0...bytes.count {
            try writeFile(copy, Array(bytes[0..<length]))
            let expected = ends.lastIndex(where: { $0 <= length }).map { states[$0] } ?? StoreState()
            // Point-in-time recovery replays the whole log: every seventh length is enough to show
            // it reads the streams the same way.
            for mode in length % 7 == 0 ? [.strict, .recoverValidPrefix] : [EngineConfiguration.RecoveryMode.strict] {
                #expect(try openState(copy, fastConfiguration(mode)) == expected, "truncated to \(length) bytes, \(mode)")
                for sidecar in droppedSidecars(of: copy) { try FileManager.default.removeItem(atPath: sidecar) }
            }
        }
    }

    /// A unique index a stream breaks refuses the whole stream: none of its pieces is visible.
    @Test func aUniqueViolationRefusesTheWholeStream() throws {
        let engine = StorageEngine(inMemoryWith: fastConfiguration())
        try engine.defineIndexes([
            IndexDefinition(name: "Tag.value", typeName: "Tag", isUnique: true, fingerprint: "v1") { [.bytes($0)] },
        ])
        var first = WriteBatch()
        first.put(type: "Tag", key: .integer(1), value: [7])
        try engine.commit(first)
        let before = try StoreState(engine.snapshot())
        let stream = try #require(try engine.beginStream())
        var piece = WriteBatch()
        piece.put(type: "Tag", key: .integer(2), value: [8])
        piece.put(type: "Other", key: .integer(2), value: [8])
        _ = try stream.write(piece)
        var clash = WriteBatch()
        clash.put(type: "Tag", key: .integer(3), value: [7])
        _ = try stream.write(clash)
        // A plain batch in the same group: written, with none of the refused stream's entries
        // (its first piece's [8] among them) left in the index.
        let refused = engine.submit(WriteBatch(), completing: stream)
        var after = WriteBatch()
        after.put(type: "Tag", key: .integer(9), value: [9])
        let accepted = engine.submit(after)
        #expect(throws: StorageError(.uniqueConstraint(index: "Tag.value", value: "1 bytes"))) { try engine.wait(for: refused) }
        try engine.wait(for: accepted)
        var expected = before
        expected.objects["Tag"]?[.integer(9)] = [9]
        expected.sequence += 1
        #expect(try StoreState(engine.snapshot()) == expected)
        #expect(try engine.snapshot().index(named: "Tag.value")?.objects(from: nil, to: nil) == [.integer(1), .integer(9)])
        #expect(try engine.snapshot().index(named: "Tag.value")?.count(from: nil, to: nil) == 2)
        // The stream is finished: it takes no more writes.
        #expect(throws: StorageError(.streamEnded(path: ":memory:"))) { _ = try stream.write(piece) }
        // A later stream putting the same value as a deleted one is fine.
        let next = try #require(try engine.beginStream())
        var swap = WriteBatch()
        swap.delete(type: "Tag", key: .integer(1))
        swap.put(type: "Tag", key: .integer(4), value: [7])
        _ = try next.write(swap)
        try engine.wait(for: engine.submit(WriteBatch(), completing: next))
        #expect(try engine.snapshot().index(named: "Tag.value")?.objects(from: nil, to: nil) == [.integer(4), .integer(9)])
    }

    /// A stream of many pieces: each write cuts pieces of about `pieceSize` bytes, and the commit
    /// reads them back one at a time.
    @Test func aLargeStreamCommitsWhole() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("large.store")
        let engine = try StorageEngine(path: path, configuration: fastConfiguration())
        let stream = try #require(try engine.beginStream())
        var model = ModelTests.Model()
        for chunk in 0..<4 {
            var batch = WriteBatch()
            for item in 0..<3_000 {
                let key = StorageKey.integer(Int64(chunk * 3_000 + item))
                batch.put(type: "Item", key: key, value: Array(repeating: UInt8(truncatingIfNeeded: item), count: 200))
            }
            _ = try stream.write(batch)
            model.apply(batch, sequence: 1)
        }
        #expect(stream.state.withLock { $0.pieces.count } >= 4)
        #expect(engine.snapshot().count(type: "Item") == 0)
        try engine.wait(for: engine.submit(WriteBatch(), completing: stream))
        #expect(try StoreState(engine.snapshot()) == model.state)
        try engine.close()
        #expect(try openState(path, fastConfiguration()) == model.state)
    }
}
