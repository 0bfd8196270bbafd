import Foundation
import MirrorStore
@testable import MirrorStorePostgres
import Testing

extension ServerLossTests {
    /// A server that stops answering (its processes stopped with `SIGSTOP`, its connections left
    /// open, as a hung machine or a network that drops every packet leaves them): every kind of
    /// call fails with `.timedOut` within the settings' `callTimeout` (2 s here), closing the
    /// store returns, and nothing waits for the server to answer again. Nested in
    /// `ServerLossTests`, so the two servers of the tests' own do not run at once.
    @Suite("A server that stops answering")
    struct FrozenServerTests {
        /// The call's timeout, and room for a loaded machine.
        private static let limit: Duration = .seconds(6)

        /// Runs `call`, which must throw `PostgresStoreError.timedOut` within ``limit``. A call
        /// that has not ended after 30 s is left running and fails the test, rather than hanging it.
        private func expectTimedOut(_ what: String, _ call: @escaping @Sendable () async throws -> Void) async {
            let clock = ContinuousClock()
            let start = clock.now
            let outcome: Result<Void, any Error>
            do {
                outcome = try await withinAbandoning(30, what) {
                    do { try await call(); return .success(()) } catch { return .failure(error) }
                }
            } catch {
                Issue.record("\(what) did not end: \(error)")
                return
            }
            let elapsed = clock.now - start
            guard case .failure(let error) = outcome else {
                Issue.record("\(what) succeeded with the server stopped")
                return
            }
            guard let storeError = error as? PostgresStoreError, case .timedOut = storeError.kind else {
                Issue.record("\(what) threw \(error), not PostgresStoreError.timedOut")
                return
            }
            #expect(elapsed < Self.limit, "\(what) took \(elapsed)")
        }

        @Test func callsTimeOutAndCloseReturnsWhileTheServerStopsAnswering() async throws {
            let server = try ThrowawayServer()
            // Lets the server run again before stopping it, whatever the test does.
            defer { server.remove() }
            // Logging in to a stopped server gets no answer either: the call's timeout comes first.
            let settings = {
                var settings = server.settings
                settings.connectTimeout = .seconds(10)
                return settings
            }()
            // `observed` has an observation running when the server stops (its `LISTEN`
            // connection is open); `other` has none, so its observations must open one.
            let observed = try await PostgresStore.open(settings, models: [LossNote.self])
            let other = try await PostgresStore.open(settings, models: [LossNote.self])
            try await observed.write { try await $0.add(LossNote(id: 1, text: "before")) }
            _ = try await other.object(LossNote.self, primaryKey: 1)
            // Reads run again on the open connections, so the lookup and the query below run
            // prepared statements (`PreparedStatements`) on them when the server stops.
            for store in [observed, other] {
                for _ in 0..<5 {
                    _ = try await store.object(LossNote.self, primaryKey: 1)
                    _ = try await store.objects(LossNote.self).filter(#Predicate { $0.id > 0 }).all()
                }
                #expect(store.preparedStatements.counts.preparedRuns > 0)
            }
            let (started, start) = AsyncStream.makeStream(of: Void.self)
            let running = Task { () -> Int in
                var seen = 0
                for try await _ in try observed.objects(LossNote.self).changes {
                    seen += 1
                    start.yield()
                }
                return seen
            }
            defer { running.cancel() }
            _ = try await within(10, "the running observation's first element") { for await _ in started { return true }; return false }

            try server.freeze()
            // Twice each: the first calls are given the pool's open connections, whose statements
            // get no answer; later ones wait for connections that cannot log in.
            for round in 1...2 {
                for (name, store) in [("observed", observed), ("other", other)] {
                    await expectTimedOut("\(name): write \(round)") { try await store.write { try await $0.add(LossNote(id: 2, text: "lost")) } }
                    await expectTimedOut("\(name): lookup \(round)") { _ = try await store.object(LossNote.self, primaryKey: 1) }
                    await expectTimedOut("\(name): query \(round)") { _ = try await store.objects(LossNote.self).filter(#Predicate { $0.id > 0 }).all() }
                    await expectTimedOut("\(name): count \(round)") { _ = try await store.objects(LossNote.self).count() }
                    await expectTimedOut("\(name): results observation \(round)") {
                        var changes = try store.objects(LossNote.self).changes.makeAsyncIterator()
                        _ = try await changes.next()
                    }
                    await expectTimedOut("\(name): object observation \(round)") {
                        var changes = try store.changes(LossNote.self, primaryKey: 1).makeAsyncIterator()
                        _ = try await changes.next()
                    }
                }
            }

            // Closing returns with the server still stopped, and ends the running observation.
            for (name, store) in [("observed", observed), ("other", other)] {
                let clock = ContinuousClock()
                let begin = clock.now
                try await withinAbandoning(30, "\(name): close") { await store.close() }
                #expect(clock.now - begin < Self.limit, "\(name): close took \(clock.now - begin)")
            }
            let seen = try await withinAbandoning(10, "the running observation's end") {
                try await withTaskCancellationHandler { try await running.value } onCancel: { running.cancel() }
            }
            #expect(seen == 1)

            // Once it answers again, the write that timed out left nothing behind.
            try server.thaw()
            let reopened = try await withinAbandoning(30, "opening again") { try await PostgresStore.open(settings, models: [LossNote.self]) }
            #expect(try await reopened.objects(LossNote.self).all() == [LossNote(id: 1, text: "before")])
            await reopened.close()
        }
    }
}
