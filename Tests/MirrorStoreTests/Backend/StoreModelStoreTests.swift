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
}
