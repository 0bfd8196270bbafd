import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// Batches submitted before anyone waits are written behind one sync, in order; a batch built on
/// one that is refused is refused too.
@Suite struct GroupCommitTests {
    static func put(_ type: String, _ key: Int64, _ value: UInt8) -> WriteBatch {
        var batch = WriteBatch()
        batch.put(type: type, key: .integer(key), value: [value])
        return batch
    }

    @Test func submittedBatchesShareOneSync() throws {
        let directory = TemporaryDirectory()
        let engine = try StorageEngine(path: directory.file("group.store"), configuration: EngineConfiguration(autoCompaction: .disabled))
        let tickets = (1...3).map { engine.submit(Self.put("T", $0, UInt8($0))) }
        #expect(engine.snapshot().count(type: "T") == 0, "nothing is visible before it is written")
        #expect(try engine.wait(for: tickets[2]) == 3)
        let finished = tickets.filter { $0.isFinished }.count
        #expect(finished == 3, "the first waiter wrote every queued batch")
        #expect(try engine.wait(for: tickets[0]) == 1)
        #expect(try engine.wait(for: tickets[1]) == 2)
        #expect(engine.statistics.commitSyncs == 1)
        #expect(engine.snapshot().count(type: "T") == 3)
        try engine.commit(Self.put("T", 4, 4))
        #expect(engine.statistics.commitSyncs == 2)
        try engine.close()
        let report = try verifyStoreFile(at: directory.file("group.store"))
        #expect(report.unitsChecked == 4, "each batch is its own unit")
    }

    @Test func aRefusedBatchFailsTheBatchesBuiltOnIt() throws {
        let engine = StorageEngine(inMemoryWith: EngineConfiguration(autoCompaction: .disabled))
        try engine.defineIndexes([SecondaryIndexTests.uniqueValue])
        try engine.commit(Self.put("U", 1, 7))
        let clash = engine.submit(Self.put("U", 2, 7))
        let builtOnClash = engine.submit(Self.put("U", 3, 8), after: clash)
        let builtOnThat = engine.submit(Self.put("U", 4, 9), after: builtOnClash)
        let readOnlyOnThat = engine.submit(WriteBatch(), after: builtOnThat)
        let independent = engine.submit(Self.put("U", 5, 10))
        #expect(try engine.wait(for: independent) == 2)
        #expect(throws: StorageError(.uniqueConstraint(index: "U.value", value: "7"))) { try engine.wait(for: clash) }
        for ticket in [builtOnClash, builtOnThat, readOnlyOnThat] {
            #expect(throws: StorageError(.precedingCommitFailed)) { try engine.wait(for: ticket) }
        }
        #expect(try Set(engine.snapshot().keys(type: "U")) == [.integer(1), .integer(5)])
        #expect(StorageError(.precedingCommitFailed).description
            == "This transaction read the changes of an earlier one that was still being committed, and that commit failed, so nothing of this one was written; run it again.")
    }

    @Test func aBatchBuiltOnASuccessfulOneIsWritten() throws {
        let engine = StorageEngine(inMemoryWith: EngineConfiguration(autoCompaction: .disabled))
        let first = engine.submit(Self.put("T", 1, 1))
        let second = engine.submit(Self.put("T", 2, 2), after: first)
        #expect(try engine.wait(for: first) == 1)
        #expect(try engine.wait(for: second) == 2)
    }

    @Test func closeWritesWhatWasSubmitted() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("close.store")
        let engine = try StorageEngine(path: path, configuration: EngineConfiguration(autoCompaction: .disabled))
        let ticket = engine.submit(Self.put("T", 1, 1))
        try engine.close()
        #expect(try engine.wait(for: ticket) == 1, "its writer is told it is durable")
        let reopened = try StorageEngine(path: path)
        #expect(try reopened.snapshot().value(type: "T", key: .integer(1)) == [1])
        try reopened.close()
    }
}
