import BenchmarkSupport
import Foundation
import MirrorStore

// Migrating a store of contacts from version 1 to version 2 of an app: one renamed property,
// one property combined from two, one added property. The parent writes the version-1 store
// once; each run migrates a fresh copy in a child process of its own, so that run's peak
// resident set is its own.
//
//   swift run -c release --package-path Benchmarks migration-benchmarks [--objects N] [--runs R]

struct ContactV1: Persistable {
    var identifier = 0
    var name = ""
    var firstName = ""
    var lastName = ""
    var age = 0
    init() {}
    static var primaryKey: String? { "identifier" }
    static var persistedTypeName: String { "Contact" }
}

struct ContactV2: Persistable, Equatable {
    var identifier = 0
    var displayName = ""
    var fullName = ""
    var age = 0
    var email = ""
    init() {}
    static var primaryKey: String? { "identifier" }
    static var persistedTypeName: String { "Contact" }
}

func contact(_ n: Int) -> ContactV1 {
    var contact = ContactV1()
    contact.identifier = n
    contact.name = "contact \(n)"
    contact.firstName = "First\(n % 1000)"
    contact.lastName = "Last\(n / 1000)"
    contact.age = n % 90
    return contact
}

func configuration(version: Int) -> Store.Configuration {
    var configuration = Store.Configuration()
    configuration.schemaVersion = version
    configuration.durability = .none
    configuration.migration = { migration, oldSchemaVersion in
        guard oldSchemaVersion < 2 else { return }
        try migration.renameProperty(onType: "Contact", from: "name", to: "displayName")
        try migration.enumerateObjects(ofType: "Contact") { old, new in
            let first: String = try old.value(forProperty: "firstName")
            let last: String = try old.value(forProperty: "lastName")
            try new.setValue("\(first) \(last)", forProperty: "fullName")
        }
    }
    return configuration
}

struct Failure: Error, CustomStringConvertible {
    let description: String
}

/// The child: migrates the store at `path`, timed, then checks it. Prints one line:
/// `seconds residentBefore peakResident`.
func child(path: String, objects: Int) throws {
    ResidentSet.resetPeak()
    let before = ResidentSet.current().current
    let clock = ContinuousClock()
    let start = clock.now
    let store = try Store(path: path, models: [ContactV2.self], configuration: configuration(version: 2))
    try store.close()
    let elapsed = start.duration(to: clock.now).components
    let peak = max(ResidentSet.current().peak, before)
    let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18

    let check = try Store(path: path, models: [ContactV2.self], configuration: configuration(version: 2))
    guard try check.objects(ContactV2.self).count == objects else { throw Failure(description: "wrong count after the migration") }
    var generator = SplitMix64(seed: 0x5EED_0903)
    for _ in 0..<200 {
        let n = Int(generator.next() % UInt64(objects)) + 1
        let old = contact(n)
        let migrated = try check.object(ContactV2.self, primaryKey: n)
        guard migrated?.displayName == old.name, migrated?.fullName == "\(old.firstName) \(old.lastName)",
              migrated?.age == old.age, migrated?.email == "" else {
            throw Failure(description: "contact \(n) was not migrated as expected: \(String(describing: migrated))")
        }
    }
    try check.close()
    print(seconds, before, peak)
}

/// Writes a version-1 store of `objects` contacts.
func populate(_ path: String, objects: Int) throws {
    let store = try Store(path: path, models: [ContactV1.self], configuration: configuration(version: 1))
    var next = 1
    while next <= objects {
        let end = min(objects, next + 49_999)
        try store.write { transaction in
            for n in next...end { try transaction.add(contact(n)) }
        }
        next = end + 1
    }
    try store.close()
}

func parent(objects: Int, runs: Int) throws {
    let directory = NSTemporaryDirectory() + "mirrorstore-migration-bench-\(getpid())"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let pristine = directory + "/v1.store"
    try populate(pristine, objects: objects)
    let fileSize = (try FileManager.default.attributesOfItem(atPath: pristine)[.size] as? Int) ?? 0

    var seconds: [Double] = []
    var growth: [Double] = []
    for run in 0..<runs {
        let copy = directory + "/run-\(run).store"
        try FileManager.default.copyItem(atPath: pristine, toPath: copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        process.arguments = ["--child", copy, "--objects", String(objects)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let fields = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
        guard process.terminationStatus == 0, fields.count == 3 else {
            throw Failure(description: "run \(run) failed: \(String(decoding: data, as: UTF8.self))")
        }
        seconds.append(fields[0])
        growth.append(max(0, fields[2] - fields[1]))
        print("run \(run): \(String(format: "%.3f", fields[0])) s, peak growth \(Int(growth.last ?? 0) >> 20) MiB")
    }
    let time = Summary(seconds)
    let memory = Summary(growth)
    let mebibytes = { (bytes: Double) in String(format: "%.0f MiB", bytes / 1_048_576) }
    print(markdownTable(
        ["objects", "file", "migration time (median)", "quartiles", "peak memory growth (median)", "growth / file"],
        [[String(objects), mebibytes(Double(fileSize)), String(format: "%.2f s", time.median),
          String(format: "%.2f–%.2f s", time.lowerQuartile, time.upperQuartile), mebibytes(memory.median),
          String(format: "%.2f", memory.median / Double(max(1, fileSize)))]]))
}

let options = FlagOptions(
    program: "migration-benchmarks",
    usage: "migration-benchmarks [--objects N] [--runs R] | --keep PATH [--objects N] | --open-only PATH",
    flags: ["--objects", "--runs", "--keep", "--open-only", "--child"])

do {
    let objects = options.positive("--objects", default: 1_000_000)
    if let path = options.text("--keep") {
        // Writes the version-1 store at `path` and leaves it, for profiling a migration of it.
        try populate(path, objects: objects)
    } else if let path = options.text("--open-only") {
        // The baseline: opening the same version-1 store with its own models, migrating nothing.
        ResidentSet.resetPeak()
        let before = ResidentSet.current().current
        let clock = ContinuousClock()
        let start = clock.now
        try Store(path: path, models: [ContactV1.self], configuration: configuration(version: 1)).close()
        let elapsed = start.duration(to: clock.now).components
        print(Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18, before, max(ResidentSet.current().peak, before))
    } else if let path = options.text("--child") {
        try child(path: path, objects: objects)
    } else {
        try parent(objects: objects, runs: options.positive("--runs", default: 5))
    }
} catch {
    print("error: \(error)")
    exit(1)
}
