import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// A file cut at any byte, as a crash in the middle of an append leaves it, must reopen to
/// exactly the units that fit, and must accept new commits that survive the next reopen.
@Suite struct TruncationTests {
    @Test func everyTruncationReopensToTheCommittedPrefix() throws {
        let directory = TemporaryDirectory()
        let seed = SeededRandom.seed(default: 0x7A11)
        let recorded = try RecordedStore.make(at: directory.file("source.store"), units: 60, seed: seed)
        #expect(recorded.unitEnds.count == 61)
        let copy = directory.file("copy.store")
        for length in 0...recorded.bytes.count {
            let cut = Array(recorded.bytes[0..<length])
            try writeFile(copy, cut)
            let (state, report) = try openStateAndReport(copy, fastConfiguration())
            #expect(state == recorded.expectedState(length: length), "seed \(seed), truncated to \(length) bytes")
            // A torn final unit is dropped, never in silence: reported, and kept beside the store.
            let end = recorded.unitEnds.last(where: { $0 <= length }) ?? 0
            if length > end, end >= LogHeader.size {
                #expect(report?.cause == .tornFinalCommit, "seed \(seed), truncated to \(length) bytes")
                #expect(report?.offset == UInt64(end) && report?.droppedBytes == UInt64(length - end))
                #expect(try report?.keptAt.map(keptBytes) == Array(cut[end...]), "seed \(seed), truncated to \(length) bytes")
            } else {
                #expect(report == nil, "seed \(seed), truncated to \(length) bytes")
            }
            for sidecar in droppedSidecars(of: copy) { try FileManager.default.removeItem(atPath: sidecar) }
        }
    }

    /// LevelDB #1287: a commit appended behind a torn tail must not be lost on the next open.
    @Test func commitsAfterATornTailSurviveTheNextReopen() throws {
        let directory = TemporaryDirectory()
        let seed = SeededRandom.seed(default: 0xD00D)
        let recorded = try RecordedStore.make(at: directory.file("source.store"), units: 20, seed: seed)
        let copy = directory.file("copy.store")
        var extra = WriteBatch()
        extra.put(type: "After", key: .string("tail"), value: [1, 2, 3])
        for length in stride(from: recorded.unitEnds[1] + 1, to: recorded.bytes.count, by: 3)
        where !recorded.unitEnds.contains(length) {
            try writeFile(copy, Array(recorded.bytes[0..<length]))
            let engine = try StorageEngine(path: copy, configuration: EngineConfiguration(autoCompaction: .disabled))
            let expected = recorded.expectedState(length: length)
            #expect(engine.statistics.fileSize == UInt64(recorded.unitEnds.last(where: { $0 <= length }) ?? 0))
            let sequence = try engine.commit(extra)
            #expect(sequence == expected.sequence + 1, "seed \(seed), length \(length)")
            try engine.close()
            let reopened = try openState(copy, fastConfiguration())
            #expect(reopened.objects["After"]?[.string("tail")] == [1, 2, 3], "seed \(seed), length \(length)")
            #expect(reopened.sequence == expected.sequence + 1, "seed \(seed), length \(length)")
            var withoutExtra = reopened
            withoutExtra.objects["After"] = nil
            withoutExtra.sequence = expected.sequence
            #expect(withoutExtra == expected, "seed \(seed), length \(length)")
        }
    }

    @Test func anInterruptedCreationIsReinitialized() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("new.store")
        try writeFile(path, Array(LogHeader().encoded()[0..<11]))
        let engine = try StorageEngine(path: path, configuration: fastConfiguration())
        try engine.commit({ var batch = WriteBatch(); batch.setMetadata(key: "k", value: [1]); return batch }())
        try engine.close()
        #expect(try openState(path, fastConfiguration()).metadata["k"] == [1])
    }
}
