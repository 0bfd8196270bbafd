/// A store that did not behave as the suite expects: which check, and what differed, in one
/// sentence.
public struct BehaviorMismatch: Error, CustomStringConvertible, Sendable {
    /// The check that failed.
    public let check: BehaviorCheck
    /// What differed from what every store must do.
    public let detail: String

    /// The check and what differed, as one sentence.
    public var description: String { "Behaviour check \(check) failed: \(detail)" }
}
