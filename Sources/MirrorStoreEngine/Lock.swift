#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a `pthread_mutex`.
///
/// ```swift
/// let counts = Lock<[String: Int]>([:])
/// counts.withLock { $0["heroes", default: 0] += 1 }
/// ```
///
/// Used instead of Synchronization's `Mutex`: on Linux (Swift 6.3) `Mutex` locks with raw
/// futex calls inside the uninstrumented standard library, so ThreadSanitizer cannot see its
/// ordering and reports every access made under it as a race. ThreadSanitizer intercepts
/// `pthread_mutex_lock`, so with this lock a clean `--sanitize=thread` run means something.
///
/// Public, not `package`, for ``withLock(_:)`` alone: this toolchain inlines an `@inlinable`
/// function into other modules only when it is public, and the store's caches, taken several
/// times per query from the module above, otherwise called it unspecialised.
public final class Lock<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is only read or written between pthread_mutex_lock and
    // pthread_mutex_unlock on `mutex`, which is never moved (it is heap-allocated).
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    // Unchecked exclusivity: the mutex already makes every access exclusive (a nested
    // `withLock` on the same lock would deadlock before it could overlap), and the runtime's
    // check cost as much as the lock on every read of a mapped value.
    @usableFromInline @exclusivity(unchecked) var value: Value

    /// A lock guarding `value`.
    public init(_ value: Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        self.value = value
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value, the mutex held, and returns what it returns; `body` must not
    /// take the same lock again.
    @inlinable
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
