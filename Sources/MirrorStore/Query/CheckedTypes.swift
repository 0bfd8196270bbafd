import Foundation

/// The model types a store has read every stored object of once. Records the store writes come
/// from models, so a type stays readable once checked.
final class CheckedTypes: Sendable {
    private let lock = NSLock()
    private nonisolated(unsafe) var names: Set<String> = []

    /// Runs `check` the first time `typeName` is seen, and remembers the name when it succeeds.
    /// Two threads may both check a type the first time; both succeed or both throw.
    func checkOnce(_ typeName: String, _ check: () throws -> Void) throws {
        if lock.withLock({ names.contains(typeName) }) { return }
        try check()
        lock.withLock { _ = names.insert(typeName) }
    }
}
