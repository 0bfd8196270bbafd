/// One `mirrorstore` subcommand.
protocol Command {
    static var name: String { get }
    static var summary: String { get }
    static var usage: String { get }
    /// Runs with the arguments after the subcommand's name; returns the exit status.
    static func run(_ arguments: [String]) throws -> Int32
}

/// A mistake in how the tool was called: printed with the usage, exit status 2.
struct UsageError: Error, CustomStringConvertible {
    let description: String
}

/// The arguments of a subcommand: options with a value, flags, and positional arguments.
struct Arguments {
    private(set) var positional: [String] = []
    private(set) var options: [String: String] = [:]
    private(set) var flags = Set<String>()

    init(_ arguments: [String], options names: Set<String> = [], flags flagNames: Set<String> = ["--help", "-h"]) throws {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if names.contains(argument) {
                guard index + 1 < arguments.count else { throw UsageError(description: "\(argument) needs a value") }
                options[argument] = arguments[index + 1]
                index += 2
                continue
            }
            if flagNames.contains(argument) {
                flags.insert(argument)
            } else if argument.hasPrefix("-") {
                throw UsageError(description: "unknown option \(argument)")
            } else {
                positional.append(argument)
            }
            index += 1
        }
    }

    var wantsHelp: Bool { flags.contains("--help") || flags.contains("-h") }

    /// The single store path every subcommand takes.
    func storePath() throws -> String {
        guard positional.count == 1, let path = positional.first else {
            throw UsageError(description: positional.isEmpty ? "missing the store path" : "expected one store path, got \(positional.count) arguments")
        }
        return path
    }
}
