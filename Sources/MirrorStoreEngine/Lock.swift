#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a `pthread_mutex`.
///
/// Used instead of Synchronization's `Mutex`: on Linux (Swift 6.3) `Mutex` locks with raw
/// futex calls inside the uninstrumented standard library, so ThreadSanitizer cannot see its
/// ordering and reports every access made under it as a race. ThreadSanitizer intercepts
/// `pthread_mutex_lock`, so with this lock a clean `--sanitize=thread` run means something.
package final class Lock<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is only read or written between pthread_mutex_lock and
    // pthread_mutex_unlock on `mutex`, which is never moved (it is heap-allocated).
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    // Unchecked exclusivity: the mutex already makes every access exclusive (a nested
    // `withLock` on the same lock would deadlock before it could overlap), and the runtime's
    // check cost as much as the lock on every read of a mapped value.
    @exclusivity(unchecked) private var value: Value

    package init(_ value: Value) {
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

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
