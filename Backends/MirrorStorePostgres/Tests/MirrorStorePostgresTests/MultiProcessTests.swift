import Foundation
import MirrorStore
import MirrorStorePostgres
import Testing
import PostgresChildModels

/// PostgresWriterChild, built beside the tests, or `nil`.
private func writerChildURL() -> URL? {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    for _ in 0..<6 {
        let candidate = directory.appendingPathComponent("PostgresWriterChild")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    return nil
}

extension ServerTests {
@Suite("Several processes")
struct MultiProcessTests {
    static let processes = 4
    static let transactions = ProcessInfo.processInfo.environment["MIRRORSTORE_POSTGRES_CHILD_TRANSACTIONS"].flatMap { Int($0) } ?? 1_000

    /// Four processes, each with its own store, make 1,000 write transactions each at once: every
    /// process's own keys are all there, the shared counters (`update`, which locks the row) add
    /// up exactly, the shared upserted rows are five, and observers in this process (of the
    /// counters' results, and of one counter by key) saw the children's commits.
    @Test func processesWritingAtOnceLoseNothingAndAnObserverSeesTheirCommits() async throws {
        let child = try #require(writerChildURL(), "PostgresWriterChild must be built next to the tests")
        let processes = Self.processes, transactions = Self.transactions, total = processes * transactions
        let store = try await emptyStore(
            models: [ChildEntry.self, ChildCounter.self, ChildShared.self], clearing: [ChildEntry.self, ChildCounter.self, ChildShared.self])
        try await store.write { transaction in
            for id in 0..<8 { try await transaction.add(ChildCounter(id: id)) }
        }

        // The observer: its first element is the state before the children start.
        let counters = try store.objects(ChildCounter.self)
        let (started, signal) = AsyncStream.makeStream(of: Void.self)
        let observer = Task { () -> (elements: Int, sum: Int) in
            var elements = 0, sum = 0
            for try await change in counters.changes {
                elements += 1
                signal.yield()
                sum = change.results.reduce(0) { $0 + $1.count }
                if sum == total { break }
            }
            return (elements, sum)
        }
        defer { observer.cancel() }
        _ = try await within(10, "the observer's first element") { for await _ in started { return true }; return false }
        // One object observed by key: the counter the children's sequences 0, 8, 16, … add to.
        let counterZero = (0..<transactions).filter { $0 % 8 == 0 }.count * processes
        let (objectStarted, objectSignal) = AsyncStream.makeStream(of: Void.self)
        let objectObserver = Task { () -> (elements: Int, count: Int?) in
            var elements = 0
            var count: Int?
            for try await counter in try store.changes(ChildCounter.self, primaryKey: 0) {
                elements += 1
                objectSignal.yield()
                count = counter?.count
                if count == counterZero { break }
            }
            return (elements, count)
        }
        defer { objectObserver.cancel() }
        _ = try await within(10, "the object observer's first element") { for await _ in objectStarted { return true }; return false }

        let clock = ContinuousClock()
        let start = clock.now
        let (exits, exited) = AsyncStream.makeStream(of: (process: Int, status: Int32).self)
        var children: [(process: Process, output: Pipe, errors: Pipe)] = []
        defer { for child in children where child.process.isRunning { child.process.terminate() } }
        for number in 0..<processes {
            let process = Process()
            process.executableURL = child
            process.arguments = ["\(number)", "\(transactions)"]
            let output = Pipe(), errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            process.terminationHandler = { exited.yield((number, $0.terminationStatus)) }
            try process.run()
            children.append((process, output, errors))
        }
        let statuses = try await within(120, "\(processes) processes × \(transactions) transactions") {
            var statuses: [Int: Int32] = [:]
            for await (number, status) in exits {
                statuses[number] = status
                if statuses.count == processes { break }
            }
            return statuses
        }
        let elapsed = clock.now - start
        for (number, child) in children.enumerated() where statuses[number] != 0 {
            let message = String(decoding: child.errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            Issue.record("child \(number) exited with \(statuses[number] ?? -1): \(message)")
        }
        let reports = children.map { String(decoding: $0.output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
        print("MultiProcessTests: \(processes) processes × \(transactions) transactions in \(elapsed); children: \(reports.joined().split(separator: "\n").joined(separator: "; "))")

        // Nothing lost.
        let entries = try await store.objects(ChildEntry.self).all()
        #expect(entries.count == total)
        for number in 0..<processes {
            let sequences = Set(entries.filter { $0.process == number }.map(\.sequence))
            #expect(sequences == Set(0..<transactions), "process \(number)")
            #expect(entries.filter { $0.process == number }.allSatisfy { $0.id == number * 1_000_000 + $0.sequence })
        }
        let finalCounters = try await counters.all()
        #expect(finalCounters.map(\.count).reduce(0, +) == total)
        #expect(finalCounters.map(\.count) == (0..<8).map { id in (0..<transactions).filter { $0 % 8 == id }.count * processes })
        let shared = try await store.objects(ChildShared.self).all()
        #expect(shared.map(\.id) == Array(0..<min(5, (transactions + 9) / 10)))
        #expect(shared.allSatisfy { (0..<processes).contains($0.writer) })

        // The observer saw the children's commits, up to the last one.
        let seen = try await within(10, "the observer to see the children's last commit", task: observer)
        #expect(seen.sum == total)
        #expect(seen.elements >= 2)
        let seenObject = try await within(10, "the object observer to see the children's last change of counter 0", task: objectObserver)
        #expect(seenObject.count == counterZero)
        #expect(seenObject.elements >= 2)
        await store.close()
    }
}
}
