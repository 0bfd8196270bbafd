import Foundation

/// The model types a store has read every stored object of once. Records the store writes come
/// from models, so a type stays readable once checked.
final class CheckedTypes: Sendable {
    private let lock = NSLock()
    /// A list searched in turn, not a set: a store has a few model types, and this is asked on
    /// every query, where hashing a type name cost more than the search.
    private nonisolated(unsafe) var types: [ObjectIdentifier] = []

    /// Runs `check` the first time `plan`'s type is seen, and remembers the type when it
    /// succeeds. Two threads may both check a type the first time; both succeed or both throw.
    func checkOnce(_ plan: TypePlan, _ check: () throws -> Void) throws {
        let type = plan.typeIdentifier
        if lock.withLock({ types.contains(type) }) { return }
        try check()
        lock.withLock { if !types.contains(type) { types.append(type) } }
    }
}
