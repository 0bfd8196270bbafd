import Foundation

/// The crash child running in one of its modes, with its output collected.
final class ChildProcess {
    let process = Process()
    private let output = Pipe()
    private let input = Pipe()

    /// Starts the child on `store`; a relative `store` is resolved from `workingDirectory`.
    init(executable: URL, mode: String, store: String, workingDirectory: String? = nil) throws {
        process.executableURL = executable
        process.arguments = [mode, store]
        if let workingDirectory { process.currentDirectoryURL = URL(fileURLWithPath: workingDirectory) }
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// Output read while waiting for a line, kept so that `lines()` still returns all of it.
    private var consumed = Data()

    /// Blocks until the child prints a line starting with `prefix`, returning it (nil at EOF).
    func waitForLine(startingWith prefix: String) -> String? {
        while true {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }
            consumed.append(chunk)
            let buffer = consumed
            let text = String(decoding: buffer, as: UTF8.self)
            if let line = text.split(separator: "\n", omittingEmptySubsequences: true).first(where: { $0.hasPrefix(prefix) }),
               text.contains(line + "\n") {
                return String(line)
            }
        }
    }

    func kill() {
        Foundation.kill(pid, SIGKILL)
        process.waitUntilExit()
    }

    /// Closes the child's stdin (the `hold` mode's signal to exit) and waits for it.
    func finish() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// Every complete line the child printed; call after it exited.
    func lines() -> [String] {
        let data = consumed + output.fileHandleForReading.readDataToEndOfFile()
        let text = String(decoding: data, as: UTF8.self)
        // A line cut by the kill has no newline and was never acknowledged.
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }
}
