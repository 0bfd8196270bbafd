import Foundation

/// The `--encrypted` switch of the store and query benchmarks: the parent sets an environment
/// variable that its cell processes inherit, and every MirrorStore the run opens is then
/// encrypted with a fixed raw key (docs/BENCHMARKS.md, "Encryption (issue 27)").
public enum BenchmarkEncryption {
    public static let option = "--encrypted"
    static let variable = "MIRRORSTORE_BENCHMARK_ENCRYPTED"

    /// Turns encryption on for this process and the cells it starts.
    public static func turnOn() {
        setenv(variable, "1", 1)
    }

    /// Whether this run's stores are encrypted. Read with `getenv`, not `ProcessInfo`'s
    /// environment dictionary, because timed cells (the first screen) open stores through it.
    public static var isOn: Bool {
        guard let value = getenv(variable) else { return false }
        return String(cString: value) == "1"
    }

    /// The raw key the stores are encrypted with: a key, so that opening pays no PBKDF2.
    public static let key = Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
}
