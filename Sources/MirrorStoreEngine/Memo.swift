/// A value derived from one state of the engine, computed on its first use and then kept: a
/// type's objects in file order, an index's chunk starts. Every snapshot of that state holds the
/// same memo, so one computes it for all; the state's owner drops the memo whenever the state
/// changes, so it is only ever read for the state it was computed from.
final class Memo<Value: Sendable>: Sendable {
    private let value = Lock<Value?>(nil)

    /// The value, computed by `make` on first use; when `make` throws, nothing is kept.
    func value(_ make: () throws -> Value) rethrows -> Value {
        try value.withLock { known in
            if let known { return known }
            let made = try make()
            known = made
            return made
        }
    }
}
