import Foundation
import MirrorStore
@testable import MirrorStorePostgres
import PostgresNIO
import Testing

struct SlowNote: Persistable, Equatable {
    var id = 0
    var text = ""
    static var primaryKey: String? { "id" }
}

extension ServerTests {
    /// A statement sent on a connection that closed ends at once: postgres-nio never answers one
    /// written after its connection closed, which hung calls whose connection `TimedLease` closed.
    @Suite struct ClosedConnectionTests {
        @Test func aStatementOnAClosedConnectionFailsAtOnce() async throws {
            let settings = try #require(serverSettings)
            let connection = try await PostgresConnection.connect(
                configuration: PostgresConnection.Configuration(
                    host: settings.host, port: settings.port, username: settings.user, password: settings.password,
                    database: settings.database, tls: .disable),
                id: 1, logger: PostgresStore.logger)
            let rows = try await connection.rows(of: "SELECT 1")
            #expect(try rows.map { try $0.decode(Int.self) } == [1])
            try await connection.close()
            try await connection.closeFuture.get()
            let outcome: Result<[PostgresRow], any Error> = try await withinAbandoning(10, "a statement on a closed connection") {
                do { return .success(try await connection.rows(of: "SELECT 1")) } catch { return .failure(error) }
            }
            guard case .failure(let error) = outcome else {
                Issue.record("a statement on a closed connection returned rows")
                return
            }
            #expect(error is ConnectionClosed, "\(error)")
        }

        /// A write block whose own code outlasts `callTimeout` has its connection closed while it
        /// runs; its next statement, and the `ROLLBACK` after it, must not wait for an answer.
        @Test func aWriteBlockThatOutlastsTheTimeoutEndsWithTimedOutAndWritesNothing() async throws {
            var settings = try #require(serverSettings)
            settings.callTimeout = .seconds(1)
            let store = try await PostgresStore.open(settings, models: [SlowNote.self])
            try await store.write { try await $0.deleteAll(SlowNote.self) }
            let outcome: Result<Void, any Error> = try await withinAbandoning(20, "a write block that outlasts the timeout") {
                do {
                    try await store.write { transaction in
                        try await transaction.add(SlowNote(id: 1, text: "first"))
                        try await Task.sleep(for: .seconds(2))
                        try await transaction.add(SlowNote(id: 2, text: "second"))
                    }
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            guard case .failure(let error) = outcome else {
                Issue.record("the block committed after its timeout")
                await store.close()
                return
            }
            let storeError = try #require(error as? PostgresStoreError, "\(error)")
            guard case .timedOut = storeError.kind else {
                Issue.record("threw \(storeError), not .timedOut")
                await store.close()
                return
            }
            #expect(try await store.objects(SlowNote.self).count() == 0)
            await store.close()
        }
    }
}
