import Foundation
import MirrorStore
import MirrorStorePostgres
import Synchronization
import Testing

/// The server `Scripts/with-postgres.sh` started, or `nil`: the suites that need one are then
/// skipped, with this reason.
let serverSettings = PostgresSettings.fromEnvironment()
let needsServer: Comment = "needs a PostgreSQL server: run the tests through Scripts/with-postgres.sh, or set MIRRORSTORE_POSTGRES_HOST, _PORT, _USER and _DATABASE"

/// A store on the test server with `models`, whose tables start empty.
func emptyStore(models: [any Persistable.Type], clearing: [any Persistable.Type]) async throws -> PostgresStore {
    let settings = try #require(serverSettings)
    let store = try await PostgresStore.open(settings, models: models)
    try await store.write { transaction in
        for type in clearing { try await transaction.deleteAll(type) }
    }
    return store
}

/// SplitMix64: a small repeatable generator, so every random test replays from its seed
/// (`MIRRORSTORE_SEED` overrides the default).
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = ProcessInfo.processInfo.environment["MIRRORSTORE_SEED"].flatMap { UInt64($0) } ?? seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &self) < percent }
    mutating func pick<T>(_ choices: [T]) -> T { choices[Int.random(in: 0..<choices.count, using: &self)] }
    mutating func integer<T: FixedWidthInteger>(_: T.Type = T.self) -> T {
        chance(30) ? pick([T.min, T.max, 0, 1, T.max / 2]) : T.random(in: T.min...T.max, using: &self)
    }

    /// Strings that are easy to get wrong: canonically equivalent spellings, case, emoji, NFC
    /// forms with no precomposed character, and plain ASCII.
    mutating func string() -> String {
        if chance(60) {
            return pick(["", "a", "abc", "Élodie", "E\u{301}lodie", "zebra", "Zed", "ß", "日本語", "🦸 hero", "a\u{308}", "ä",
                         "ab\u{301}c", "Mixed Case", "hello world", "M", "e", "\u{1F469}\u{200D}\u{1F4BB}", "'; DROP TABLE x; --"])
        }
        let letters = Array("abcdeEÉé\u{301}z ")
        return String((0..<Int.random(in: 0...6, using: &self)).map { _ in pick(letters) })
    }
}

/// Every suite that uses the server, one at a time: they share its tables.
@Suite("PostgreSQL server", .serialized, .enabled(if: serverSettings != nil, needsServer))
struct ServerTests {}

/// A wait that took too long: the test fails instead of hanging.
struct TimedOut: Error, CustomStringConvertible {
    let what: String
    let seconds: Int
    var description: String { "Timed out after \(seconds) s waiting for \(what)." }
}

/// What `body` returns, or `TimedOut` after `seconds` (the body is cancelled then).
func within<T: Sendable>(_ seconds: Int = 10, _ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw TimedOut(what: what, seconds: seconds) }
        return value
    }
}

/// The value of `task`, or `TimedOut` after `seconds`; the task is cancelled then, since waiting
/// for a task's value does not end when the waiter is cancelled.
func within<T: Sendable>(_ seconds: Int = 10, _ what: String, task: Task<T, any Error>) async throws -> T {
    try await within(seconds, what) {
        try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
    }
}

/// What `body` returns, or `TimedOut` after `seconds`, without waiting for `body` to end then
/// (`within` waits for its cancelled body): a call that ignores cancellation fails the test, naming
/// `what`, instead of hanging the run. The body is cancelled and left running.
func withinAbandoning<T: Sendable>(_ seconds: Int, _ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let task = Task { try await body() }
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        let race = FirstOutcome(continuation)
        let timer = Task {
            guard (try? await Task.sleep(for: .seconds(seconds))) != nil else { return }
            race.finish(.failure(TimedOut(what: what, seconds: seconds)))
            task.cancel()
        }
        Task {
            let outcome = await task.result
            timer.cancel()
            race.finish(outcome)
        }
    }
}

/// A continuation resumed once, by whichever outcome comes first.
private final class FirstOutcome<T: Sendable>: Sendable {
    private let waiter: Mutex<CheckedContinuation<T, any Error>?>

    init(_ continuation: CheckedContinuation<T, any Error>) { waiter = Mutex(continuation) }

    func finish(_ outcome: Result<T, any Error>) { waiter.withLock { $0.take() }?.resume(with: outcome) }
}
