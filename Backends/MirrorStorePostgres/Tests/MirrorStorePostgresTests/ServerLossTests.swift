import Foundation
import MirrorStore
import MirrorStorePostgres
import Testing

struct LossNote: Persistable, Equatable {
    var id = 0
    var text = ""
    static var primaryKey: String? { "id" }
}

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

    /// Stops the server and removes its directory.
    func remove() {
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

private var serverToolsMissing: Comment {
    if case .failure(let missing) = ThrowawayServer.tools { return "needs initdb and pg_ctl to start a server of its own: \(missing.reason)" }
    return ""
}

/// A server lost after the store opened: every call fails with a typed error within the
/// settings' `callTimeout` (2 s here) rather than waiting for the pool to reconnect, and the
/// store works again once the server is back.
@Suite("A server lost after opening", .serialized, .enabled(if: (try? ThrowawayServer.tools.get()) != nil, serverToolsMissing))
struct ServerLossTests {
    /// Runs `call`, which must throw a `PostgresStoreError` saying the server cannot be reached
    /// or did not answer, within 5 s (the 2 s timeout, and room for a loaded machine).
    private func expectLost(_ what: String, _ call: @escaping @Sendable () async throws -> Void) async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let outcome: Result<Void, any Error> = try await within(20, what) {
            do { try await call(); return .success(()) } catch { return .failure(error) }
        }
        let elapsed = clock.now - start
        guard case .failure(let error) = outcome else {
            Issue.record("\(what) succeeded with the server gone")
            return
        }
        let storeError = try #require(error as? PostgresStoreError, "\(what) threw \(error)")
        switch storeError.kind {
        case .connectionFailed, .timedOut: break
        default: Issue.record("\(what) threw \(storeError)")
        }
        #expect(elapsed < .seconds(5), "\(what) took \(elapsed)")
    }

    @Test func callsFailWithinTheTimeoutAndWorkAgainOnceTheServerIsBack() async throws {
        let server = try ThrowawayServer()
        defer { server.remove() }
        let settings = server.settings
        let store = try await PostgresStore.open(settings, models: [LossNote.self])
        try await store.write { try await $0.add(LossNote(id: 1, text: "before")) }
        let observation = Task { () -> Int in
            var seen = 0
            for try await _ in try store.objects(LossNote.self).changes { seen += 1 }
            return seen
        }
        try await Task.sleep(for: .milliseconds(300))

        try server.crash()
        // Twice each: the first calls find the pool's dead connections, later ones wait for new ones.
        for round in 1...2 {
            try await expectLost("write \(round)") { try await store.write { try await $0.add(LossNote(id: 2, text: "lost")) } }
            try await expectLost("lookup \(round)") { _ = try await store.object(LossNote.self, primaryKey: 1) }
            try await expectLost("query \(round)") { _ = try await store.objects(LossNote.self).filter(#Predicate { $0.id > 0 }).all() }
            try await expectLost("count \(round)") { _ = try await store.objects(LossNote.self).count() }
            try await expectLost("observation \(round)") {
                var changes = try store.objects(LossNote.self).changes.makeAsyncIterator()
                _ = try await changes.next()
            }
        }
        // The running observation learnt the server was lost.
        await #expect(throws: PostgresStoreError.self) { try await within(10, "the observation's end", task: observation) }

        try server.start()
        // The pool opens connections again after a backoff of its own.
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        var written = false
        while !written, clock.now < deadline {
            do {
                try await store.write { try await $0.add(LossNote(id: 3, text: "after")) }
                written = true
            } catch let error as PostgresStoreError {
                switch error.kind {
                case .connectionFailed, .timedOut: try await Task.sleep(for: .milliseconds(200))
                default: throw error
                }
            }
        }
        #expect(written, "no write succeeded within 30 s of the server's restart")
        #expect(try await store.object(LossNote.self, primaryKey: 3) == LossNote(id: 3, text: "after"))
        #expect(try await store.object(LossNote.self, primaryKey: 2) == nil)
        #expect(try await store.objects(LossNote.self).count() == 2)
        // Observation works again.
        let first = try await within(10, "an observation's first element") {
            var changes = try store.objects(LossNote.self).changes.makeAsyncIterator()
            return try await changes.next()?.results.count
        }
        #expect(first == 2)

        // Closing a store whose server is gone returns.
        try server.crash()
        let clock2 = ContinuousClock()
        let start = clock2.now
        try await within(10, "close") { await store.close() }
        #expect(clock2.now - start < .seconds(5))
    }
}
