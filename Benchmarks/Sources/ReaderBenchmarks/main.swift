#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import BenchmarkSupport
import Foundation
import MirrorStore

// Several processes on one store (issue 28): a writer process and reader processes opened with
// `configuration.access = .readOnly`. Every role runs in a process of its own (this program, run
// again with a role as its first argument).
//   latency     from the call of `write` in the writer process to an observer of `Results.changes`
//               in a reader process receiving that commit, over --commits commits (200), with the
//               default refresh interval (50 ms) and with 5 ms; a seeded pause between commits of
//               0 to twice the interval (at least 20 ms), so commits fall at every phase of the
//               reader's polling. Both processes read CLOCK_MONOTONIC, which the machine shares.
//               (The call, not its return: the commit's bytes reach the file before its sync, so
//               a reader may see it before `write` returns.)
//   throughput  primary-key lookups per second of one reader process alone, and of four reader
//               processes beside a writer process committing without pause, over --seconds (3 s)
//               on a store of 100,000 objects; each reader refreshes every 1,000 lookups.
//
//   swift run -c release --package-path Benchmarks reader-benchmarks [--commits N] [--seconds S]

struct Tick: Persistable, Sendable {
    var identifier = 0
    var count = 0
    var label = ""
    init() {}
    static var primaryKey: String? { "identifier" }

    static func make(_ identifier: Int, count: Int) -> Tick {
        var tick = Tick()
        tick.identifier = identifier
        tick.count = count
        tick.label = "tick \(identifier)"
        return tick
    }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
}

/// CLOCK_MONOTONIC in nanoseconds: one clock for every process of the machine.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// One whole line to stdout, unbuffered.
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var done = 0
    while done < bytes.count {
        let wrote = bytes.withUnsafeBytes { write(1, $0.baseAddress! + done, $0.count - done) }
        if wrote <= 0 { if errno == EINTR { continue } else { return } }
        done += wrote
    }
}

func readerConfiguration(interval: Duration = .milliseconds(50)) -> Store.Configuration {
    var configuration = Store.Configuration()
    configuration.access = .readOnly
    configuration.refreshInterval = interval
    return configuration
}

/// This program run again in `role`, with its stdout read line by line.
final class Child {
    let process = Process()
    private let output = Pipe()
    private let input = Pipe()
    private var buffer = Data()

    init(_ role: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = role
        process.standardOutput = output
        process.standardInput = input
        try process.run()
    }

    /// The next line the child prints, nil at its end.
    func line() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer = Data(buffer[(newline + 1)...])
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
    }

    /// Closes its stdin, its signal to stop, and waits for it.
    func finish() -> [String] {
        try? input.fileHandleForWriting.close()
        var lines: [String] = []
        while let line = line() { lines.append(line) }
        process.waitUntilExit()
        return lines
    }
}

/// Waits on a thread of its own until stdin closes.
func stdinClosed() -> Atomic {
    let flag = Atomic()
    Thread.detachNewThread {
        while getchar() != EOF {}
        flag.set()
    }
    return flag
}

final class Atomic: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

// MARK: - Roles

/// `observe <store> <interval-ms>`: prints "seen <count> <ns>" each time the observer wakes.
func observe(path: String, intervalMilliseconds: Int) async throws {
    let store = try Store(path: path, models: [Tick.self], configuration: readerConfiguration(interval: .milliseconds(intervalMilliseconds)))
    let closed = stdinClosed()
    let watcher = Task {
        var first = true
        for try await change in try store.objects(Tick.self).changes {
            let now = monotonicNanoseconds()
            let count = try change.results.all().first { $0.identifier == 0 }?.count ?? -1
            say(first ? "ready" : "seen \(count) \(now)")
            first = false
        }
    }
    while !closed.isSet { try await Task.sleep(for: .milliseconds(20)) }
    watcher.cancel()
    try store.close()
}

/// `lookups <store> <seconds> <seed>`: random primary-key lookups, a refresh every 1,000.
func lookups(path: String, seconds: Double, seed: UInt64) throws {
    let store = try Store(path: path, models: [Tick.self], configuration: readerConfiguration())
    let objects = store.statistics.objectCounts["Tick"] ?? 0
    guard objects > 0 else { throw Failure(description: "no ticks in \(path)") }
    var generator = SplitMix64(seed: seed)
    say("ready")
    let start = monotonicNanoseconds()
    let end = start + UInt64(seconds * 1e9)
    var count = 0, refreshes = 0, found = 0
    while true {
        for _ in 0..<1_000 {
            let key = Int(generator.next() % UInt64(objects))
            if try store.object(Tick.self, primaryKey: key) != nil { found += 1 }
        }
        count += 1_000
        if try store.refresh() { refreshes += 1 }
        if monotonicNanoseconds() >= end { break }
    }
    let elapsed = Double(monotonicNanoseconds() - start) / 1e9
    blackHole(found)
    say("lookups \(count) \(elapsed) \(refreshes)")
    try store.close()
}

/// `write <store>`: commits one changed tick after another until stdin closes; prints the count.
func writeContinuously(path: String) throws {
    let store = try Store(path: path, models: [Tick.self])
    let objects = store.statistics.objectCounts["Tick"] ?? 1
    let closed = stdinClosed()
    var generator = SplitMix64(seed: 28)
    say("ready")
    var commits = 0
    while !closed.isSet {
        let key = Int(generator.next() % UInt64(objects))
        try store.write { try $0.add(Tick.make(key, count: commits)) }
        commits += 1
    }
    try store.close()
    say("commits \(commits)")
}

// MARK: - Cells

func latency(directory: String, commits: Int, intervalMilliseconds: Int) throws -> [Double] {
    let path = "\(directory)/latency-\(intervalMilliseconds).store"
    let writer = try Store(path: path, models: [Tick.self])
    try writer.write { try $0.add(Tick.make(0, count: 0)) }
    let observer = try Child(["observe", path, "\(intervalMilliseconds)"])
    guard observer.line() == "ready" else { throw Failure(description: "the observer did not start") }
    var generator = SplitMix64(seed: UInt64(intervalMilliseconds))
    var samples: [Double] = []
    let pauseLimit = UInt64(max(20, 2 * intervalMilliseconds) * 1_000)
    for count in 1...commits {
        usleep(UInt32(generator.next() % pauseLimit))
        let committed = monotonicNanoseconds()
        try writer.write { try $0.add(Tick.make(0, count: count)) }
        while true {
            guard let line = observer.line() else { throw Failure(description: "the observer ended") }
            let parts = line.split(separator: " ")
            guard parts.count == 3, parts[0] == "seen", let seen = Int(parts[1]), let at = UInt64(parts[2]) else { continue }
            if seen == count {
                samples.append(Double(Int64(bitPattern: at &- committed)) / 1e6)
                break
            }
        }
    }
    _ = observer.finish()
    try writer.close()
    return samples
}

struct Throughput {
    var perReader: [Double]
    var commits: Int
    var total: Double { perReader.reduce(0, +) }
}

func throughput(path: String, readers: Int, withWriter: Bool, seconds: Double) throws -> Throughput {
    let writer = withWriter ? try Child(["write", path]) : nil
    if let writer, writer.line() != "ready" { throw Failure(description: "the writer did not start") }
    let children = try (0..<readers).map { try Child(["lookups", path, "\(seconds)", "\($0 + 1)"]) }
    for child in children where child.line() != "ready" { throw Failure(description: "a reader did not start") }
    var perReader: [Double] = []
    for child in children {
        let lines = child.finish()
        guard let result = lines.last(where: { $0.hasPrefix("lookups ") }) else {
            throw Failure(description: "a reader printed \(lines)")
        }
        let parts = result.split(separator: " ")
        guard parts.count == 4, let count = Double(parts[1]), let elapsed = Double(parts[2]) else { throw Failure(description: result) }
        perReader.append(count / elapsed)
    }
    var commits = 0
    if let writer {
        let lines = writer.finish()
        commits = lines.last(where: { $0.hasPrefix("commits ") }).flatMap { Int($0.dropFirst(8)) } ?? 0
    }
    return Throughput(perReader: perReader, commits: commits)
}

func percentile(_ samples: [Double], _ q: Double) -> Double {
    let sorted = samples.sorted()
    guard !sorted.isEmpty else { return .nan }
    let index = min(sorted.count - 1, Int((q * Double(sorted.count - 1)).rounded(.up)))
    return sorted[index]
}

func format(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }

func orchestrate() throws {
    let options = FlagOptions(
        program: "reader-benchmarks", usage: "reader-benchmarks [--commits N] [--seconds S]",
        flags: ["--commits", "--seconds"])
    let commits = options.positive("--commits", default: 200)
    let seconds = options.positive("--seconds", default: 3.0)
    let directory = NSTemporaryDirectory() + "mirrorstore-reader-bench-\(getpid())"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var load = [Double](repeating: 0, count: 3)
    _ = getloadavg(&load, 3)
    say("reader-benchmarks: \(ProcessInfo.processInfo.activeProcessorCount) cores, load average \(load.map { format($0, 2) }.joined(separator: " ")) at start")

    for interval in [50, 5] {
        let samples = try latency(directory: directory, commits: commits, intervalMilliseconds: interval)
        let summary = Summary(samples)
        say("latency, refresh interval \(interval) ms, \(samples.count) commits: median \(format(summary.median, 2)) ms, p99 \(format(percentile(samples, 0.99), 2)) ms, min \(format(summary.minimum, 2)) ms, max \(format(summary.maximum, 2)) ms")
    }

    let path = "\(directory)/lookups.store"
    do {
        var configuration = Store.Configuration()
        configuration.durability = .none
        let store = try Store(path: path, models: [Tick.self], configuration: configuration)
        try store.write { transaction in
            try transaction.add(contentsOf: (0..<100_000).map { Tick.make($0, count: 0) })
        }
        try store.close()
    }
    let alone = try throughput(path: path, readers: 1, withWriter: false, seconds: seconds)
    say("throughput, 1 reader alone: \(format(alone.total, 0)) lookups/s")
    let beside = try throughput(path: path, readers: 4, withWriter: true, seconds: seconds)
    say("throughput, 4 readers beside a writer: \(format(beside.total, 0)) lookups/s in all (\(beside.perReader.map { format($0, 0) }.joined(separator: ", ")) per reader), \(format(beside.total / alone.total, 2))x one reader alone; the writer made \(beside.commits) durable commits meanwhile")
    var after = [Double](repeating: 0, count: 3)
    _ = getloadavg(&after, 3)
    say("load average \(after.map { format($0, 2) }.joined(separator: " ")) at the end")
}

let arguments = CommandLine.arguments
do {
    switch arguments.count > 1 ? arguments[1] : "" {
    case "observe":
        try await observe(path: arguments[2], intervalMilliseconds: Int(arguments[3]) ?? 50)
    case "lookups":
        try lookups(path: arguments[2], seconds: Double(arguments[3]) ?? 3, seed: UInt64(arguments[4]) ?? 1)
    case "write":
        try writeContinuously(path: arguments[2])
    default:
        try orchestrate()
    }
} catch {
    say("error \(error)")
    exit(1)
}
