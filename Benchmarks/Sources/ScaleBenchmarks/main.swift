import BenchmarkSupport
import Foundation
import MirrorStore
// `verifyStoreFile`, which the `mirrorstore verify` command runs.
import MirrorStoreEngine

// A store of messages at scale (issue 26): created, reopened, queried by key, by index range,
// sorted first 20 and the first screen (20 newest by an indexed date, one by an indexed
// sender), compacted, migrated and verified, each step in a child process of its own so that
// its time and peak resident set are its own.
//
//   swift run -c release --package-path Benchmarks scale-benchmarks [--objects N] [--directory DIR]

struct MessageV1: Persistable {
    var id = 0
    var sender = ""
    var text = ""
    var sentAt = Date(timeIntervalSince1970: 0)
    var isRead = false
    init() {}
    static var primaryKey: String? { "id" }
    static var indexedProperties: [String] { ["sentAt", "sender"] }
    static var persistedTypeName: String { "Message" }
}

/// Version 2: one added property, filled by the migration.
struct MessageV2: Persistable {
    var id = 0
    var sender = ""
    var text = ""
    var sentAt = Date(timeIntervalSince1970: 0)
    var isRead = false
    var preview = ""
    init() {}
    static var primaryKey: String? { "id" }
    static var indexedProperties: [String] { ["sentAt", "sender"] }
    static var persistedTypeName: String { "Message" }
}

/// Message `n`: senders repeat (about 20 messages each), dates are a shuffled second each.
func message(_ n: Int) -> MessageV1 {
    var message = MessageV1()
    message.id = n
    message.sender = "sender\((n &* 7_919) % max(1, objects / 20))@example.com"
    message.text = "message \(n) about \(n % 977) things, \(String(repeating: "x", count: n % 40))"
    message.sentAt = Date(timeIntervalSince1970: 1_700_000_000 + Double((n &* 104_729) % objects))
    message.isRead = n % 3 == 0
    return message
}

func configuration(version: Int) -> Store.Configuration {
    var configuration = Store.Configuration()
    configuration.schemaVersion = version
    configuration.durability = .none
    configuration.compaction = .manual
    configuration.migration = { migration, oldSchemaVersion in
        guard oldSchemaVersion < 2 else { return }
        try migration.enumerateObjects(ofType: "Message") { old, new in
            let text: String = try old.value(forProperty: "text")
            try new.setValue(String(text.prefix(12)), forProperty: "preview")
        }
    }
    return configuration
}

struct Failure: Error, CustomStringConvertible {
    let description: String
}

let options = FlagOptions(
    program: "scale-benchmarks", usage: "scale-benchmarks [--objects N] [--directory DIR]",
    flags: ["--objects", "--directory", "--step", "--path"])
let objects = options.positive("--objects", default: 10_000_000)
let clock = ContinuousClock()

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = clock.now
    try body()
    let elapsed = start.duration(to: clock.now).components
    return Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
}

/// Runs step `name` on the store at `path` in this process; prints `seconds peakGrowth
/// anonymousPeakGrowth cpuSeconds detail` (the processor time, user and system, tells the work
/// apart from waiting on a loaded machine). The resident set counts the pages of the mapped file a step
/// touched, which the kernel may drop; its anonymous part (`RssAnon`) is the heap's.
func step(_ name: String, path: String) throws {
    ResidentSet.resetPeak()
    let before = ResidentSet.current().current
    let anonymousBefore = AnonymousPeak.current()
    let anonymous = AnonymousPeak()
    var detail = ""
    let time: Double
    switch name {
    case "create":
        time = try seconds {
            let store = try Store(path: path, models: [MessageV1.self], configuration: configuration(version: 1))
            var next = 1
            while next <= objects {
                let end = min(objects, next + 99_999)
                try store.write { transaction in
                    for n in next...end { try transaction.add(message(n)) }
                }
                next = end + 1
            }
            try store.close()
        }
    case "open":
        var found: MessageV1?
        time = try seconds {
            let store = try Store(path: path, models: [MessageV1.self], configuration: configuration(version: 1))
            found = try store.object(MessageV1.self, primaryKey: objects / 2)
            try store.close()
        }
        guard found?.text == message(objects / 2).text else { throw Failure(description: "open: message \(objects / 2) reads wrong") }
    case "open-migrated":
        var found: MessageV2?
        time = try seconds {
            let store = try Store(path: path, models: [MessageV2.self], configuration: configuration(version: 2))
            found = try store.object(MessageV2.self, primaryKey: objects / 2)
            try store.close()
        }
        guard found?.text == message(objects / 2).text else { throw Failure(description: "open: message \(objects / 2) reads wrong") }
    case "first-screen":
        var newest: [MessageV1] = []
        var bySender: [MessageV1] = []
        let sender = message(objects / 3).sender
        time = try seconds {
            let store = try Store(path: path, models: [MessageV1.self], configuration: configuration(version: 1))
            newest = Array(try store.objects(MessageV1.self).sorted(using: SortDescriptor(\.sentAt, order: .reverse)).prefix(20))
            bySender = Array(try store.objects(MessageV1.self).filter(#Predicate { $0.sender == sender }).prefix(1))
            try store.close()
        }
        guard newest.count == 20, newest.first?.sentAt == Date(timeIntervalSince1970: 1_700_000_000 + Double(objects - 1)),
              bySender.first?.sender == sender else { throw Failure(description: "first screen reads wrong") }
    case "queries":
        let store = try Store(path: path, models: [MessageV1.self], configuration: configuration(version: 1))
        var generator = SplitMix64(seed: 0x5CA1E)
        let keys = (0..<1_000).map { _ in Int(generator.next() % UInt64(objects)) + 1 }
        var read = 0
        let lookup = try seconds {
            for key in keys { read += try store.object(MessageV1.self, primaryKey: key) == nil ? 0 : 1 }
        } / Double(keys.count)
        let start = Date(timeIntervalSince1970: 1_700_000_000 + Double(objects / 2))
        let end = start.addingTimeInterval(1_000)
        var inRange = 0
        let range = try seconds {
            for _ in 0..<10 {
                inRange = try store.objects(MessageV1.self).filter(#Predicate { $0.sentAt >= start && $0.sentAt < end })
                    .sorted(using: SortDescriptor(\.sentAt)).all().count
            }
        } / 10
        var first: [MessageV1] = []
        let sorted = try seconds {
            for _ in 0..<100 { first = Array(try store.objects(MessageV1.self).sorted(using: SortDescriptor(\.sentAt)).prefix(20)) }
        } / 100
        try store.close()
        guard read == keys.count, inRange == 1_000, first.count == 20 else {
            throw Failure(description: "queries read \(read) of \(keys.count), \(inRange) in the range, \(first.count) first")
        }
        time = lookup
        detail = String(format: "lookup %.2f µs, range of 1,000 sorted and mapped %.2f ms, sorted first 20 %.1f µs", lookup * 1e6, range * 1e3, sorted * 1e6)
    case "compact":
        time = try seconds {
            let store = try Store(path: path, models: [MessageV1.self], configuration: configuration(version: 1))
            try store.compact()
            try store.close()
        }
    case "migrate":
        var migrated: MessageV2?
        time = try seconds {
            let store = try Store(path: path, models: [MessageV2.self], configuration: configuration(version: 2))
            migrated = try store.object(MessageV2.self, primaryKey: 7)
            try store.close()
        }
        guard migrated?.preview == String(message(7).text.prefix(12)) else { throw Failure(description: "migrate: message 7 reads wrong") }
    case "verify":
        var report = ""
        time = try seconds {
            report = try verifyStoreFile(at: path).description
        }
        guard report.contains("is intact") else { throw Failure(description: "verify: \(report)") }
    default:
        throw Failure(description: "unknown step \(name)")
    }
    let peak = max(ResidentSet.current().peak, before)
    let anonymousPeak = max(anonymous.stop(), anonymousBefore)
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    print(time, peak - before, anonymousPeak - anonymousBefore, cpu, detail)
}

func parent(directory: String) throws {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let path = directory + "/messages.store"
    for file in [path, path + ".lock"] { try? FileManager.default.removeItem(atPath: file) }
    print("scale: \(objects) messages with two indexes (sentAt, sender); \(Date().formatted(.iso8601)); load average \(loadAverage())")
    var rows: [[String]] = []
    for name in ["create", "open", "first-screen", "queries", "compact", "open", "migrate", "open-migrated", "verify"] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        process.arguments = ["--step", name, "--path", path, "--objects", String(objects)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let fields = text.split(separator: " ", maxSplits: 4)
        guard process.terminationStatus == 0, fields.count >= 4, let time = Double(fields[0]), let growth = Double(fields[1]),
              let anonymousGrowth = Double(fields[2]), let cpu = Double(fields[3]) else {
            throw Failure(description: "step \(name) failed: \(text)")
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        let shown = name == "queries" ? String(fields.count > 4 ? fields[4] : "") : String(format: time < 1 ? "%.1f ms" : "%.2f s", time < 1 ? time * 1e3 : time)
        rows.append([
            name, shown, String(format: "%.2f s", cpu), String(format: "%.0f MiB", growth / 1_048_576), String(format: "%.0f MiB", anonymousGrowth / 1_048_576),
            String(format: "%.0f MiB", Double(size) / 1_048_576),
        ])
        print("\(name): \(shown), processor \(String(format: "%.2f s", cpu)), peak resident growth \(Int(growth) >> 20) MiB, anonymous \(Int(anonymousGrowth) >> 20) MiB, file \(size >> 20) MiB")
        fflush(nil)
    }
    print("load average after: \(loadAverage())\n")
    print(markdownTable(["step", "time", "processor time", "peak resident growth", "anonymous peak growth", "file after"], rows))
}

func loadAverage() -> String {
    (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
}

do {
    if let name = options.text("--step"), let path = options.text("--path") {
        try step(name, path: path)
    } else {
        let directory = options.text("--directory") ?? NSTemporaryDirectory() + "mirrorstore-scale-\(getpid())"
        try parent(directory: directory)
        if options.text("--directory") == nil { try? FileManager.default.removeItem(atPath: directory) }
    }
} catch {
    FileHandle.standardError.write(Data("scale-benchmarks: \(error)\n".utf8))
    exit(1)
}
