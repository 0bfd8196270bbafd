import CMirrorStoreSupport

/// How much of the current thread's stack is left, for walks whose depth a model or a file
/// decides (linked models, embedded records). Such a walk recurses once per level; rather than
/// overflow the stack and kill the process, it asks here and stops with a typed error while
/// enough stack remains to unwind and report it.
///
/// Walks count their depth and ask only past ``checkedFromDepth``, so ordinary conversions never
/// pay for the question, and the answer adapts to the thread: the main thread's 8 MiB, a
/// worker's smaller stack, or a sanitizer build's larger frames.
package enum StackRoom {
    /// Depth below which a walk does not ask: no stack is that small.
    package static let checkedFromDepth = 16
    /// Bytes to keep free: one more level of the deepest walk in a sanitizer build, plus the
    /// error's unwinding.
    package static let reserve = 512 * 1024

    /// Whether less than ``reserve`` bytes of stack are left below the caller.
    package static var isLow: Bool {
        guard let lowest = lowestAddress() else { return false }
        var marker: UInt8 = 0
        let here = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
        return here < lowest || here - lowest < UInt(reserve)
    }

    /// The lowest usable address of the current thread's stack, or `nil` when the system does
    /// not say.
    private static func lowestAddress() -> UInt? {
        var lowest: UInt = 0
        return mirrorstore_stack_lowest_address(&lowest) == 1 ? lowest : nil
    }
}
