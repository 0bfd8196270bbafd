import Foundation
import MirrorStore
@testable import MirrorStorePostgres
import PostgresNIO
import Testing

struct PreparedNote: Persistable, Equatable {
    var id = 0
    var group = 0
    var text = ""
    static var primaryKey: String? { "id" }
    static var indexedProperties: [String] { ["group"] }
}

extension ServerTests {
    /// Reads outside a write block run statements prepared once per connection and shape
    /// (`PreparedStatements`): they answer as unprepared ones do, on random data and predicates,
    /// after the table changed under them, and on a new connection; on a closed one they fail at once.
    @Suite("Prepared reads")
    struct PreparedReadTests {
        private static func connect() async throws -> PostgresConnection {
            let settings = try #require(serverSettings)
            return try await PostgresConnection.connect(
                configuration: PostgresConnection.Configuration(
                    host: settings.host, port: settings.port, username: settings.user, password: settings.password,
                    database: settings.database, tls: .disable),
                id: 1, logger: PostgresStore.logger)
        }

        /// Runs `body` with a connection of its own, closed however `body` ends.
        private static func withConnection<T>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
            let connection = try await connect()
            do {
                let result = try await body(connection)
                try await connection.close()
                return result
            } catch {
                try? await connection.close()
                throw error
            }
        }

        /// The first cell of each row, as an `Int`: read as sent (`PostgresCell.sentForm`).
        private static func integers(_ rows: [PostgresRow]) throws -> [Int] {
            try rows.map { row in try #require(row.first).sentForm.decode(Int.self) }
        }

        private static func parameters(_ value: Int64) -> SQLParameters {
            var parameters = SQLParameters()
            _ = parameters.add(value)
            return parameters
        }

        /// Every query of the query test's random predicates, run three times in a row (prepared
        /// from the second run), gives what `Array.filter` gives; lookups likewise.
        @Test func preparedReadsAnswerAsSwiftDoes() async throws {
            let store = try await emptyStore(models: [Item.self], clearing: [Item.self])
            var random = SeededRandom(seed: 3131)
            let items = QueryTests.items(&random)
            try await store.write { try await $0.add(contentsOf: items) }
            let before = store.preparedStatements.counts.preparedRuns
            for round in 0..<3 {
                for (name, predicate) in QueryTests.predicates(&random) {
                    let expected = try items.filter { try predicate.evaluate($0) }
                    for run in 0..<3 {
                        let found = try await store.objects(Item.self).filter(predicate).all()
                        #expect(found.map(\.id) == expected.map(\.id), "round \(round), run \(run), \(name)")
                        #expect(found.elementsEqual(expected) { $0.id == $1.id && $0.s == $1.s && $0.tags == $1.tags && $0.d == $1.d }, "\(name)")
                    }
                }
                for _ in 0..<20 {
                    let item = random.pick(items)
                    let found = try await store.object(Item.self, primaryKey: item.id)
                    #expect(found?.id == item.id && found?.s == item.s && found?.big == item.big, "lookup \(item.id)")
                }
                #expect(try await store.object(Item.self, primaryKey: 10_000) == nil)
            }
            #expect(store.preparedStatements.counts.preparedRuns - before > 100, "reads ran prepared")
            await store.close()
        }

        /// A shape whose parameter the server infers as another type than the one its value is
        /// bound as (a value bound as text, cast to `numeric`) is refused and runs unprepared.
        @Test func aShapeWhoseInferredTypesDifferRunsUnprepared() async throws {
            try await Self.withConnection { connection in
                let statements = PreparedStatements()
                var parameters = SQLParameters()
                let placeholder = try parameters.add(.uint(UInt64.max), type: .unsigned)
                for _ in 0..<3 {
                    let rows = try await statements.rows("SELECT (\(placeholder))::text", parameters, on: connection)
                    #expect(try rows.map { try #require($0.first).sentForm.decode(String.self) } == [String(UInt64.max)])
                }
                #expect(statements.counts == (preparedRuns: 0, refusals: 1))
                #expect(statements.preparedCount(on: connection) == 0)
                for _ in 0..<3 {
                    let rows = try await statements.rows("SELECT $1::int8 + 1", Self.parameters(41), on: connection)
                    #expect(try Self.integers(rows) == [42])
                }
                #expect(statements.counts == (preparedRuns: 2, refusals: 1))
                #expect(statements.preparedCount(on: connection) == 1)
            }
        }

        /// A prepared statement on a closed connection (and preparing one) throws at once, as an
        /// unprepared statement does, rather than waiting for an answer that never comes.
        @Test func aPreparedReadOnAClosedConnectionFailsAtOnce() async throws {
            let statements = PreparedStatements()
            let connection = try await Self.connect()
            let prepared: PreparedQuery
            do {
                for _ in 0..<3 {
                    let rows = try await statements.rows("SELECT $1::int8 * 2", Self.parameters(21), on: connection)
                    #expect(try Self.integers(rows) == [42])
                }
                #expect(statements.counts.preparedRuns == 2)
                prepared = try await connection.prepared("SELECT 1")
                #expect(try Self.integers(try await connection.rows(of: prepared, values: [])) == [1])
            } catch {
                try? await connection.close()
                throw error
            }
            try await connection.close()
            try await connection.closeFuture.get()
            let outcomes: [Result<Void, any Error>] = try await withinAbandoning(10, "prepared reads on a closed connection") {
                var outcomes: [Result<Void, any Error>] = []
                for call in [
                    { _ = try await statements.rows("SELECT $1::int8 * 2", Self.parameters(21), on: connection) },
                    { _ = try await connection.rows(of: prepared, values: []) },
                    { _ = try await connection.prepared("SELECT 2") },
                ] as [@Sendable () async throws -> Void] {
                    do { try await call(); outcomes.append(.success(())) } catch { outcomes.append(.failure(error)) }
                }
                return outcomes
            }
            for (index, outcome) in outcomes.enumerated() {
                guard case .failure(let error) = outcome else {
                    Issue.record("call \(index) on a closed connection succeeded")
                    continue
                }
                #expect(error is ConnectionClosed, "call \(index): \(error)")
            }
        }

        /// A connection that replaces a closed one prepares its own statements: the statements
        /// of the first are neither run on it nor kept once it closed.
        @Test func aNewConnectionPreparesItsOwnStatements() async throws {
            let statements = PreparedStatements()
            let first = try await Self.connect()
            try await Self.withConnection { second in
                do {
                    for _ in 0..<3 { _ = try await statements.rows("SELECT $1::int8 - 1", Self.parameters(43), on: first) }
                    #expect(statements.preparedCount(on: first) == 1)
                    try await first.close()
                } catch {
                    try? await first.close()
                    throw error
                }
                #expect(statements.preparedCount(on: second) == 0)
                for _ in 0..<3 {
                    let rows = try await statements.rows("SELECT $1::int8 - 1", Self.parameters(43), on: second)
                    #expect(try Self.integers(rows) == [42])
                }
                #expect(statements.preparedCount(on: second) == 1)
                #expect(statements.preparedCount(on: first) == 0, "the closed connection's statements are dropped")
                #expect(statements.counts == (preparedRuns: 4, refusals: 0))
            }
        }

        /// The table changing under prepared statements (a column added, as a migration by
        /// another process does; a column's type changed, so a statement's result no longer
        /// fits its plan) leaves reads answering as before.
        @Test func readsAnswerAfterTheTableChangesUnderThem() async throws {
            let store = try await emptyStore(models: [PreparedNote.self], clearing: [PreparedNote.self])
            let notes = (1...30).map { PreparedNote(id: $0, group: $0 % 3, text: "note \($0)") }
            try await store.write { try await $0.add(contentsOf: notes) }
            func check(_ when: String) async throws {
                for group in 0..<3 {
                    for _ in 0..<3 {
                        let found = try await store.objects(PreparedNote.self).filter(#Predicate { $0.group == group }).all()
                        #expect(found == notes.filter { $0.group == group }, "\(when), group \(group)")
                    }
                }
                for id in [1, 7, 30, 31] {
                    for _ in 0..<3 {
                        #expect(try await store.object(PreparedNote.self, primaryKey: id) == notes.first { $0.id == id }, "\(when), lookup \(id)")
                    }
                }
            }
            try await check("before")
            let runs = store.preparedStatements.counts.preparedRuns
            #expect(runs > 0)
            try await Self.withConnection { other in
                _ = try await other.rows(of: #"ALTER TABLE "PreparedNote" ADD COLUMN "extra" bigint"#)
                try await check("after a column was added")
                #expect(store.preparedStatements.counts.preparedRuns > runs)
                let refusals = store.preparedStatements.counts.refusals
                _ = try await other.rows(of: #"ALTER TABLE "PreparedNote" ALTER COLUMN "text" TYPE varchar(40)"#)
                try await check("after a column's type changed")
                #expect(store.preparedStatements.counts.refusals > refusals, "statements whose result changed were refused")
                _ = try await other.rows(of: #"ALTER TABLE "PreparedNote" ALTER COLUMN "text" TYPE text, DROP COLUMN "extra""#)
                try await check("after the table was changed back")
            }
            await store.close()
        }
    }
}
