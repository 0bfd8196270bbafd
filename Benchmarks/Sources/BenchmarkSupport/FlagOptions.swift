import Foundation

/// The `--flag value` options of a benchmark program, checked before any work starts.
///
/// `--help` (or `-h`) prints the usage and exits; an unknown option, an option without a value or
/// a value that does not parse prints what is wrong and the usage and exits with status 2. A
/// mistyped option must not start a run of several minutes with its defaults.
public struct FlagOptions: Sendable {
    private let program: String
    private let usage: String
    private let values: [String: String]

    /// Reads `arguments` (by default the process's own, without its path) as pairs of a flag
    /// named in `flags` and its value.
    public init(program: String, usage: String, flags: Set<String>, arguments: [String] = Array(CommandLine.arguments.dropFirst())) {
        self.program = program
        self.usage = usage
        if arguments.contains("--help") || arguments.contains("-h") {
            print("usage: \(usage)")
            exit(0)
        }
        var values: [String: String] = [:]
        var index = 0
        while index < arguments.count {
            let flag = arguments[index]
            guard flags.contains(flag) else { Self.stop(program, usage, "unknown option '\(flag)'") }
            guard index + 1 < arguments.count else { Self.stop(program, usage, "'\(flag)' needs a value") }
            values[flag] = arguments[index + 1]
            index += 2
        }
        self.values = values
    }

    /// The value given for `flag`, or nil when it was not given.
    public func text(_ flag: String) -> String? {
        values[flag]
    }

    /// The value given for `flag` as a number, or `defaultValue` when it was not given; a value
    /// that is not a positive number of that type stops the program.
    public func positive<Number: LosslessStringConvertible & Comparable & Numeric>(_ flag: String, default defaultValue: Number) -> Number {
        guard let text = values[flag] else { return defaultValue }
        guard let number = Number(text), number > 0 else {
            Self.stop(program, usage, "\(flag) needs a positive number, not '\(text)'")
        }
        return number
    }

    private static func stop(_ program: String, _ usage: String, _ problem: String) -> Never {
        FileHandle.standardError.write(Data("\(program): \(problem)\nusage: \(usage)\n".utf8))
        exit(2)
    }
}
