import Foundation
import MirrorStorePostgres
import Testing

/// A PostgreSQL server of the test's own, in a temporary directory, which the test stops and
/// starts: the shared server of `Scripts/with-postgres.sh` must stay up for the other suites.
/// Made with Debian's `initdb` and `pg_ctl`, as the script makes its server; as the `postgres`
/// user when the tests run as root (the server refuses to run as root).
final class ThrowawayServer {
    let directory: URL
    let port: Int
    private let bin: String
    private let asServer: [String]

    /// The binaries' directory and how to run them, or why the server cannot be made here.
    static let tools: Result<(bin: String, asServer: [String]), ToolsMissing> = {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap { Int($0) }.sorted()
        guard let version = versions.last(where: { FileManager.default.isExecutableFile(atPath: "\(root)/\($0)/bin/pg_ctl") }) else {
            return .failure(ToolsMissing(reason: "no initdb and pg_ctl under \(root) (Debian's postgresql package)"))
        }
        guard getuid() == 0 else { return .success(("\(root)/\(version)/bin", [])) }
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser"), getpwnam("postgres") != nil else {
            return .failure(ToolsMissing(reason: "the tests run as root and there is no postgres user to run the server as"))
        }
        return .success(("\(root)/\(version)/bin", ["/usr/sbin/runuser", "-u", "postgres", "--"]))
    }()

    struct ToolsMissing: Error { let reason: String }

    /// A new cluster, started on a free loopback port.
    init() throws {
        let tools = try Self.tools.get()
        bin = tools.bin
        asServer = tools.asServer
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("mirrorstore-loss-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        try Self.run(asServer + ["\(bin)/initdb", "-D", directory.path + "/data", "-U", "mirrorstore", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"])
        // A port no other server of this machine uses: tried from one derived from the process.
        var port = 20_000 + Int(getpid()) % 20_000
        var started = false
        for _ in 0..<8 where !started {
            started = (try? Self.run(asServer + Self.startArguments(bin: bin, directory: directory, port: port))) != nil
            if !started { port += 97 }
        }
        self.port = port
        guard started else {
            try? FileManager.default.removeItem(at: directory)
            throw ToolsMissing(reason: "pg_ctl could not start a server on a loopback port")
        }
    }

    var settings: PostgresSettings {
        PostgresSettings(host: "127.0.0.1", port: port, user: "mirrorstore", database: "postgres", connectTimeout: .seconds(2), callTimeout: .seconds(2))
    }

    /// Kills the server's processes at once, as a crash or a lost machine would.
    func crash() throws {
        try Self.run(asServer + ["\(bin)/pg_ctl", "-D", directory.path + "/data", "-m", "immediate", "-w", "stop"])
    }

    /// Starts the server again on the same port.
    func start() throws {
        try Self.run(asServer + Self.startArguments(bin: bin, directory: directory, port: port))
    }

    /// Stops the server's processes (`SIGSTOP`), as a machine that hangs or a network that drops
    /// every packet would: connections stay open, and nothing answers.
    func freeze() throws {
        for process in try processes() { kill(process, SIGSTOP) }
    }

    /// Lets the server's processes run again (`SIGCONT`).
    func thaw() throws {
        for process in try processes() { kill(process, SIGCONT) }
    }

    /// The server's processes: the postmaster (the first line of `postmaster.pid`) and its
    /// children, found by their parent in `/proc/<pid>/stat`.
    private func processes() throws -> [pid_t] {
        let text = try String(contentsOf: directory.appendingPathComponent("data/postmaster.pid"), encoding: .utf8)
        guard let line = text.split(separator: "\n").first, let postmaster = pid_t(line) else { return [] }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        let children = entries.compactMap { entry -> pid_t? in
            guard let process = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let end = stat.lastIndex(of: ")") else { return nil }
            // After the name in parentheses: the state, then the parent's pid.
            let fields = stat[stat.index(after: end)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == postmaster ? process : nil
        }
        return [postmaster] + children
    }

    /// Lets the server run again if it was stopped, stops it and removes its directory.
    func remove() {
        try? thaw()
        try? crash()
        try? FileManager.default.removeItem(at: directory)
    }

    private static func startArguments(bin: String, directory: URL, port: Int) -> [String] {
        ["\(bin)/pg_ctl", "-D", directory.path + "/data", "-l", directory.path + "/server.log", "-w", "-t", "30",
         "-o", "-c listen_addresses=127.0.0.1 -p \(port) -k \(directory.path) -c fsync=off", "start"]
    }

    /// Runs `arguments` and waits for it. Through a shell that closes every descriptor but the
    /// standard ones first: Foundation learns that a child ended when a descriptor the child
    /// inherits closes, and the server `pg_ctl start` leaves running would keep it open.
    private static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [
            "-c", #"for fd in /proc/self/fd/*; do n=${fd##*/}; if [ "$n" -gt 2 ]; then eval "exec $n>&-" 2>/dev/null; fi; done; exec "$@""#,
            "bash",
        ] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ToolsMissing(reason: "\(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
        }
    }
}

var serverToolsMissing: Comment {
    if case .failure(let missing) = ThrowawayServer.tools { return "needs initdb and pg_ctl to start a server of its own: \(missing.reason)" }
    return ""
}
