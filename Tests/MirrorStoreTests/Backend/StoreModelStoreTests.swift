// What Store's ModelStore conformance adds to the shared behaviour suite: its async write block
// holds the store's write lock across awaits (Sources/MirrorStore/Async/HeldWrite.swift).
import Foundation
import MirrorStore
import Testing
import TestSupport

private struct HeldCounter: Persistable, Equatable {
    var id = 0
    var value = 0
    static var primaryKey: String? { "id" }
}

@Suite("Store as a ModelStore")
struct StoreModelStoreTests {
    @Test func asyncBlocksThatAwaitMidwayRunOneAtATimeBesideSynchronousWrites() async throws {
        let store = try Store.inMemory(models: [HeldCounter.self])
        try await store.write { try $0.add(HeldCounter(id: 1, value: 0)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await store.write(isolation: nil) { transaction in
                        let read = try await transaction.object(HeldCounter.self, primaryKey: 1)?.value ?? -1
                        // Another block that ran now would read the same value and lose an increment.
                        await Task.yield()
                        try await transaction.add(HeldCounter(id: 1, value: read + 1))
                    }
                }
            }
            // Synchronous writes meanwhile, from a thread of their own (not the dispatch pool, which
            // grows slowly when many of its threads wait for the lock).
            group.addTask {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    Thread {
                        continuation.resume(with: Result {
                            for _ in 0..<20 {
                                try store.write { transaction in
                                    _ = try transaction.update(HeldCounter.self, primaryKey: 1) { $0.value += 1 }
                                }
                            }
                        })
                    }.start()
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.object(HeldCounter.self, primaryKey: 1)?.value == 40)
    }

    @Test func aBlockThatWritesNothingReturnsItsValueAndAFailedStartRunsNoBlock() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/counters.store"
            let writer = try Store(path: path, models: [HeldCounter.self])
            let value = try await writer.write(isolation: nil) { transaction in
                try await transaction.object(HeldCounter.self, primaryKey: 1)?.value ?? 7
            }
            #expect(value == 7)
            try writer.close()

            var configuration = Store.Configuration()
            configuration.access = .readOnly
            let reader = try Store(path: path, models: [HeldCounter.self], configuration: configuration)
            _ = await confirmation(expectedCount: 0) { blockRan in
                await #expect(throws: StorageError.self) {
                    try await reader.write(isolation: nil) { _ in blockRan() }
                }
            }
            try reader.close()
        }
    }

    @Test func aLimitedQueryChangesOnlyForItsFirstObjects() async throws {
        let store = try Store.inMemory(models: [HeldCounter.self])
        try await store.write { transaction in
            for id in 1...3 { try transaction.add(HeldCounter(id: id, value: 0)) }
        }
        let query = ModelQuery(HeldCounter.self).sorted(using: SortDescriptor(\.id)).prefix(2)
        var changes = try store.changes(query).makeAsyncIterator()
        let first = try #require(try await changes.next())
        #expect(first.models.map(\.id) == [1, 2] && first.insertions.isEmpty)

        // Past the first two: no element. Then a modification among them: that alone.
        try await store.write { try $0.add(HeldCounter(id: 4, value: 0)) }
        try await store.write { try $0.update(HeldCounter.self, primaryKey: 2) { $0.value = 9 } }
        let modified = try #require(try await changes.next())
        #expect(modified.models.map(\.value) == [0, 9])
        #expect(modified.modifications == [1] && modified.insertions.isEmpty && modified.deletions.isEmpty)

        // A new first object: the whole window changes.
        try await store.write { try $0.add(HeldCounter(id: 0, value: 0)) }
        let moved = try #require(try await changes.next())
        #expect(moved.models.map(\.id) == [0, 1])
        #expect(moved.deletions == [0, 1] && moved.insertions == [0, 1] && moved.modifications.isEmpty)
    }
}
