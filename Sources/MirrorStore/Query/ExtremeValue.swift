/// The least or the greatest of values offered one at a time, as ``Results``' `min` and `max`
/// decide it: NaN is skipped and the first of equal values is kept.
struct ExtremeValue<Value: Comparable> {
    private let least: Bool
    /// The extreme so far; nil until a value other than NaN is offered.
    private(set) var best: Value?

    init(least: Bool) {
        self.least = least
    }

    mutating func offer(_ value: Value) {
        // Only NaN differs from itself.
        if value != value { return }
        guard let current = best else {
            best = value
            return
        }
        if least ? value < current : current < value { best = value }
    }
}
