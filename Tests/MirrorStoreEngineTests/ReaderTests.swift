import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// Readers beside a writer (issue 28): an engine opened with `readsBesideWriter` takes no lock,
/// writes nothing, and sees newer commits whole on `refresh()`.
@Suite struct ReaderTests {
    static var readerConfiguration: EngineConfiguration {
        var configuration = EngineConfiguration()
        configuration.readsBesideWriter = true
        return configuration
    }

    static func pair(_ n: Int) -> WriteBatch {
        var batch = WriteBatch()
        batch.put(type: "Pair", key: .integer(0), value: Array("a\(n)".utf8))
        batch.put(type: "Pair", key: .integer(1), value: Array("b\(n)".utf8))
        batch.put(type: "Item", key: .integer(Int64(n)), value: Array(repeating: UInt8(n % 251), count: 40))
        return batch
    }

    /// The pair a snapshot shows, checked to be one commit's.
    static func pairNumber(_ snapshot: EngineSnapshot) throws -> Int? {
        guard let a = try snapshot.value(type: "Pair", key: .integer(0)),
              let b = try snapshot.value(type: "Pair", key: .integer(1)) else { return nil }
        let first = Int(String(decoding: a.dropFirst(), as: UTF8.self))
        let second = Int(String(decoding: b.dropFirst(), as: UTF8.self))
        #expect(first == second, "a torn pair: \(String(decoding: a, as: UTF8.self)) and \(String(decoding: b, as: UTF8.self))")
        return first
    }

    static func keys(_ index: IndexSnapshot, _ byte: Int64) throws -> [StorageKey] {
        try index.objects(from: IndexBound(.integer(byte), inclusive: true), to: IndexBound(.integer(byte), inclusive: true))
    }

    @Test func aRefreshShowsNewCommitsWhole() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("readers.store")
        let writer = try StorageEngine(path: path)
        try writer.commit(Self.pair(1))
        let reader = try StorageEngine(path: path, configuration: Self.readerConfiguration)
        #expect(try Self.pairNumber(reader.snapshot()) == 1)
        #expect(try reader.refresh() == RefreshOutcome(previousSequence: 1, sequence: 1, writtenTypes: [], reopened: false))
        let before = reader.snapshot()
        try writer.commit(Self.pair(2))
        try writer.commit(Self.pair(3))
        #expect(try Self.pairNumber(reader.snapshot()) == 1, "nothing changes before a refresh")
        let outcome = try reader.refresh()
        #expect(outcome == RefreshOutcome(previousSequence: 1, sequence: 3, writtenTypes: ["Pair", "Item"], reopened: false))
        #expect(outcome.hasNewCommits)
        #expect(try Self.pairNumber(reader.snapshot()) == 3)
        #expect(reader.snapshot().count(type: "Item") == 3)
        #expect(try Self.pairNumber(before) == 1, "a snapshot keeps its state")
        try writer.close()
        try reader.close()
        #expect(throws: StorageError(.closed)) { try reader.refresh() }
    }

    /// Bytes of a unit being appended are not there yet: a refresh stops before them, then reads
    /// the unit once it is whole. A tail a new writer cuts off (a torn commit) is never read.
    @Test func aRefreshReadsNothingTorn() throws {
        let directory = TemporaryDirectory()
        let source = directory.file("source.store")
        let writer = try StorageEngine(path: source, configuration: EngineConfiguration(autoCompaction: .disabled))
        for n in 1...3 { try writer.commit(Self.pair(n)) }
        let three = try Data(contentsOf: URL(fileURLWithPath: source))
        try writer.commit(Self.pair(4))
        try writer.close()
        let four = try Data(contentsOf: URL(fileURLWithPath: source))
        let unit = four[three.count...]
        #expect(unit.count > 32)

        let path = directory.file("followed.store")
        try three.write(to: URL(fileURLWithPath: path))
        let reader = try StorageEngine(path: path, configuration: Self.readerConfiguration)
        #expect(try Self.pairNumber(reader.snapshot()) == 3)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        for cut in [1, 8, 16, 17, unit.count / 2, unit.count - 1] {
            try handle.truncate(atOffset: UInt64(three.count))
            try handle.seekToEnd()
            try handle.write(contentsOf: unit.prefix(cut))
            #expect(try !reader.refresh().hasNewCommits, "cut at \(cut)")
            #expect(try Self.pairNumber(reader.snapshot()) == 3)
        }
        // A new writer cuts the torn commit off and commits another in its place.
        try handle.close()
        let recovering = try StorageEngine(path: path, configuration: EngineConfiguration(autoCompaction: .disabled))
        #expect(recovering.recoveryReport != nil)
        try recovering.commit(Self.pair(40))
        let outcome = try reader.refresh()
        #expect(outcome.sequence == 4)
        #expect(try Self.pairNumber(reader.snapshot()) == 40)
        try recovering.commit(Self.pair(41))
        #expect(try reader.refresh().writtenTypes == ["Pair", "Item"])
        #expect(try Self.pairNumber(reader.snapshot()) == 41)
        try recovering.close()
    }

    /// Compaction renames a new file over the path: a reader keeps its view until it refreshes,
    /// then opens the new file; snapshots taken before still read the old one.
    @Test func aReaderMovesToTheCompactedFile() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("compacted.store")
        let writer = try StorageEngine(path: path, configuration: EngineConfiguration(autoCompaction: .disabled))
        for n in 1...20 { try writer.commit(Self.pair(n)) }
        let reader = try StorageEngine(path: path, configuration: Self.readerConfiguration)
        let old = reader.snapshot()
        try writer.compact()
        try writer.commit(Self.pair(21))
        #expect(try Self.pairNumber(reader.snapshot()) == 20)
        let outcome = try reader.refresh()
        #expect(outcome.reopened && outcome.writtenTypes == nil)
        #expect(outcome.sequence == 21)
        #expect(try Self.pairNumber(reader.snapshot()) == 21)
        #expect(reader.snapshot().count(type: "Item") == 21)
        #expect(try Self.pairNumber(old) == 20)
        #expect(try old.value(type: "Item", key: .integer(7)) == Array(repeating: 7, count: 40))
        try writer.commit(Self.pair(22))
        let next = try reader.refresh()
        #expect(!next.reopened && next.sequence == 22)
        try writer.close()
        try reader.close()
    }

    /// Checkpoints append key runs and rewrite a header slot in place: readers opened at any
    /// moment, and a reader refreshing through them, see the writer's state.
    @Test func readersFollowThroughCheckpoints() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("checkpoints.store")
        var configuration = EngineConfiguration(autoCompaction: .disabled)
        configuration.checkpointInterval = 300
        let writer = try StorageEngine(path: path, configuration: configuration)
        try writer.commit(Self.pair(0))
        let reader = try StorageEngine(path: path, configuration: Self.readerConfiguration)
        var generator = SeededRandom(seed: 28)
        for n in 1...120 {
            try writer.commit(Self.pair(n))
            if Int.random(in: 0..<4, using: &generator) == 0 {
                try reader.refresh()
                #expect(try Self.pairNumber(reader.snapshot()) == n)
            }
            if n % 40 == 0 {
                let opened = try StorageEngine(path: path, configuration: Self.readerConfiguration)
                #expect(try Self.pairNumber(opened.snapshot()) == n)
                #expect(opened.snapshot().count(type: "Item") == n + 1)
                try opened.close()
            }
        }
        #expect(writer.statistics.checkpoints > 3)
        try reader.refresh()
        #expect(try Set(reader.snapshot().keys(type: "Item")) == Set(writer.snapshot().keys(type: "Item")))
        #expect(reader.snapshot().count(type: "Item") == 121)
        #expect(try reader.snapshot().value(type: "Item", key: .integer(99)) == Array(repeating: 99, count: 40))
        try writer.close()
        try reader.close()
    }

    @Test func aReaderRefusesWritesAndCreatesNothing() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("quiet.store")
        let writer = try StorageEngine(path: path)
        try writer.commit(Self.pair(1))
        try writer.close()
        try FileManager.default.removeItem(atPath: path + ".lock")
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let reader = try StorageEngine(path: path, configuration: Self.readerConfiguration)
        #expect(throws: StorageError(.readOnly)) { try reader.commit(Self.pair(2)) }
        #expect(throws: StorageError(.readOnly)) { try reader.compact() }
        #expect(throws: StorageError(.readOnly)) { try reader.rewrite(indexes: []) { _, _ in } }
        try reader.refresh()
        try reader.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    /// A file the reader may not write, in a directory it may not write: it opens and follows.
    /// (Run as root, the modes restrict nothing; the reader still opens `O_RDONLY` and creates nothing.)
    @Test func aReaderNeedsNoWritePermission() throws {
        let directory = TemporaryDirectory()
        let folder = directory.file("sealed")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/sealed.store"
        let writer = try StorageEngine(path: path)
        try writer.commit(Self.pair(1))
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: folder)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder) }
        let reader = try StorageEngine(path: path, configuration: Self.readerConfiguration)
        try writer.commit(Self.pair(2))
        #expect(try reader.refresh().sequence == 2)
        #expect(try Self.pairNumber(reader.snapshot()) == 2)
        try writer.close()
        try reader.close()

        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        let sealed = try StorageEngine(path: path, configuration: Self.readerConfiguration)
        #expect(try Self.pairNumber(sealed.snapshot()) == 2)
        #expect(try !sealed.refresh().hasNewCommits)
        try sealed.close()
    }

    /// A reader takes no lock: a writer opens beside it (in this process or another) and never
    /// waits, and a reader opens beside a writer another process holds.
    @Test func aReaderTakesNoLock() throws {
        let child = try #require(crashChildURL(), "EngineCrashChild must be built next to the tests")
        let directory = TemporaryDirectory()
        let path = directory.file("unlocked.store")
        let reader0 = try? StorageEngine(path: path, configuration: Self.readerConfiguration)
        #expect(reader0 == nil, "a reader creates no file")
        let holder = try ChildProcess(executable: child, mode: "hold", store: path)
        _ = try #require(holder.waitForLine(startingWith: "ready"))
        let reader = try StorageEngine(path: path, configuration: Self.readerConfiguration)
        #expect(reader.snapshot().sequence == 0)
        holder.finish()
        let writer = try StorageEngine(path: path)
        try writer.commit(Self.pair(5))
        #expect(try reader.refresh().reopened || reader.snapshot().sequence == 1)
        #expect(try Self.pairNumber(reader.snapshot()) == 5)
        try writer.close()
        try reader.close()
    }

    /// Secondary indexes defined on a reader follow the commits it refreshes to.
    @Test func secondaryIndexesFollowRefreshes() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("indexed.store")
        let writer = try StorageEngine(path: path, configuration: EngineConfiguration(autoCompaction: .disabled))
        try writer.commit(Self.pair(1))
        let reader = try StorageEngine(path: path, configuration: Self.readerConfiguration)
        let firstByte = IndexDefinition(name: "Item.first", typeName: "Item", isUnique: false) { value in
            [.integer(Int64(value.first ?? 0))]
        }
        try reader.defineIndexes([firstByte])
        try writer.commit(Self.pair(2))
        var batch = WriteBatch()
        batch.delete(type: "Item", key: .integer(1))
        try writer.commit(batch)
        try reader.refresh()
        let index = try #require(reader.snapshot().index(named: "Item.first"))
        #expect(try Self.keys(index, 2) == [.integer(2)])
        #expect(try Self.keys(index, 1).isEmpty)
        try writer.compact()
        try reader.refresh()
        let rebuilt = try #require(reader.snapshot().index(named: "Item.first"))
        #expect(try Self.keys(rebuilt, 2) == [.integer(2)])
        try writer.close()
        try reader.close()
    }
}
