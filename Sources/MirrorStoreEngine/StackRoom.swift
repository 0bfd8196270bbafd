import CMirrorStoreSupport

/// How much of the current thread's stack is left, for walks whose depth a model or a file
/// decides (linked models, embedded records). Such a walk recurses once per level; rather than
/// overflow the stack and kill the process, it asks here and stops with a typed error while
/// enough stack remains to unwind and report it.
///
/// Walks count their depth and ask only past a depth no stack is too small for (see MirrorStore's
/// `StackRoom.runsOut(atDepth:)`), so ordinary conversions never pay for the question, and the
/// answer adapts to the thread: the main thread's 8 MiB, a worker's smaller stack, or a sanitizer
/// build's larger frames.
package enum StackRoom {
    /// Bytes to keep free: one more level of the deepest walk in a sanitizer build, plus the
    /// error's unwinding.
    package static let reserve = 512 * 1024

    /// Whether less than ``reserve`` bytes of stack are left below the caller. When the system
    /// does not say, the answer is no: a walk then behaves as it would without the check.
    package static var isLow: Bool {
        var remaining = 0
        guard mirrorstore_stack_remaining(&remaining) == 1 else { return false }
        return remaining < reserve
    }
}
