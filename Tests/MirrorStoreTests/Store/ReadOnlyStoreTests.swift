import Foundation
import Testing
@testable import MigrationCrashChild
import MirrorStore
import MirrorStoreEngine
import TestSupport

/// Stores that read beside a writer (issue 28): `configuration.access = .readOnly`.
@Suite struct ReadOnlyStoreTests {
    typealias Tick = ReaderWorkload.Tick

    static func readerConfiguration(interval: Duration = .milliseconds(10)) -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.access = .readOnly
        configuration.refreshInterval = interval
        return configuration
    }

    @Test func aReaderSeesTheWritersCommitsOnRefresh() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("ticks.store")
        let writer = try Store(path: path, models: [Tick.self])
        try writer.write { try $0.add(Tick(identifier: 1, count: 1)) }
        let reader = try Store(path: path, models: [Tick.self], configuration: Self.readerConfiguration())
        let before = try reader.objects(Tick.self)
        #expect(try before.all() == [Tick(identifier: 1, count: 1)])
        #expect(try !reader.refresh())
        try writer.write { try $0.add(Tick(identifier: 2, count: 2)) }
        #expect(try reader.objects(Tick.self).count == 1, "nothing changes before a refresh")
        #expect(try reader.refresh())
        #expect(try reader.objects(Tick.self).all().map(\.count) == [1, 2])
        #expect(try reader.object(Tick.self, primaryKey: 2) == Tick(identifier: 2, count: 2))
        #expect(before.count == 1, "results made before keep their state")
        try writer.compact()
        try writer.write { try $0.add(Tick(identifier: 3, count: 3)) }
        #expect(try reader.refresh())
        #expect(try reader.objects(Tick.self).count == 3)
        #expect(try !writer.refresh(), "a writer sees its own commits")
        try writer.close()
        try reader.close()
    }

    @Test func aReaderRefusesWrites() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("refused.store")
        try Store(path: path, models: [Tick.self]).close()
        let reader = try Store(path: path, models: [Tick.self], configuration: Self.readerConfiguration())
        var ran = false
        #expect(throws: StorageError(.readOnly)) {
            try reader.write { _ in ran = true }
        }
        #expect(!ran, "the block of a write on a reader never runs")
        #expect(throws: StorageError(.readOnly)) { try reader.compact() }
        try reader.close()
        #expect(throws: StorageError(.closed)) { try reader.refresh() }
    }

    /// A reader opens a file it may not write in a folder it may not write, creating nothing.
    @Test func aReaderOpensAReadOnlyFile() throws {
        let directory = TemporaryDirectory()
        let folder = directory.file("sealed")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/ticks.store"
        let writer = try Store(path: path, models: [Tick.self])
        try writer.write { try $0.add(Tick(identifier: 1, count: 1)) }
        try writer.close()
        try FileManager.default.removeItem(atPath: path + ".lock")
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: folder)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder) }
        let reader = try Store(path: path, models: [Tick.self], configuration: Self.readerConfiguration())
        #expect(try reader.objects(Tick.self).all() == [Tick(identifier: 1, count: 1)])
        #expect(try !reader.refresh())
        try reader.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["ticks.store"])
    }

    /// Observers of a reader are woken by the writer's commits, within a few refresh intervals.
    @Test func observersOfAReaderSeeTheWritersCommits() async throws {
        let directory = TemporaryDirectory()
        let path = directory.file("observed.store")
        let writer = try Store(path: path, models: [Tick.self])
        try await writer.write { try $0.add(Tick(identifier: 1, count: 1)) }
        let reader = try Store(path: path, models: [Tick.self], configuration: Self.readerConfiguration())
        var changes = try reader.objects(Tick.self).changes.makeAsyncIterator()
        let first = try await changes.next()
        #expect(first?.results.count == 1)
        var objectChanges = try reader.changes(Tick.self, primaryKey: 1).makeAsyncIterator()
        let object = try await objectChanges.next()
        #expect(object == .some(Tick(identifier: 1, count: 1)))
        try await writer.write { try $0.add(Tick(identifier: 2, count: 2)) }
        let change = try #require(try await changes.next())
        #expect(change.insertions == [1])
        try await writer.write { try $0.add(Tick(identifier: 1, count: 10)) }
        let changed = try await objectChanges.next()
        #expect(changed == .some(Tick(identifier: 1, count: 10)))
        try writer.close()
        try reader.close()
    }

    /// A reader in another process observes a commit this process makes within a bounded delay.
    @Test func anObserverInAnotherProcessSeesACommit() throws {
        let child = try #require(childExecutableURL(named: "MigrationCrashChild"), "MigrationCrashChild must be built next to the tests")
        let directory = TemporaryDirectory()
        let path = directory.file("across.store")
        let writer = try Store(path: path, models: [Tick.self])
        try writer.write { try $0.add(Tick(identifier: 0, count: 0)) }
        let observer = try ChildProcess(executable: child, mode: "observe", store: path)
        _ = try #require(observer.waitForLine(startingWith: "ready"), "the observer did not start")
        let clock = ContinuousClock()
        var delays: [Duration] = []
        for count in 1...20 {
            let start = clock.now
            try writer.write { try $0.add(Tick(identifier: count, count: count)) }
            let line = observer.waitForLine(startingWith: "seen \(count)")
            #expect(line != nil, "commit \(count) was never observed")
            delays.append(clock.now - start)
        }
        observer.finish()
        #expect(observer.process.terminationStatus == 0)
        let slowest = try #require(delays.max())
        // A 5 ms refresh interval; the bound leaves room for a loaded machine.
        #expect(slowest < .seconds(3), "slowest \(slowest)")
        try writer.close()
    }
}
