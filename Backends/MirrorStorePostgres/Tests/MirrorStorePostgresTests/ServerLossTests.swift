import Foundation
import MirrorStore
import MirrorStorePostgres
import Testing

struct LossNote: Persistable, Equatable {
    var id = 0
    var text = ""
    static var primaryKey: String? { "id" }
}

/// A server lost after the store opened: every call fails with a typed error within the
/// settings' `callTimeout` (2 s here) rather than waiting for the pool to reconnect, and the
/// store works again once the server is back.
@Suite("A server lost after opening", .serialized, .enabled(if: (try? ThrowawayServer.tools.get()) != nil, serverToolsMissing))
struct ServerLossTests {
    /// Runs `call`, which must throw a `PostgresStoreError` saying the server cannot be reached
    /// or did not answer, within 5 s (the 2 s timeout, and room for a loaded machine).
    private func expectLost(_ what: String, _ call: @escaping @Sendable () async throws -> Void) async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let outcome: Result<Void, any Error> = try await within(20, what) {
            do { try await call(); return .success(()) } catch { return .failure(error) }
        }
        let elapsed = clock.now - start
        guard case .failure(let error) = outcome else {
            Issue.record("\(what) succeeded with the server gone")
            return
        }
        let storeError = try #require(error as? PostgresStoreError, "\(what) threw \(error)")
        switch storeError.kind {
        case .connectionFailed, .timedOut: break
        default: Issue.record("\(what) threw \(storeError)")
        }
        #expect(elapsed < .seconds(5), "\(what) took \(elapsed)")
    }

    @Test func callsFailWithinTheTimeoutAndWorkAgainOnceTheServerIsBack() async throws {
        let server = try ThrowawayServer()
        defer { server.remove() }
        let settings = server.settings
        let store = try await PostgresStore.open(settings, models: [LossNote.self])
        try await store.write { try await $0.add(LossNote(id: 1, text: "before")) }
        let observation = Task { () -> Int in
            var seen = 0
            for try await _ in try store.objects(LossNote.self).changes { seen += 1 }
            return seen
        }
        try await Task.sleep(for: .milliseconds(300))

        try server.crash()
        // Twice each: the first calls find the pool's dead connections, later ones wait for new ones.
        for round in 1...2 {
            try await expectLost("write \(round)") { try await store.write { try await $0.add(LossNote(id: 2, text: "lost")) } }
            try await expectLost("lookup \(round)") { _ = try await store.object(LossNote.self, primaryKey: 1) }
            try await expectLost("query \(round)") { _ = try await store.objects(LossNote.self).filter(#Predicate { $0.id > 0 }).all() }
            try await expectLost("count \(round)") { _ = try await store.objects(LossNote.self).count() }
            try await expectLost("observation \(round)") {
                var changes = try store.objects(LossNote.self).changes.makeAsyncIterator()
                _ = try await changes.next()
            }
        }
        // The running observation learnt the server was lost.
        await #expect(throws: PostgresStoreError.self) { try await within(10, "the observation's end", task: observation) }

        try server.start()
        // The pool opens connections again after a backoff of its own.
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        var written = false
        while !written, clock.now < deadline {
            do {
                try await store.write { try await $0.add(LossNote(id: 3, text: "after")) }
                written = true
            } catch let error as PostgresStoreError {
                switch error.kind {
                case .connectionFailed, .timedOut: try await Task.sleep(for: .milliseconds(200))
                default: throw error
                }
            }
        }
        #expect(written, "no write succeeded within 30 s of the server's restart")
        #expect(try await store.object(LossNote.self, primaryKey: 3) == LossNote(id: 3, text: "after"))
        #expect(try await store.object(LossNote.self, primaryKey: 2) == nil)
        #expect(try await store.objects(LossNote.self).count() == 2)
        // Observation works again.
        let first = try await within(10, "an observation's first element") {
            var changes = try store.objects(LossNote.self).changes.makeAsyncIterator()
            return try await changes.next()?.results.count
        }
        #expect(first == 2)

        // Closing a store whose server is gone returns.
        try server.crash()
        let clock2 = ContinuousClock()
        let start = clock2.now
        try await within(10, "close") { await store.close() }
        #expect(clock2.now - start < .seconds(5))
    }
}
