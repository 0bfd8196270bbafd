import MirrorStoreEngine

extension StackRoom {
    /// Whether a walk `depth` levels deep (linked models, embedded records) should stop for lack
    /// of stack. Only past ``checkedFromDepth`` is the system asked, so ordinary walks never pay
    /// for the question.
    ///
    /// Here rather than in the engine: a walk asks once per level, and a constant from another
    /// module is a call per visit, which the optimiser does not inline across modules.
    @inline(__always)
    static func runsOut(atDepth depth: Int) -> Bool {
        depth >= checkedFromDepth && isLow
    }

    /// Depth below which a walk does not ask: no stack is that small.
    static var checkedFromDepth: Int { 16 }
}

/// How deep conversions recurse through models nested in models (links, and embedded class
/// models). A model deeper than ``recursionLimit`` is made and registered at once but filled
/// later, by a loop in the conversion at the limit: a linked list of any length converts on any
/// thread's stack, a `Task`'s too, without recursing once per link.
enum NestedConversion {
    static var recursionLimit: Int { 32 }
}
