import NIOCore
import PostgresNIO
import Synchronization

/// The read statements a store prepared on each of its connections, so the server parses and
/// plans a statement once per connection rather than on every read (after five runs PostgreSQL
/// keeps a generic plan when it costs no more than the custom ones).
///
/// A statement is keyed by its shape: its text and the types its values are bound as (values are
/// always bound). A shape is prepared on a connection when it runs there a second time, so
/// statements run once take nothing, and at most ``capacity`` shapes per connection; the others
/// run unprepared, as every statement of a write block, migration or count does.
///
/// postgres-nio prepares a statement without declaring its parameters' types (the server infers
/// them), while a value is sent in the binary form of the type it was bound as; so a new
/// statement is used only when `pg_prepared_statements` shows that the server inferred exactly
/// the bound types (a cast such as `$1::numeric(20,0)` of a value bound as text makes it infer
/// another), and is otherwise refused for the shape on that connection.
///
/// Every step is sent through the checked routes of `PostgresConnection+Rows.swift` (the
/// connection's open state checked and the statement written in one step on its event loop), so
/// a prepared read on a closed connection fails at once, as any statement does. A prepared
/// statement that fails (a table altered under it, so its plan no longer fits; the connection
/// closing) is refused for the shape on that connection and the read runs once more unprepared,
/// which gives the answer or the error it always gave. Statements live as long as their
/// connection: a new connection prepares its own, and entries of closed connections are dropped.
final class PreparedStatements: Sendable {
    /// How many shapes one connection prepares.
    static let capacity = 256
    /// How many shapes run once are remembered per connection: one that runs again is prepared.
    /// Emptied when full, so shapes that never repeat neither take statements nor grow it.
    static let onceRunCapacity = 1_024

    struct Shape: Hashable, Sendable {
        let sql: String
        let dataTypes: [PostgresDataType]
    }

    /// What a read does with its shape on a connection.
    private enum Step {
        case run(PreparedQuery)
        case prepare
        case runUnprepared
    }

    /// The statements of one connection.
    private struct Statements {
        weak var connection: PostgresConnection?
        var prepared: [Shape: PreparedQuery] = [:]
        var runOnce: Set<Shape> = []
        var refused: Set<Shape> = []
    }

    private struct State {
        var connections: [ObjectIdentifier: Statements] = [:]
        var preparedRuns = 0
        var refusals = 0
    }

    private let state = Mutex(State())

    /// How many reads ran a prepared statement, and how many shapes were refused: tests check that
    /// the reads they compare did run prepared.
    var counts: (preparedRuns: Int, refusals: Int) { state.withLock { ($0.preparedRuns, $0.refusals) } }

    /// How many statements `connection` has prepared.
    func preparedCount(on connection: PostgresConnection) -> Int {
        state.withLock { state in
            guard let statements = state.connections[ObjectIdentifier(connection)], statements.connection === connection else { return 0 }
            return statements.prepared.count
        }
    }

    /// The rows of `sql` with `parameters` on `connection`, through the statement prepared for
    /// their shape when there is one (or it is time to prepare it), otherwise unprepared.
    func rows(_ sql: String, _ parameters: SQLParameters, on connection: PostgresConnection) async throws -> [PostgresRow] {
        let shape = Shape(sql: sql, dataTypes: parameters.dataTypes)
        let prepared: PreparedQuery?
        switch step(for: shape, on: connection) {
        case .run(let query): prepared = query
        case .prepare: prepared = try await prepare(shape, on: connection)
        case .runUnprepared: prepared = nil
        }
        if let prepared {
            do {
                let rows = try await connection.rows(of: prepared, values: parameters.values)
                state.withLock { $0.preparedRuns += 1 }
                return rows
            } catch let error as ConnectionClosed {
                throw error
            } catch {
                refuse(shape, on: connection)
            }
        }
        return try await connection.rows(of: PostgresQuery(unsafeSQL: sql, binds: parameters.bindings))
    }

    /// Prepares `shape` on `connection` and keeps it when the server inferred the bound types;
    /// `nil` when it refused the statement or inferred others.
    private func prepare(_ shape: Shape, on connection: PostgresConnection) async throws -> PreparedQuery? {
        do {
            let prepared = try await connection.prepared(shape.sql)
            if shape.dataTypes.contains(where: { $0 != .null }) {
                let inferred = try await connection.rows(of: PostgresQuery(
                    unsafeSQL: """
                        SELECT parameter_types::oid[]::int8[] FROM pg_prepared_statements \
                        WHERE statement = $1 AND NOT from_sql ORDER BY prepare_time DESC LIMIT 1
                        """,
                    binds: { var binds = PostgresBindings(); binds.append(shape.sql); return binds }()))
                let types = try inferred.first?.decode([Int64].self)
                guard let types, types.count == shape.dataTypes.count,
                      zip(types, shape.dataTypes).allSatisfy({ $1 == .null || $0 == Int64($1.rawValue) }) else {
                    refuse(shape, on: connection)
                    return nil
                }
            }
            return state.withLock { state in
                let key = ObjectIdentifier(connection)
                guard state.connections[key]?.connection === connection else { return nil }
                state.connections[key]?.prepared[shape] = prepared
                return prepared
            }
        } catch let error as ConnectionClosed {
            throw error
        } catch {
            refuse(shape, on: connection)
            return nil
        }
    }

    /// What to do with `shape` on `connection`, noting its run.
    private func step(for shape: Shape, on connection: PostgresConnection) -> Step {
        state.withLock { state in
            let key = ObjectIdentifier(connection)
            if state.connections[key]?.connection !== connection {
                // A new connection (or one at the address of a connection gone): drop the
                // statements of connections that closed, which their prepared statements keep alive.
                state.connections = state.connections.filter { _, statements in
                    guard let connection = statements.connection else { return false }
                    return !connection.isClosed
                }
                state.connections[key] = Statements(connection: connection)
            }
            return Self.step(for: shape, in: &state.connections[key, default: Statements(connection: connection)])
        }
    }

    /// What to do with `shape` among a connection's `statements`: a shape is prepared on its second run.
    private static func step(for shape: Shape, in statements: inout Statements) -> Step {
        if let prepared = statements.prepared[shape] { return .run(prepared) }
        if statements.refused.contains(shape) || statements.prepared.count >= capacity { return .runUnprepared }
        if statements.runOnce.remove(shape) != nil { return .prepare }
        if statements.runOnce.count >= onceRunCapacity { statements.runOnce.removeAll(keepingCapacity: true) }
        statements.runOnce.insert(shape)
        return .runUnprepared
    }

    /// Stops preparing `shape` on `connection`: it runs unprepared there from now on.
    private func refuse(_ shape: Shape, on connection: PostgresConnection) {
        state.withLock { state in
            let key = ObjectIdentifier(connection)
            guard state.connections[key]?.connection === connection else { return }
            state.connections[key]?.prepared[shape] = nil
            state.connections[key]?.refused.insert(shape)
            state.refusals += 1
        }
    }
}
