import Foundation

/// A crash child running in one of its modes, with its output collected.
public final class ChildProcess {
    public let process = Process()
    private let output = Pipe()
    private let input = Pipe()

    /// Starts the child on `store`; a relative `store` is resolved from `workingDirectory`.
    public init(executable: URL, mode: String, store: String, workingDirectory: String? = nil) throws {
        process.executableURL = executable
        process.arguments = [mode, store]
        if let workingDirectory { process.currentDirectoryURL = URL(fileURLWithPath: workingDirectory) }
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    public var pid: Int32 { process.processIdentifier }

    /// Output read while waiting for a line, kept so that `lines()` still returns all of it.
    private var consumed = Data()

    /// Blocks until the child prints a line starting with `prefix`, returning it (nil at EOF).
    public func waitForLine(startingWith prefix: String) -> String? {
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

    public func kill() {
        Foundation.kill(pid, SIGKILL)
        process.waitUntilExit()
    }

    /// Closes the child's stdin (the `hold` mode's signal to exit) and waits for it.
    public func finish() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// Every complete line the child printed; call after it exited.
    public func lines() -> [String] {
        let data = consumed + output.fileHandleForReading.readDataToEndOfFile()
        let text = String(decoding: data, as: UTF8.self)
        // A line cut by the kill has no newline and was never acknowledged.
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }
}

/// The executable product `name` (a crash child), built next to the test bundle.
public func childExecutableURL(named name: String) -> URL? {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    for _ in 0..<6 {
        let candidate = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    // On Apple platforms the tests run inside xctest; the products sit beside the test bundle.
    let bundle = Bundle(for: TemporaryDirectory.self).bundleURL.deletingLastPathComponent().appendingPathComponent(name)
    return FileManager.default.isExecutableFile(atPath: bundle.path) ? bundle : nil
}
