import Dispatch
import Foundation
import Testing
import TestSupport
@testable import MirrorStore
import MirrorStoreEngine

/// A member whose email no two members share, for commits the engine refuses.
private struct Subscriber: Persistable, Sendable {
    var identifier = 0
    var email = ""
    var visits = 0
    static var primaryKey: String? { "identifier" }
    static var uniqueProperties: [String] { ["email"] }

    static func make(_ identifier: Int, _ email: String) -> Subscriber {
        var subscriber = Subscriber()
        subscriber.identifier = identifier
        subscriber.email = email
        return subscriber
    }
}

/// Write blocks that start while earlier commits are still syncing read those commits' changes,
/// and the commits share syncs; nothing acknowledged is lost and nothing refused leaks.
@Suite("Group commit")
struct StoreGroupCommitTests {
    static func increment(_ transaction: WriteTransaction) throws {
        var counter = try transaction.object(Counter.self, primaryKey: UInt8(0)) ?? Counter()

        counter.count += 1
        try transaction.add(counter)
    }

    @Test("blocks staged behind commits in flight read their changes, and one sync serves them all")
    func stagedBlocksReadInFlightChanges() throws {
        try withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/staged.store", models: [Counter.self])
            let syncsBefore = store.statistics.commitSyncs
            // Nobody waits until all three are staged: the second and third run on the changes of
            // commits not yet written.
            let staged = try (0..<3).map { _ in try store.stage(Self.increment) }
            #expect(try store.objects(Counter.self).count == 0, "readers see only durable commits")
            for write in staged.reversed() { try store.waitForCommit(write.commit) }
            #expect(try store.object(Counter.self, primaryKey: UInt8(0))?.count == 3, "no increment is lost")
            #expect(store.statistics.commitSyncs == syncsBefore + 1)
            #expect(store.statistics.lastSequence >= 3)
            try store.close()
        }
    }

    @Test("a block staged on a commit that fails fails too, and writes nothing")
    func blocksBuiltOnARefusedCommitFail() throws {
        let store = try Store.inMemory(models: [Subscriber.self])
        try store.write { try $0.add(Subscriber.make(1, "ada@example.com")) }
        let clash = try store.stage { try $0.add(Subscriber.make(2, "ada@example.com")) }
        let update = try store.stage { transaction in
            // Reads the clashing subscriber, which is not durable yet.
            try #require(try transaction.update(Subscriber.self, primaryKey: 2, set: \.visits, to: 5) != nil)
        }
        let readOnly = try store.stage { try $0.object(Subscriber.self, primaryKey: 2)?.visits }
        #expect(readOnly.result == 5)
        let refused = #expect(throws: StoreError.self) { try store.waitForCommit(clash.commit) }
        #expect(refused?.kind == .uniqueViolation(typeName: "Subscriber", property: "email", value: "\"ada@example.com\""))
        #expect(throws: StorageError(.precedingCommitFailed)) { try store.waitForCommit(update.commit) }
        #expect(throws: StorageError(.precedingCommitFailed)) { try store.waitForCommit(readOnly.commit) }
        #expect(try store.objects(Subscriber.self).all().map(\.identifier) == [1])
        // A block that starts after the failure no longer sees it.
        #expect(try store.write { try $0.object(Subscriber.self, primaryKey: 2) } == nil)
    }

    @Test("deletions and queries in a block see the commits in flight")
    func queriesSeeInFlightChanges() throws {
        let store = try Store.inMemory(models: [Subscriber.self])
        try store.write { transaction in
            for identifier in 1...4 { try transaction.add(Subscriber.make(identifier, "s\(identifier)@example.com")) }
        }
        let clear = try store.stage { transaction in
            try transaction.deleteAll(Subscriber.self)
            try transaction.add(Subscriber.make(10, "ten@example.com"))
            try transaction.add(Subscriber.make(11, "eleven@example.com"))
        }
        let deleteOne = try store.stage { transaction in
            try #require(try transaction.object(Subscriber.self, primaryKey: 1) == nil)
            return try transaction.delete(Subscriber.self, where: #Predicate { $0.email == "ten@example.com" })
        }
        #expect(deleteOne.result == 1)
        let survivors = try store.stage { transaction in
            try transaction.delete(Subscriber.self, where: #Predicate { $0.identifier > 0 })
        }
        #expect(survivors.result == 1, "only subscriber 11 is left by then")
        for commit in [clear.commit, deleteOne.commit, survivors.commit] { try store.waitForCommit(commit) }
        #expect(try store.objects(Subscriber.self).count == 0)
    }

    @Test("16 threads incrementing one durable counter lose no increment")
    func threadsLoseNoIncrement() throws {
        try withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/threads.store", models: [Counter.self])
            let failures = Lock<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 16) { _ in
                for _ in 0..<25 {
                    do { try store.write(Self.increment) } catch { failures.withLock { $0.append("\(error)") } }
                }
            }
            #expect(failures.withLock { $0 } == [])
            try store.close()
            let reopened = try Store(path: directory + "/threads.store", models: [Counter.self])
            #expect(try reopened.object(Counter.self, primaryKey: UInt8(0))?.count == 400)
            try reopened.close()
        }
    }

    @Test("16 tasks incrementing one durable counter with async writes lose no increment")
    func tasksLoseNoIncrement() async throws {
        try await withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/tasks.store", models: [Counter.self])
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<16 {
                    group.addTask {
                        for _ in 0..<25 { try await store.write(Self.increment) }
                    }
                }
                try await group.waitForAll()
            }
            let count = try store.object(Counter.self, primaryKey: UInt8(0))?.count
            #expect(count == 400)
            try store.close()
        }
    }
}
