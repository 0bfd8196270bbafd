import NIOCore
import PostgresNIO
import Synchronization

/// A pooled connection leased for one call that must end within a deadline, so that a server
/// lost after opening makes calls fail rather than wait.
///
/// postgres-nio's pool waits for a connection until it can open one again, and a statement sent
/// to a server that stopped answering waits for the operating system to give up on the socket.
/// So the lease is taken by a task of its own (`holder`), which hands the connection over and
/// keeps the lease until the call releases it, and a timer on an event loop ends the call when
/// the deadline passes: a call still waiting for a connection stops waiting (the holder is cancelled, which
/// ends the pool's wait), and a call holding one has it closed under it, which fails its
/// statement at once and, in a write block, rolls the transaction back on the server; the call's
/// later statements fail at once too, since they are sent through
/// ``PostgresNIO/PostgresConnection/rows(of:)``.
final class TimedLease: Sendable {
    /// The pool gave no connection: `underlying` says why.
    struct Failure: Error {
        let underlying: any Error
    }

    private enum Phase {
        /// Nothing handed over yet.
        case waiting
        /// The call uses `connection`; the holder waits in `hold(_:)` until it is released.
        case leased(PostgresConnection)
        /// The call is over: it released the connection, or stopped waiting for one.
        case ended
        /// The lease failed before a connection was handed over.
        case failed(any Error)
    }

    private struct State {
        var phase = Phase.waiting
        /// The call, waiting in `connection()`.
        var waiter: CheckedContinuation<PostgresConnection, any Error>?
        /// The holder, waiting in `hold(_:)` for the call to release the connection.
        var release: CheckedContinuation<Void, Never>?
        /// Whether the deadline passed before the call ended.
        var expired = false
    }

    private let state = Mutex(State())
    private let expiredError: @Sendable () -> any Error

    private init(expiredError: @escaping @Sendable () -> any Error) {
        self.expiredError = expiredError
    }

    /// Runs `body` with a pooled connection of `client`, and ends the call when `timeout`
    /// passes first: with `expiredError()` when no connection was handed over in time (nothing
    /// ran), and, when `body` was running, by closing its connection, which makes `body` throw;
    /// the caller then turns that into the timeout error (see ``hasExpired``).
    ///
    /// - Throws: ``Failure`` when the pool gives no connection (it shut down, or gave up opening
    ///   connections), `expiredError()`, `CancellationError` when the task is cancelled while it
    ///   waits; what `body` throws.
    static func run<Result>(
        on client: PostgresClient, timeout: Duration, expiredError: @escaping @Sendable () -> any Error,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection, TimedLease) async throws -> sending Result
    ) async throws -> sending Result {
        let lease = TimedLease(expiredError: expiredError)
        let holder = Task {
            do {
                // A connection closed under an earlier call may be handed out before the pool
                // learns it closed: the call gets another one, once the pool has let it go.
                while let closing = try await client.withConnection({ connection -> EventLoopFuture<Void>? in
                    guard !connection.isClosed else { return connection.closeFuture }
                    await lease.hold(connection)
                    return nil
                }) {
                    try? await closing.get()
                }
            } catch {
                lease.stopWaiting(Failure(underlying: error), becoming: .failed(Failure(underlying: error)))
            }
        }
        // The deadline is a task scheduled on an event loop rather than a sleeping `Task`: one
        // heap entry there, not a task and its thread hop per call.
        let timer = NIOSingletons.posixEventLoopGroup.any().scheduleTask(in: Self.timeAmount(timeout)) {
            lease.expire()
        }
        let connection: PostgresConnection
        do {
            connection = try await withTaskCancellationHandler {
                try await lease.connection()
            } onCancel: {
                lease.stopWaiting(CancellationError(), becoming: .ended)
            }
        } catch {
            timer.cancel()
            holder.cancel()
            throw error
        }
        defer {
            timer.cancel()
            lease.release()
        }
        return try await body(connection, lease)
    }

    /// `duration` in the event loop's unit, at most about 292 years.
    static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return .nanoseconds(0) }
        guard seconds < Int64.max / 1_000_000_000 - 1 else { return .nanoseconds(.max) }
        return .nanoseconds(max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
    }

    /// Whether the deadline passed before the call ended (a connection it held was closed).
    var hasExpired: Bool { state.withLock { $0.expired } }

    /// The connection the holder hands over; waits for it.
    private func connection() async throws -> PostgresConnection {
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<PostgresConnection, any Error>) in
            let ready: Result<PostgresConnection, any Error>? = state.withLock { state in
                if state.expired { return .failure(expiredError()) }
                switch state.phase {
                case .waiting:
                    state.waiter = waiter
                    return nil
                case .leased(let connection): return .success(connection)
                case .failed(let error): return .failure(error)
                case .ended: return .failure(CancellationError())
                }
            }
            if let ready { waiter.resume(with: ready) }
        }
    }

    /// In the holder, with the pool's connection: hands it over and keeps the lease until the
    /// call releases it (returns at once when the call no longer waits for it).
    private func hold(_ connection: PostgresConnection) async {
        await withCheckedContinuation { (release: CheckedContinuation<Void, Never>) in
            let handOver: (waiter: CheckedContinuation<PostgresConnection, any Error>?, keep: Bool) = state.withLock { state in
                guard case .waiting = state.phase, !state.expired else { return (nil, false) }
                state.phase = .leased(connection)
                state.release = release
                defer { state.waiter = nil }
                return (state.waiter, true)
            }
            handOver.waiter?.resume(returning: connection)
            if !handOver.keep { release.resume() }
        }
    }

    /// The call no longer waits for a connection: the pool gave none (`.failed`), or the call
    /// was cancelled (`.ended`).
    private func stopWaiting(_ error: any Error, becoming next: Phase) {
        let waiter: CheckedContinuation<PostgresConnection, any Error>?? = state.withLock { state in
            guard case .waiting = state.phase, !state.expired else { return nil }
            state.phase = next
            defer { state.waiter = nil }
            return .some(state.waiter)
        }
        if case .some(.some(let waiter)) = waiter { waiter.resume(throwing: error) }
    }

    /// The timer: the deadline passed.
    private func expire() {
        let (waiter, connection): (CheckedContinuation<PostgresConnection, any Error>?, PostgresConnection?) = state.withLock { state in
            switch state.phase {
            case .waiting:
                state.expired = true
                defer { state.waiter = nil }
                return (state.waiter, nil)
            case .leased(let connection):
                state.expired = true
                return (nil, connection)
            case .ended, .failed: return (nil, nil)
            }
        }
        waiter?.resume(throwing: expiredError())
        // Closing the channel fails its statements at once, whatever the server does; the holder
        // still keeps the lease until the call releases it, and the pool then drops the connection.
        if let connection { let _: EventLoopFuture<Void> = connection.close() }
    }

    /// The call is over: the holder returns the connection to the pool.
    private func release() {
        let release: CheckedContinuation<Void, Never>? = state.withLock { state in
            state.phase = .ended
            defer { state.release = nil }
            return state.release
        }
        release?.resume()
    }
}
