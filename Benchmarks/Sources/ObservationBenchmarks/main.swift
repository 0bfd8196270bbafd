import BenchmarkSupport
import Foundation
@_spi(Testing) import MirrorStore

// Live results and the async API, on a file store with durable commits (the default):
//   latency   from `write` returning to an observer of the results receiving the change
//   idle      1,000 commits with no observer, and with 100 observers of another type
//   tasks     durable commits per second from 1, 4 and 16 concurrent tasks (`try await write`)
//
//   swift run -c release --package-path Benchmarks observation-benchmarks [--runs R] [--commits N]

struct Reading: Persistable, Sendable {
    var identifier = 0
    var sensor = ""
    var value = 0.0
    init() {}
    static var primaryKey: String? { "identifier" }

    static func make(_ identifier: Int, value: Double) -> Reading {
        var reading = Reading()
        reading.identifier = identifier
        reading.sensor = "sensor \(identifier % 10)"
        reading.value = value
        return reading
    }
}

struct Note: Persistable, Sendable {
    var identifier = 0
    var text = ""
    init() {}
    static var primaryKey: String? { "identifier" }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
}

let options = FlagOptions(
    program: "observation-benchmarks", usage: "observation-benchmarks [--runs R] [--commits N]",
    flags: ["--runs", "--commits"])
let runs = options.positive("--runs", default: 5)
let commits = options.positive("--commits", default: 1_000)
let directory = NSTemporaryDirectory() + "mirrorstore-observation-bench-\(getpid())"
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: directory) }

func freshStore(_ name: String) throws -> Store {
    let path = "\(directory)/\(name).store"
    for suffix in ["", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    return try Store(path: path, models: [Reading.self, Note.self])
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func percentile(_ samples: [Double], _ p: Double) -> Double {
    let sorted = samples.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

/// Writes one reading at a time and waits for an observer of all readings to receive it.
func latency(commits: Int) async throws -> [Double] {
    let store = try freshStore("latency")
    defer { try? store.close() }
    let clock = ContinuousClock()
    let results = try store.objects(Reading.self)
    var iterator = results.changes.makeAsyncIterator()
    _ = try await iterator.next()
    var samples: [Double] = []
    for identifier in 1...commits {
        try await store.write { try $0.add(Reading.make(identifier, value: Double(identifier))) }
        let returned = clock.now
        guard let change = try await iterator.next(), change.insertions.count == 1 else {
            throw Failure(description: "the observer did not see commit \(identifier)")
        }
        samples.append(seconds(returned.duration(to: clock.now)))
    }
    return samples
}

/// The time of `commits` durable commits of readings, with `observers` tasks observing notes.
func commitsBeside(observers: Int, commits: Int) async throws -> Double {
    let store = try freshStore("idle-\(observers)")
    defer { try? store.close() }
    let notes = try store.objects(Note.self)
    var tasks: [Task<Void, any Error>] = []
    for _ in 0..<observers {
        tasks.append(Task {
            for try await _ in notes.changes {}
        })
    }
    // Every observer registered before the clock starts.
    while store.observerCount < observers { try await Task.sleep(for: .milliseconds(1)) }
    let clock = ContinuousClock()
    let start = clock.now
    for identifier in 1...commits {
        try await store.write { try $0.add(Reading.make(identifier, value: 0)) }
    }
    let elapsed = seconds(start.duration(to: clock.now))
    for task in tasks { task.cancel() }
    for task in tasks { _ = try? await task.value }
    return elapsed
}

/// Durable commits per second from `tasks` concurrent tasks, `commits` in all.
func commitsPerSecond(tasks: Int, commits: Int) async throws -> Double {
    let store = try freshStore("tasks-\(tasks)")
    defer { try? store.close() }
    let each = commits / tasks
    let clock = ContinuousClock()
    let start = clock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for task in 0..<tasks {
            group.addTask {
                for n in 0..<each {
                    let identifier = task * each + n + 1
                    try await store.write { try $0.add(Reading.make(identifier, value: 0)) }
                }
            }
        }
        try await group.waitForAll()
    }
    let elapsed = seconds(start.duration(to: clock.now))
    guard try store.objects(Reading.self).count == each * tasks else { throw Failure(description: "commits were lost") }
    return Double(each * tasks) / elapsed
}

var latencyMedians: [Double] = []
var latencyP99s: [Double] = []
var idleRatios: [Double] = []
var idleBase: [Double] = []
var rates: [Int: [Double]] = [:]
for run in 0..<runs {
    let samples = try await latency(commits: commits)
    latencyMedians.append(percentile(samples, 0.5))
    latencyP99s.append(percentile(samples, 0.99))
    // Alternating which goes first, so drift in the machine does not favour one.
    let none: Double, hundred: Double
    if run % 2 == 0 {
        none = try await commitsBeside(observers: 0, commits: commits)
        hundred = try await commitsBeside(observers: 100, commits: commits)
    } else {
        hundred = try await commitsBeside(observers: 100, commits: commits)
        none = try await commitsBeside(observers: 0, commits: commits)
    }
    idleBase.append(none)
    idleRatios.append(hundred / none)
    for tasks in [1, 4, 16] {
        rates[tasks, default: []].append(try await commitsPerSecond(tasks: tasks, commits: 1_600))
    }
    print("run \(run): latency median \(String(format: "%.1f", latencyMedians.last! * 1e6)) µs, p99 \(String(format: "%.1f", latencyP99s.last! * 1e6)) µs; 100 idle observers \(String(format: "%.3f", idleRatios.last!))×; commits/s \([1, 4, 16].map { String(format: "%.0f", rates[$0]!.last!) })")
}
let microseconds = { (value: Double) in String(format: "%.1f µs", value * 1e6) }
print(markdownTable(["cell", "median of \(runs) runs", "range"], [
    ["latency, write returned → observer received (median of \(commits))", microseconds(Summary(latencyMedians).median),
     "\(microseconds(Summary(latencyMedians).minimum))–\(microseconds(Summary(latencyMedians).maximum))"],
    ["latency p99", microseconds(Summary(latencyP99s).median), "\(microseconds(Summary(latencyP99s).minimum))–\(microseconds(Summary(latencyP99s).maximum))"],
    ["\(commits) durable commits, no observer", String(format: "%.3f s", Summary(idleBase).median), ""],
    ["… with 100 idle observers of another type (ratio)", String(format: "%.3f×", Summary(idleRatios).median),
     String(format: "%.3f–%.3f×", Summary(idleRatios).minimum, Summary(idleRatios).maximum)],
] + [1, 4, 16].map { tasks in
    let summary = Summary(rates[tasks] ?? [])
    return ["durable commits/s, \(tasks) task\(tasks == 1 ? "" : "s")", String(format: "%.0f", summary.median),
            String(format: "%.0f–%.0f", summary.minimum, summary.maximum)]
}))
