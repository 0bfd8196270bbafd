import Foundation
import Synchronization
import Testing
import TestSupport
@testable import MirrorStoreEngine

@Suite struct EngineBehaviorTests {
    static func batch(_ build: (inout WriteBatch) -> Void) -> WriteBatch {
        var batch = WriteBatch()
        build(&batch)
        return batch
    }

    @Test func commitsSurviveReopenWithBothDurabilities() throws {
        let directory = TemporaryDirectory()
        for durability in [EngineConfiguration.Durability.full, .none] {
            let path = directory.file("\(durability).store")
            let engine = try StorageEngine(path: path, configuration: EngineConfiguration(durability: durability))
            #expect(try engine.commit(Self.batch { $0.put(type: "Hero", key: .integer(1), value: [1]) }) == 1)
            #expect(try engine.commit(Self.batch { $0.setSchema(type: "Hero", schema: [9]) }) == 2)
            #expect(try engine.commit(WriteBatch()) == 2, "an empty batch writes nothing")
            try engine.close()
            let reopened = try StorageEngine(path: path)
            let snapshot = reopened.snapshot()
            #expect(try snapshot.value(type: "Hero", key: .integer(1)) == [1])
            #expect(snapshot.schema(type: "Hero") == [9])
            #expect(snapshot.sequence == 2)
            try reopened.close()
        }
    }

    /// A snapshot of a few types finds them in a list by name, of more by hashing the name: both
    /// find what was written for each type, nothing for another name, and a name given as another
    /// string (made anew, or canonically equal in other bytes) as the one written.
    @Test("a snapshot finds each type's values by name, with few types and many")
    func snapshotFindsEachTypeByName() throws {
        for typeCount in [1, 2, 7, 8, 9, 14] {
            let engine = StorageEngine(inMemoryWith: EngineConfiguration(autoCompaction: .disabled))
            // Short and long names: the long ones compare through their storage, not their bits.
            let names = (0..<typeCount).map { $0 == 0 ? "Caf\u{E9}" : "T\($0)" + String(repeating: "x", count: $0 % 2 == 0 ? 0 : 20) }
            try engine.commit(Self.batch { batch in
                for (number, name) in names.enumerated() {
                    for key in 0..<5 where (key + number) % 3 != 0 {
                        batch.put(type: name, key: .integer(Int64(key)), value: [UInt8(number), UInt8(key)])
                    }
                }
            })
            let snapshot = engine.snapshot()
            let asked = names.map { String(decoding: Array($0.utf8), as: UTF8.self) } + ["Cafe\u{301}", "Absent", "T1", "T\(typeCount)"]
            for name in asked {
                let number = names.firstIndex(of: name)
                for key in 0..<5 {
                    let expected = number.flatMap { (key + $0) % 3 != 0 ? [UInt8($0), UInt8(key)] : nil }
                    #expect(try snapshot.value(type: name, key: .integer(Int64(key))) == expected, "\(typeCount) types, \(name), key \(key)")
                    #expect(try snapshot.withValue(type: name, key: .integer(Int64(key))) { Array($0) } == expected, "\(typeCount) types, \(name), key \(key)")
                    #expect(try snapshot.values(ofType: name).value(for: .integer(Int64(key))) == expected, "\(typeCount) types, \(name), key \(key)")
                }
            }
        }
    }

    @Test func noneDurabilityNeverSyncsACommit() throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjection()
        let path = directory.file("none.store")
        let engine = try StorageEngine(path: path, configuration: fastConfiguration(), faults: faults)
        faults.fail(.sync, with: EIO)
        try engine.commit(Self.batch { $0.put(type: "T", key: .integer(1), value: [1]) })
        // The queued failure is still pending, so the commit did not sync; close does, once.
        #expect(throws: StorageError(.syncFailed(path: path))) { try engine.close() }
    }

    @Test func inMemoryEngineHasTheSameSemantics() throws {
        let engine = StorageEngine(inMemoryWith: EngineConfiguration(autoCompaction: .disabled))
        try engine.commit(Self.batch {
            $0.put(type: "Hero", key: .string("tony"), value: Array("Stark".utf8))
            $0.put(type: "Hero", key: .string("bruce"), value: Array("Banner".utf8))
            $0.setMetadata(key: "schemaVersion", value: [3])
        })
        let before = engine.snapshot()
        try engine.commit(Self.batch { $0.delete(type: "Hero", key: .string("bruce")) })
        try engine.compact()
        let after = engine.snapshot()
        #expect(before.count(type: "Hero") == 2)
        #expect(try before.value(type: "Hero", key: .string("bruce")) == Array("Banner".utf8))
        #expect(try after.keys(type: "Hero") == [.string("tony")])
        #expect(try after.contains(type: "Hero", key: .string("tony")))
        #expect(try !after.contains(type: "Hero", key: .string("bruce")))
        #expect(after.metadata(key: "schemaVersion") == [3])
        #expect(after.sequence == 2)
        #expect(engine.path == nil)
        try engine.close()
        #expect(throws: StorageError(.closed)) { try engine.commit(Self.batch { $0.deleteAll(type: "Hero") }) }
        #expect(try before.value(type: "Hero", key: .string("tony")) == Array("Stark".utf8), "old snapshots stay readable")
    }

    @Test(arguments: [false, true]) func aSnapshotDoesNotSeeLaterCommitsOrCompaction(encrypted: Bool) throws {
        let directory = TemporaryDirectory()
        let engine = try StorageEngine(path: directory.file("iso.store"), configuration: encrypting(fastConfiguration(), encrypted))
        try engine.commit(Self.batch { $0.put(type: "T", key: .integer(1), value: [1]) })
        let old = engine.snapshot()
        try engine.commit(Self.batch {
            $0.put(type: "T", key: .integer(1), value: [2])
            $0.put(type: "T", key: .integer(2), value: [2])
        })
        try engine.compact()
        try engine.commit(Self.batch { $0.deleteAll(type: "T") })
        #expect(old.sequence == 1)
        #expect(try old.value(type: "T", key: .integer(1)) == [1])
        #expect(try old.value(type: "T", key: .integer(2)) == nil)
        #expect(old.count(type: "T") == 1)
        #expect(engine.snapshot().count(type: "T") == 0)
        #expect(engine.snapshot().typeNames.isEmpty)
        try engine.close()
        #expect(try old.value(type: "T", key: .integer(1)) == [1], "a snapshot outlives compaction and close")
    }

    /// The version tells a cache whether a snapshot still shows the newest state: whatever
    /// changes what snapshots see changes it, and nothing else does.
    @Test(arguments: [false, true]) func theVersionChangesWithEveryStateSnapshotsSee(encrypted: Bool) throws {
        let directory = TemporaryDirectory()
        let engine = try StorageEngine(path: directory.file("version.store"), configuration: encrypting(fastConfiguration(), encrypted))
        var seen: [UInt64] = []
        func expectCurrent(_ label: String) {
            let snapshot = engine.snapshot()
            #expect(snapshot.version == engine.version, "\(label)")
            #expect(!seen.contains(snapshot.version), "\(label): version \(snapshot.version) seen before")
            seen.append(snapshot.version)
        }
        expectCurrent("opened")
        let before = engine.snapshot()
        #expect(engine.snapshot().version == before.version, "taking a snapshot changes nothing")
        try engine.commit(WriteBatch())
        #expect(engine.version == before.version, "an empty batch changes nothing")
        try engine.commit(Self.batch { $0.put(type: "T", key: .integer(1), value: [1]) })
        #expect(before.version != engine.version)
        expectCurrent("committed")
        try engine.defineIndexes([IndexDefinition(name: "T.first", typeName: "T", isUnique: false) { [.integer(Int64($0.first ?? 0))] }])
        expectCurrent("indexed")
        try engine.compact()
        expectCurrent("compacted")
        try engine.close()
        #expect(!seen.contains(engine.version), "closing changes the version")
    }

    /// Eight threads take snapshots and check an invariant every commit keeps (a == b) while
    /// a writer commits and compacts. Also run under --sanitize=thread.
    @Test(arguments: [false, true]) func readersRunBesideWriters(encrypted: Bool) throws {
        let directory = TemporaryDirectory()
        let engine = try StorageEngine(path: directory.file("concurrent.store"), configuration: encrypting(fastConfiguration(), encrypted))
        let done = Atomic<Bool>(false)
        let problems = Lock<[String]>([])
        let group = DispatchGroup()
        for reader in 0..<8 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var lastSequence: UInt64 = 0
                var reads = 0
                while !done.load(ordering: .acquiring) || reads < 10 {
                    reads += 1
                    let snapshot = engine.snapshot()
                    do {
                        let a = try snapshot.value(type: "Pair", key: .string("a"))
                        let b = try snapshot.value(type: "Pair", key: .string("b"))
                        if a != b { problems.withLock { $0.append("reader \(reader): a \(a ?? []) != b \(b ?? [])") } }
                        if snapshot.sequence < lastSequence { problems.withLock { $0.append("reader \(reader): sequence went back") } }
                        if snapshot.count(type: "Log") != Int(snapshot.sequence) {
                            problems.withLock { $0.append("reader \(reader): saw part of a unit") }
                        }
                    } catch {
                        problems.withLock { $0.append("reader \(reader): \(error)") }
                    }
                    lastSequence = snapshot.sequence
                }
            }
        }
        for n in 1...300 {
            let value = withUnsafeBytes(of: n) { Array($0) }
            try engine.commit(Self.batch {
                $0.put(type: "Pair", key: .string("a"), value: value)
                $0.put(type: "Log", key: .integer(Int64(n)), value: value)
                $0.put(type: "Pair", key: .string("b"), value: value)
            })
            if n % 50 == 0 { try engine.compact() }
        }
        done.store(true, ordering: .releasing)
        group.wait()
        #expect(problems.withLock { $0 } == [])
        try engine.close()
    }

    /// Four threads commit at once; with full durability on a file, callers that queue behind a
    /// sync share the next one (group commit). Every batch lands as its own unit, numbered 1...200.
    @Test(arguments: [true, false]) func concurrentCommittersAreSerialized(onFile: Bool) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("group.store")
        let engine = onFile
            ? try StorageEngine(path: path, configuration: EngineConfiguration(autoCompaction: .disabled))
            : StorageEngine(inMemoryWith: EngineConfiguration(autoCompaction: .disabled))
        let sequences = Lock<[UInt64]>([])
        let failures = Lock<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { writer in
            for n in 0..<50 {
                var batch = WriteBatch()
                batch.put(type: "W\(writer)", key: .integer(Int64(n)), value: [UInt8(n)])
                do {
                    let sequence = try engine.commit(batch)
                    sequences.withLock { $0.append(sequence) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(sequences.withLock { $0.sorted() } == Array(1...200))
        #expect(engine.statistics.objectCounts == ["W0": 50, "W1": 50, "W2": 50, "W3": 50])
        try engine.close()
        if onFile {
            let report = try verifyStoreFile(at: path)
            #expect(report.unitsChecked == 200)
            #expect(report.isIntact)
        }
    }

    @Test(arguments: [false, true]) func aFullDiskRollsTheCommitBack(encrypted: Bool) throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjection()
        let path = directory.file("full.store")
        let engine = try StorageEngine(path: path, configuration: encrypting(EngineConfiguration(), encrypted), faults: faults)
        try engine.commit(Self.batch { $0.put(type: "T", key: .integer(1), value: [1]) })
        faults.fail(.write, with: ENOSPC)
        #expect(throws: StorageError(.diskFull(path: path))) {
            try engine.commit(Self.batch { $0.put(type: "T", key: .integer(2), value: [2]) })
        }
        #expect(engine.snapshot().count(type: "T") == 1)
        #expect(StorageError(.diskFull(path: path)).description == "The disk holding '\(path)' is full, so the write that needed the space failed and left the store as it was.")
        #expect(try engine.commit(Self.batch { $0.put(type: "T", key: .integer(3), value: [3]) }) == 2)
        try engine.close()
        let state = try openState(path, encrypting(fastConfiguration(), encrypted))
        #expect(state.objects["T"] == [.integer(1): [1], .integer(3): [3]])
    }

    @Test(arguments: [false, true]) func aFailedRollbackPoisonsTheEngine(encrypted: Bool) throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjection()
        let path = directory.file("rollback.store")
        let engine = try StorageEngine(path: path, configuration: encrypting(EngineConfiguration(), encrypted), faults: faults)
        faults.fail(.write, with: EIO)
        faults.fail(.truncate, with: EIO)
        #expect(throws: StorageError(.io(operation: "write to", path: path, errno: EIO))) {
            try engine.commit(Self.batch { $0.put(type: "T", key: .integer(1), value: [1]) })
        }
        #expect(throws: StorageError(.syncFailed(path: path))) {
            try engine.commit(Self.batch { $0.put(type: "T", key: .integer(2), value: [2]) })
        }
        try engine.close()
    }

    @Test(arguments: [false, true]) func aFailedSyncIsNeverRetried(encrypted: Bool) throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjection()
        let path = directory.file("fsyncgate.store")
        let engine = try StorageEngine(path: path, configuration: encrypting(EngineConfiguration(), encrypted), faults: faults)
        try engine.commit(Self.batch { $0.put(type: "T", key: .integer(1), value: [1]) })
        faults.fail(.sync, with: EIO)
        #expect(throws: StorageError(.syncFailed(path: path))) {
            try engine.commit(Self.batch { $0.put(type: "T", key: .integer(2), value: [2]) })
        }
        #expect(engine.snapshot().count(type: "T") == 1, "the unsynced unit is not visible")
        // No further sync is attempted: the next commit fails before writing anything.
        #expect(throws: StorageError(.syncFailed(path: path))) {
            try engine.commit(Self.batch { $0.put(type: "T", key: .integer(3), value: [3]) })
        }
        #expect(throws: StorageError(.syncFailed(path: path))) { try engine.compact() }
        #expect(StorageError(.syncFailed(path: path)).description
            == "Flushing '\(path)' to disk failed, so the engine refuses further writes; reopen the store to see what reached the disk.")
        try engine.close()
    }

    @Test(arguments: [false, true]) func compactionReclaimsDeadBytesAndKeepsEverything(encrypted: Bool) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("compact.store")
        let engine = try StorageEngine(path: path, configuration: encrypting(fastConfiguration(), encrypted))
        for round in 0..<20 {
            try engine.commit(Self.batch { batch in
                for key in 0..<50 { batch.put(type: "T", key: .integer(Int64(key)), value: [UInt8](repeating: UInt8(round), count: 100)) }
                batch.setSchema(type: "T", schema: [UInt8(round)])
                batch.setMetadata(key: "round", value: [UInt8(round)])
            })
        }
        let before = try StoreState(engine.snapshot())
        let stats = engine.statistics
        #expect(stats.deadBytes > stats.liveBytes * 10)
        try engine.compact()
        let after = engine.statistics
        #expect(after.fileSize < stats.fileSize / 10)
        #expect(after.deadBytes < 200)
        #expect(after.lastSequence == 20)
        #expect(after.compactions == 1)
        #expect(after.objectCounts == ["T": 50])
        #expect(try StoreState(engine.snapshot()) == before)
        #expect(try engine.commit(Self.batch { $0.delete(type: "T", key: .integer(0)) }) == 21)
        try engine.close()
        var expected = before
        expected.objects["T"]?[.integer(0)] = nil
        expected.sequence = 21
        #expect(try openState(path, encrypting(fastConfiguration(), encrypted)) == expected)
        #expect(try verifyStoreFile(at: path, encryption: encrypted ? .key(testEncryptionKey) : nil).isIntact)
    }

    @Test(arguments: [false, true]) func compactingAnEmptiedStoreKeepsTheSequence(encrypted: Bool) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("empty.store")
        let engine = try StorageEngine(path: path, configuration: encrypting(fastConfiguration(), encrypted))
        try engine.commit(Self.batch { $0.put(type: "T", key: .integer(1), value: [1]) })
        try engine.commit(Self.batch { $0.deleteAll(type: "T") })
        try engine.compact()
        try engine.close()
        #expect(try openState(path, encrypting(fastConfiguration(), encrypted)).sequence == 2)
    }

    @Test(arguments: [false, true]) func aFullDiskDuringCompactionKeepsThePreviousFile(encrypted: Bool) throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjection()
        let path = directory.file("full.store")
        let engine = try StorageEngine(path: path, configuration: encrypting(fastConfiguration(), encrypted), faults: faults)
        try engine.commit(Self.batch { $0.put(type: "T", key: .integer(1), value: [1]) })
        try engine.commit(Self.batch { $0.put(type: "T", key: .integer(1), value: [2]) })
        let sizeBefore = engine.statistics.fileSize
        faults.fail(.write, with: ENOSPC)
        let error = #expect(throws: StorageError.self) { try engine.compact() }
        // No commit was involved: the message must not claim one was rolled back.
        #expect(error?.description == "The disk holding '\(path)' is full, so the write that needed the space failed and left the store as it was.")
        #expect(engine.statistics.fileSize == sizeBefore)
        #expect(engine.statistics.compactions == 0)
        #expect(try engine.snapshot().value(type: "T", key: .integer(1)) == [2])
        #expect(!FileManager.default.fileExists(atPath: path + ".compact-tmp"))
        try engine.close()
        #expect(try openState(path, encrypting(fastConfiguration(), encrypted)).objects["T"] == [.integer(1): [2]])
    }

    @Test func automaticCompactionRunsWhenDeadBytesCrossTheThreshold() throws {
        let engine = StorageEngine(inMemoryWith: EngineConfiguration(
            autoCompaction: .whenDeadBytesExceed(ratio: 0.5, minimumFileSize: 10_000)))
        for round in 0..<100 {
            try engine.commit(Self.batch { $0.put(type: "T", key: .integer(1), value: [UInt8](repeating: UInt8(round), count: 500)) })
        }
        let stats = engine.statistics
        #expect(stats.compactions > 0)
        #expect(stats.fileSize < 12_000)
        #expect(stats.lastAutoCompactionError == nil)
        #expect(try engine.snapshot().value(type: "T", key: .integer(1)) == [UInt8](repeating: 99, count: 500))
    }

    @Test(arguments: [false, true]) func valuesLongerThanThePackedLengthRoundTrip(encrypted: Bool) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("large.store")
        let engine = try StorageEngine(path: path, configuration: encrypting(fastConfiguration(), encrypted))
        let large = (0..<(17 << 20)).map { UInt8(truncatingIfNeeded: $0 >> 8) }
        try engine.commit(Self.batch {
            $0.put(type: "Blob", key: .bytes([1]), value: large)
            $0.put(type: "Blob", key: .bytes([2]), value: [2])
        })
        #expect(try engine.snapshot().value(type: "Blob", key: .bytes([1])) == large)
        try engine.compact()
        #expect(try engine.snapshot().value(type: "Blob", key: .bytes([1])) == large)
        try engine.close()
        let reopened = try StorageEngine(path: path, configuration: encrypting(fastConfiguration(), encrypted))
        #expect(try reopened.snapshot().value(type: "Blob", key: .bytes([1])) == large)
        try reopened.commit(Self.batch { $0.delete(type: "Blob", key: .bytes([1])) })
        #expect(reopened.statistics.liveBytes < 6_000, "the small value, and the key run and checkpoint (with the checksums of the 17 MiB it covers, 4 bytes per 16 KiB) the compaction wrote")
        try reopened.close()
    }

    @Test func statisticsDescribeTheStore() throws {
        let engine = StorageEngine(inMemoryWith: EngineConfiguration())
        try engine.commit(Self.batch {
            $0.put(type: "A", key: .integer(1), value: [1, 2, 3])
            $0.put(type: "B", key: .string("x"), value: [])
        })
        let stats = engine.statistics
        #expect(stats.formatVersion == LogHeader.currentVersion)
        #expect(stats.lastSequence == 1)
        #expect(stats.objectCounts == ["A": 1, "B": 1])
        #expect(stats.fileSize == stats.liveBytes + stats.deadBytes + LogHeader().unitsStart)
    }
}
