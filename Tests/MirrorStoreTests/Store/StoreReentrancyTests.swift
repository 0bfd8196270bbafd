import Dispatch
import Foundation
import Testing
import TestSupport
@testable import MirrorStore
import MirrorStoreEngine

/// A write block that calls back into its own store must fail at once, never hang; a write from
/// another thread must still wait its turn.
@Suite("Store re-entrancy")
struct StoreReentrancyTests {
    enum Outcome: Equatable, Sendable {
        case returned
        case threw(String)
        case timedOut
    }

    /// Runs `body` on a thread of its own and waits for it at most `seconds`, so a deadlock fails
    /// the test instead of hanging the suite (a stuck thread is abandoned).
    private func run(within seconds: Double = 10, _ body: @escaping @Sendable () throws -> Void) -> Outcome {
        let outcome = Lock<Outcome>(.timedOut)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            do {
                try body()
                outcome.withLock { $0 = .returned }
            } catch {
                outcome.withLock { $0 = .threw("\(error)") }
            }
            done.signal()
        }
        thread.start()
        guard done.wait(timeout: .now() + seconds) == .success else { return .timedOut }
        return outcome.withLock { $0 }
    }

    private static func message(_ operation: String) -> String {
        "\(operation) was called inside a write block of the same store, where it would wait forever for that block to end; use the block's transaction, or call it after the block returns."
    }

    @Test("a write inside a write of the same store throws at once; the outer block goes on")
    func nestedWrite() throws {
        let store = try Store.inMemory(models: [Hero.self])
        let nested = Lock<String?>(nil)
        let outcome = run {
            try store.write { transaction in
                try transaction.add(Hero.ironMan())
                do {
                    try store.write { try $0.delete(Hero.self, primaryKey: 1455) }
                } catch let error as StoreError {
                    nested.withLock { $0 = error.description }
                    #expect(error == StoreError(.calledInsideWrite(operation: "write(_:)")))
                }
            }
        }
        #expect(outcome == .returned)
        #expect(nested.withLock { $0 } == Self.message("write(_:)"))
        #expect(try store.object(Hero.self, primaryKey: 1455)?.name == "Iron Man", "the outer transaction committed")
    }

    @Test("an uncaught nested write error rolls the outer transaction back")
    func nestedWriteUncaught() throws {
        let store = try Store.inMemory(models: [Hero.self])
        let outcome = run {
            try store.write { transaction in
                try transaction.add(Hero.ironMan())
                try store.write { _ in }
            }
        }
        #expect(outcome == .threw(Self.message("write(_:)")))
        #expect(try store.object(Hero.self, primaryKey: 1455) == nil)
        try store.write { try $0.add(Hero.ironMan()) }
        #expect(try store.objects(Hero.self).count == 1, "the store is usable afterwards")
    }

    @Test("compact() and close() inside a write block throw instead of hanging")
    func compactAndCloseInsideWrite() throws {
        try withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/nested.store", models: [Hero.self])
            #expect(run { try store.write { _ in try store.compact() } } == .threw(Self.message("compact()")))
            #expect(run { try store.write { _ in try store.close() } } == .threw(Self.message("close()")))
            #expect(run { try store.compact(); try store.close() } == .returned, "both work outside the block")
        }
    }

    @Test("a write block may write to another store")
    func otherStoreInsideWrite() throws {
        let first = try Store.inMemory(models: [Hero.self])
        let second = try Store.inMemory(models: [Hero.self])
        let outcome = run {
            try first.write { outer in
                try outer.add(Hero.ironMan())
                try second.write { try $0.add(Hero.ironMan()) }
            }
        }
        #expect(outcome == .returned)
        #expect(try first.objects(Hero.self).count == 1)
        #expect(try second.objects(Hero.self).count == 1)
    }

    @Test("writes started inside a block on another thread or task wait for it, then commit")
    func otherThreadWaits() async throws {
        let store = try Store.inMemory(models: [Hero.self])
        let innerDone = DispatchSemaphore(value: 0)
        let innerErrors = Lock<[String]>([])
        let ranBeforeOuterEnded = Lock(false)
        let outerEnded = Lock(false)
        @Sendable func innerWrite(_ identifier: Int) {
            do {
                try store.write { transaction in
                    if !outerEnded.withLock({ $0 }) { ranBeforeOuterEnded.withLock { $0 = true } }
                    let hero = Hero.ironMan()
                    hero.identifier = identifier
                    try transaction.add(hero)
                }
            } catch {
                innerErrors.withLock { $0.append("\(error)") }
            }
            innerDone.signal()
        }
        let task = Lock<Task<Void, Never>?>(nil)
        let outcome = run {
            try store.write { transaction in
                try transaction.add(Hero.ironMan())
                Thread { innerWrite(1) }.start()
                // A task created here would inherit task-local values; it must still just wait.
                task.withLock { $0 = Task { innerWrite(2) } }
                // Give both a chance to reach the lock while this block still holds it.
                Thread.sleep(forTimeInterval: 0.2)
                outerEnded.withLock { $0 = true }
            }
        }
        #expect(outcome == .returned)
        // Awaited, not waited for: blocking here could hold the pool thread the task needs.
        await task.withLock { $0 }?.value
        #expect(innerDone.wait(timeout: .now() + 10) == .success)
        #expect(innerDone.wait(timeout: .now() + 10) == .success)
        #expect(innerErrors.withLock { $0 } == [])
        #expect(!ranBeforeOuterEnded.withLock { $0 }, "inner writes ran only after the outer block")
        #expect(try store.objects(Hero.self).count == 3)
    }
}
