import Foundation
import MirrorStoreEngine

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
        let names = names.union([Self.passphraseFileOption])
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

    /// The option naming a file whose contents (less one final newline) are an encrypted store's
    /// passphrase; never the passphrase itself, which would show in the process list and history.
    static let passphraseFileOption = "--passphrase-file"
    /// The environment variable that may hold the passphrase instead.
    static let passphraseVariable = "MIRRORSTORE_PASSPHRASE"
    /// What every subcommand's usage says about encrypted stores.
    static let encryptionUsage = """
        An encrypted store takes its passphrase from --passphrase-file <path> (the file's contents,
        less one final newline) or from the environment variable MIRRORSTORE_PASSPHRASE; never
        from the command line.
        """

    /// The passphrase from `--passphrase-file` or `MIRRORSTORE_PASSPHRASE`, nil when neither is given.
    func encryption(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> EngineConfiguration.Encryption? {
        if let file = options[Self.passphraseFileOption] {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw UsageError(description: "cannot read the passphrase file '\(file)'")
            }
            var passphrase = String(decoding: data, as: UTF8.self)
            if passphrase.hasSuffix("\r\n") {
                passphrase.removeLast(2)
            } else if passphrase.hasSuffix("\n") {
                passphrase.removeLast()
            }
            return .passphrase(passphrase)
        }
        return environment[Self.passphraseVariable].map { .passphrase($0) }
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
