
/// Test-only failures for the file system calls whose error paths matter most (a full disk, a
/// failed sync), which cannot be provoked reliably on a real disk. Production code passes `nil`.
final class FaultInjection: Sendable {
    enum Call: Sendable, Hashable {
        case write
        case sync
        case truncate
    }

    private let pending: Lock<[Call: [Int32]]> = Lock([:])

    init() {}

    /// Makes the next `call` fail with `code`; queued failures are used in order.
    func fail(_ call: Call, with code: Int32) {
        pending.withLock { $0[call, default: []].append(code) }
    }

    /// The errno the next `call` should fail with, if one is queued.
    func take(_ call: Call) -> Int32? {
        pending.withLock { queue in
            guard var codes = queue[call], !codes.isEmpty else { return nil }
            let code = codes.removeFirst()
            queue[call] = codes
            return code
        }
    }
}
