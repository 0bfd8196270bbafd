import NIOCore
import PostgresNIO

/// A statement sent on a connection that has closed, which was not sent: see
/// ``PostgresNIO/PostgresConnection/rows(of:)``.
struct ConnectionClosed: Error, CustomStringConvertible {
    var description: String { "the connection was closed" }
}

extension PostgresConnection {
    /// Runs `query` and returns all its rows; throws ``ConnectionClosed`` at once when the
    /// connection has closed, and fails when it closes before the answer.
    ///
    /// Every statement of a leased connection goes through here, since postgres-nio answers a
    /// statement written after its connection closed neither with rows nor with an error: its
    /// handler has left the channel, so the write is dropped and the call waits forever. The
    /// check and the write run together on the connection's event loop, where the channel closes:
    /// a channel still open there still has its handler, which answers every statement it is
    /// given, with an error once it closes. So a call whose connection ``TimedLease`` closed (or
    /// the server dropped) ends, whatever statement it sends next.
    func rows(of query: PostgresQuery) async throws -> [PostgresRow] {
        try await sendIfOpen { self.query(query, logger: PostgresStore.logger).map(\.rows) }
    }

    /// Prepares `sql` as a named statement of this connection (the server infers its parameters'
    /// types), checked and sent in one step on the event loop as ``rows(of:)`` does.
    func prepared(_ sql: String) async throws -> PreparedQuery {
        try await sendIfOpen { self.prepare(query: sql) }
    }

    /// Runs the statement `prepared` on this connection with `values`, and returns all its rows;
    /// checked and sent in one step on the event loop as ``rows(of:)`` does.
    func rows(of prepared: PreparedQuery, values: [PostgresData]) async throws -> [PostgresRow] {
        try await sendIfOpen { prepared.execute(values) }
    }

    /// Calls `send` on the connection's event loop if the connection is open there, else fails
    /// with ``ConnectionClosed``: the check and the write in one step (``rows(of:)``).
    private func sendIfOpen<Value: Sendable>(_ send: @escaping @Sendable () -> EventLoopFuture<Value>) async throws -> Value {
        let eventLoop = eventLoop
        return try await eventLoop.flatSubmit { () -> EventLoopFuture<Value> in
            guard !self.isClosed else { return eventLoop.makeFailedFuture(ConnectionClosed()) }
            return send()
        }.get()
    }
}
