import Foundation

// mirrorstore: inspect, verify, compact and dump MirrorStore files.

let commands: [any Command.Type] = [InspectCommand.self, VerifyCommand.self, CompactCommand.self, DumpCommand.self]

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

let overview = """
    USAGE: mirrorstore <command> [options] <store-path>

    COMMANDS:
    \(commands.map { "  \($0.name.padding(toLength: 9, withPad: " ", startingAt: 0)) \($0.summary)" }.joined(separator: "\n"))

    Run 'mirrorstore <command> --help' for a command's options. An encrypted store's
    passphrase comes from --passphrase-file <path> or MIRRORSTORE_PASSPHRASE.
    """

let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first, !["--help", "-h", "help"].contains(name) else {
    print(overview)
    exit(arguments.isEmpty ? 2 : 0)
}
guard let command = commands.first(where: { $0.name == name }) else {
    printError("mirrorstore: unknown command '\(name)'\n\n\(overview)")
    exit(2)
}
let rest = Array(arguments.dropFirst())
do {
    if try Arguments(rest, options: ["--type", "--where"]).wantsHelp {
        print(command.usage + "\n\n" + Arguments.encryptionUsage)
        exit(0)
    }
    exit(try command.run(rest))
} catch let error as UsageError {
    printError("mirrorstore \(name): \(error)\n\n\(command.usage)\n\n\(Arguments.encryptionUsage)")
    exit(2)
} catch {
    printError("mirrorstore \(name): \(error)")
    exit(1)
}
