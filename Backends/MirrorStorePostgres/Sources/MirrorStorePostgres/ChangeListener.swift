import Foundation
import Logging
import PostgresNIO
import Synchronization

/// A store's one `LISTEN` connection, shared by all its observers: opened when the first observer
/// starts, closed when the last one stops or the store closes.
///
/// Each observer gets a stream that receives one element after each notification that may
/// concern it; notifications that arrive while the observer is busy coalesce into one element,
/// so a slow observer never makes memory grow.
final class ChangeListener: Sendable {
    /// One observer: which notices concern it, and where to say so.
    private struct Subscriber {
        let concerns: @Sendable (ChangeNotice) -> Bool
        let continuation: AsyncThrowingStream<Void, any Error>.Continuation
    }

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
        /// The task holding the connection, while some observer runs.
        var task: Task<Void, Never>?
        /// Counts the tasks started, so a stopping task's late news is ignored.
        var generation = 0
        var isListening = false
        /// Observers waiting for `LISTEN` to be in place, by id.
        var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
        var isClosed = false
        /// The error the last failed connection gave its observers, with the generation it ended:
        /// an observer it dropped before it started waiting throws it too.
        var failure: (generation: Int, error: PostgresStoreError)?
    }

    /// An observer's stream of "something that concerns you was committed".
    struct Subscription: Sendable {
        let stream: AsyncThrowingStream<Void, any Error>
    }

    private let state = Mutex(State())
    private let configuration: PostgresConnection.Configuration
    private let settings: PostgresSettings
    /// The channel the store's writes notify on.
    let channel: String

    init(settings: PostgresSettings, configuration: PostgresConnection.Configuration, channel: String) {
        self.settings = settings
        self.configuration = configuration
        self.channel = channel
    }

    /// The channel of the store's tables in `schema`: `mirrorstore_changes_public` for the
    /// schema `public`; a schema name that is not lowercase ASCII letters, digits and `_`, or too
    /// long for an identifier, is replaced by a hash of it.
    static func channel(schema: String) -> String {
        let prefix = "mirrorstore_changes"
        let plain = schema.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }
        let readable = prefix + "_" + schema
        if plain, !schema.isEmpty, SQL.isValidIdentifier(readable) { return readable }
        return SQL.shortName(prefix, "schema", schema)
    }

    /// Registers an observer whose `concerns` picks the notices it wants, and returns once the
    /// connection listens, so that no commit made after it returns is missed.
    ///
    /// - Throws: ``PostgresStoreError`` (`.closed` after the store closed, `.connectionFailed`
    ///   when the listening connection cannot be opened).
    func subscribe(isolation: isolated (any Actor)? = #isolation, concerns: @escaping @Sendable (ChangeNotice) -> Bool) async throws -> Subscription {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let subscribed: (id: Int, generation: Int)? = state.withLock { state in
            guard !state.isClosed else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = Subscriber(concerns: concerns, continuation: continuation)
            if state.task == nil { startListening(&state) }
            return (id, state.generation)
        }
        guard let (id, generation) = subscribed else { throw PostgresStoreError(.closed) }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        // A server that takes the connection but never answers would keep the waiters waiting.
        let timeout = settings.callTimeout
        let timer = Task { [weak self] in
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self?.failed(generation, timedOut: true, reason: "listening for changes: the server did not answer")
        }
        defer { timer.cancel() }
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
            let ready: Result<Void, any Error>? = state.withLock { state in
                if state.isClosed { return .failure(PostgresStoreError(.closed)) }
                if state.isListening { return .success(()) }
                guard state.subscribers[id] != nil else {
                    // The connection failed between registering and waiting: say why.
                    if let failure = state.failure, failure.generation == generation { return .failure(failure.error) }
                    return .failure(PostgresStoreError(.closed))
                }
                state.waiters[id] = waiter
                return nil
            }
            if let ready { waiter.resume(with: ready) }
        }
        return Subscription(stream: stream)
    }

    /// Whether the listening connection is open or opening: while some observation runs.
    var isRunning: Bool { state.withLock { $0.task != nil } }

    /// Ends every observation and stops listening; observers' sequences end.
    func close() async {
        let (task, subscribers, waiters) = state.withLock { state in
            state.isClosed = true
            let taken = (state.task, state.subscribers, state.waiters)
            state.task = nil
            state.subscribers = [:]
            state.waiters = [:]
            state.isListening = false
            return taken
        }
        for waiter in waiters.values { waiter.resume(throwing: PostgresStoreError(.closed)) }
        for subscriber in subscribers.values { subscriber.continuation.finish() }
        task?.cancel()
        await task?.value
    }

    private func unsubscribe(_ id: Int) {
        let (task, waiter) = state.withLock { state -> (Task<Void, Never>?, CheckedContinuation<Void, any Error>?) in
            state.subscribers[id] = nil
            let waiter = state.waiters.removeValue(forKey: id)
            guard state.subscribers.isEmpty, let task = state.task else { return (nil, waiter) }
            // The last observer left: stop listening until another comes.
            state.task = nil
            state.isListening = false
            state.generation += 1
            return (task, waiter)
        }
        waiter?.resume(throwing: CancellationError())
        task?.cancel()
    }

    /// Starts the task that connects and listens; called with the lock held.
    private func startListening(_ state: inout State) {
        state.generation += 1
        let generation = state.generation
        let configuration = configuration, channel = channel
        state.task = Task { [weak self] in
            do {
                let connection = try await PostgresConnection.connect(configuration: configuration, id: generation, logger: PostgresStore.logger)
                do {
                    try await withTaskCancellationHandler {
                        try await connection.listen(on: channel) { notifications in
                            self?.listening(generation)
                            for try await notification in notifications {
                                self?.deliver(ChangeNotice(payload: notification.payload))
                            }
                        }
                    } onCancel: {
                        let _: EventLoopFuture<Void> = connection.close()
                    }
                } catch {
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
                // The notifications ended without an error: the connection was closed under us,
                // unless we were stopped on purpose.
                if !Task.isCancelled {
                    self?.failed(generation, reason: "the listening connection closed")
                }
            } catch {
                if !Task.isCancelled { self?.failed(generation, reason: Failures.reason(error)) }
            }
        }
    }

    private func listening(_ generation: Int) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            guard state.generation == generation, state.task != nil else { return [] }
            state.isListening = true
            let waiting = Array(state.waiters.values)
            state.waiters = [:]
            return waiting
        }
        for waiter in waiters { waiter.resume() }
    }

    private func deliver(_ notice: ChangeNotice) {
        let concerned = state.withLock { state in
            state.subscribers.values.filter { $0.concerns(notice) }.map(\.continuation)
        }
        for continuation in concerned { continuation.yield(()) }
    }

    /// The connection failed, or did not listen in time (`timedOut`, only before it listens):
    /// every observer's sequence throws, and the next observer connects anew.
    private func failed(_ generation: Int, timedOut: Bool = false, reason: String) {
        let error = timedOut
            ? PostgresStoreError(.timedOut(host: settings.host, port: settings.port, timeout: settings.callTimeout, reason: reason))
            : PostgresStoreError(.connectionFailed(host: settings.host, port: settings.port, reason: "listening for changes: \(reason)"))
        let (subscribers, waiters, task) = state.withLock { state -> ([Subscriber], [CheckedContinuation<Void, any Error>], Task<Void, Never>?) in
            guard state.generation == generation, let task = state.task, !(timedOut && state.isListening) else { return ([], [], nil) }
            let taken = (Array(state.subscribers.values), Array(state.waiters.values), task)
            state.subscribers = [:]
            state.waiters = [:]
            state.task = nil
            state.isListening = false
            state.failure = (generation, error)
            // The stopped task's late news is ignored.
            state.generation += 1
            return taken
        }
        task?.cancel()
        for waiter in waiters { waiter.resume(throwing: error) }
        for subscriber in subscribers { subscriber.continuation.finish(throwing: error) }
    }
}
