import BenchmarkSupport
import Foundation
import MirrorStore

// Model ↔ record mapping benchmarks: hand-written translators, MirrorStore, a naive per-instance
// Mirror walk and Codable JSON, side by side in one run. See docs/BENCHMARKS.md.
//
//     swift run -c release --package-path Benchmarks mapping-benchmarks [options]

struct Options {
    var runs = 21
    var warmup = 2
    var flatObjects = 10_000
    var nestedObjects = 1_000
    var filter: String?

    static let usage = """
        usage: mapping-benchmarks [--runs N] [--warmup N] [--flat-objects N] [--nested-objects N] [--filter TEXT]
          --runs N            timed runs per cell, medians are taken over them (default 21, at least 3)
          --warmup N          untimed runs of every cell first (default 2)
          --flat-objects N    distinct User objects per batch (default 10000)
          --nested-objects N  distinct Order objects per batch (default 1000)
          --filter TEXT       time only cells whose name (workload/implementation/direction) contains TEXT,
                              e.g. "nested/MirrorStore" to profile one implementation
        """

    init(arguments: [String]) throws {
        var iterator = arguments.makeIterator()
        func number(_ flag: String) throws -> Int {
            guard let text = iterator.next(), let value = Int(text), value > 0 else {
                throw VerificationFailure(description: "\(flag) needs a positive number\n\(Self.usage)")
            }
            return value
        }
        while let argument = iterator.next() {
            switch argument {
            case "--runs": runs = max(3, try number(argument))
            case "--warmup": warmup = try number(argument)
            case "--flat-objects": flatObjects = try number(argument)
            case "--nested-objects": nestedObjects = try number(argument)
            case "--filter":
                guard let text = iterator.next() else { throw VerificationFailure(description: Self.usage) }
                filter = text
            case "--help", "-h":
                print(Self.usage)
                exit(0)
            default:
                throw VerificationFailure(description: "unknown argument \(argument)\n\(Self.usage)")
            }
        }
    }
}

/// The CPU model from /proc/cpuinfo, or "unknown CPU" elsewhere.
func cpuModel() -> String {
    guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
          let line = info.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
          let colon = line.firstIndex(of: ":")
    else { return "unknown CPU" }
    return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
}

/// The 1, 5 and 15 minute load averages: other work on the machine shows up in the timings.
func loadAverage() -> String {
    var loads = [0.0, 0.0, 0.0]
    guard getloadavg(&loads, 3) == 3 else { return "unknown" }
    return loads.map { String(format: "%.2f", $0) }.joined(separator: " ")
}

func main() throws {
    let options = try Options(arguments: Array(CommandLine.arguments.dropFirst()))
    #if DEBUG
    print("warning: this is a debug build; benchmark numbers are meaningless. Use -c release.\n")
    #endif

    // The one-time cost reflection pays per model type, before any conversion: measured first,
    // while the plan cache is still empty.
    let userPlanTime = try nanoseconds { _ = try User.objectSchema() }
    let orderPlanTime = try nanoseconds { _ = try Order.objectSchema() }

    let users = (0..<options.flatObjects).map(Fixtures.user)
    let orders = (0..<options.nestedObjects).map(Fixtures.order)

    // Correctness first: every implementation round-trips every fixture, the three record
    // producers agree record for record, and a few fields are read back without trusting them.
    let userMappings = (
        HandWrittenUserMapping(), MirrorStoreMapping<User>(), NaiveMirrorMapping<User>(), CodableMapping<User>())
    let orderMappings = (
        HandWrittenOrderMapping(), MirrorStoreMapping<Order>(), NaiveMirrorMapping<Order>(), CodableMapping<Order>())
    let handUsers = try verifyRoundTrip(userMappings.0, users, label: "flat")
    let storeUsers = try verifyRoundTrip(userMappings.1, users, label: "flat")
    let naiveUsers = try verifyRoundTrip(userMappings.2, users, label: "flat")
    let jsonUsers = try verifyRoundTrip(userMappings.3, users, label: "flat")
    try verifySameRecords(handUsers, storeUsers, "hand-written", "MirrorStore")
    try verifySameRecords(naiveUsers, storeUsers, "naive Mirror", "MirrorStore")
    try spotCheck(users: users, records: storeUsers, json: jsonUsers)
    let handOrders = try verifyRoundTrip(orderMappings.0, orders, label: "nested")
    let storeOrders = try verifyRoundTrip(orderMappings.1, orders, label: "nested")
    let naiveOrders = try verifyRoundTrip(orderMappings.2, orders, label: "nested")
    let jsonOrders = try verifyRoundTrip(orderMappings.3, orders, label: "nested")
    try verifySameRecords(handOrders, storeOrders, "hand-written", "MirrorStore")
    try verifySameRecords(naiveOrders, storeOrders, "naive Mirror", "MirrorStore")
    try spotCheck(orders: orders, records: storeOrders)
    var notes: [String] = []
    let userSchema = try User.objectSchema()
    let orderSchema = try Order.objectSchema()
    if HandWritten.userSchema != userSchema || HandWritten.orderSchema != orderSchema {
        notes.append("note: the hand-written schemas differ from MirrorStore's (flags only; records were checked equal)")
    }

    var cells = makeCells(userMappings.0, .flat, models: users, stored: handUsers)
        + makeCells(userMappings.1, .flat, models: users, stored: storeUsers)
        + makeCells(userMappings.2, .flat, models: users, stored: naiveUsers)
        + makeCells(userMappings.3, .flat, models: users, stored: jsonUsers)
        + makeCells(orderMappings.0, .nested, models: orders, stored: handOrders)
        + makeCells(orderMappings.1, .nested, models: orders, stored: storeOrders)
        + makeCells(orderMappings.2, .nested, models: orders, stored: naiveOrders)
        + makeCells(orderMappings.3, .nested, models: orders, stored: jsonOrders)
    if let filter = options.filter {
        cells = cells.filter { $0.name.localizedCaseInsensitiveContains(filter) }
        guard !cells.isEmpty else { throw VerificationFailure(description: "no cell matches \(filter)") }
    }

    let loadBefore = loadAverage()
    print("""
        MirrorStore mapping benchmarks (\(Date().formatted(.iso8601)))
        machine: \(cpuModel()), \(ProcessInfo.processInfo.activeProcessorCount) cores, \
        \(ProcessInfo.processInfo.physicalMemory >> 30) GiB; load average before: \(loadBefore)
        verified: every implementation round-trips all \(users.count) User and \(orders.count) Order fixtures; \
        hand-written, MirrorStore and naive Mirror records are identical
        flat model User: 8 fields (Int, String ×2, Int, Double, Bool, Date, String?), batches of \(options.flatObjects) distinct objects
        nested model Order: 4 scalars, Address? link, [LineItem] × 10, [String] × 3, Set<Int> × 3, batches of \(options.nestedObjects) distinct objects
        JSON size (Codable, default options): \(jsonUsers.map(\.count).reduce(0, +) / max(1, jsonUsers.count)) bytes per User, \
        \(jsonOrders.map(\.count).reduce(0, +) / max(1, jsonOrders.count)) bytes per Order
        \(options.warmup) warm-up runs, then \(options.runs) timed runs of every cell, round-robin; monotonic clock
        one-time MirrorStore plan build (first objectSchema()): User \(formatNanoseconds(userPlanTime / 1000)) µs, \
        Order (with Address, LineItem) \(formatNanoseconds(orderPlanTime / 1000)) µs
        """)
    notes.forEach { print($0) }
    fflush(nil)  // the header shows before the runs start, even when piped
    let showsProgress = isatty(STDERR_FILENO) != 0
    let started = Date()
    let samples = try measure(cells, runs: options.runs, warmup: options.warmup) { run in
        if showsProgress { FileHandle.standardError.write(Data("\rrun \(run)/\(options.runs)".utf8)) }
    }
    if showsProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    print(String(format: "timed in %.1f s; load average after: ", Date().timeIntervalSince(started)) + loadAverage() + "\n")

    let report = Report(cells: cells, samples: samples, runs: options.runs)
    print(report.text)
}

/// The tables, ratios and target verdicts of one run.
struct Report {
    private var wall: [String: Summary] = [:]
    private var cpu: [String: Summary] = [:]
    let runs: Int

    init(cells: [Cell], samples: [[Sample]], runs: Int) {
        self.runs = runs
        for (cell, cellSamples) in zip(cells, samples) {
            wall[cell.name] = Summary(cellSamples.map(\.wall))
            cpu[cell.name] = Summary(cellSamples.map(\.cpu))
        }
    }

    private static func key(_ workload: Workload, _ implementation: Implementation, _ direction: Direction) -> String {
        "\(workload.rawValue)/\(implementation.rawValue)/\(direction.rawValue)"
    }

    private func ratio(
        _ table: [String: Summary], _ workload: Workload, _ numerator: Implementation,
        _ denominator: Implementation, _ direction: Direction
    ) -> Double? {
        guard let a = table[Self.key(workload, numerator, direction)]?.median,
              let b = table[Self.key(workload, denominator, direction)]?.median else { return nil }
        return a / b
    }

    static let ratios: [(label: String, numerator: Implementation, denominator: Implementation)] = [
        ("MirrorStore / hand-written", .mirrorStore, .handWritten),
        ("naive Mirror / MirrorStore", .naiveMirror, .mirrorStore),
        ("Codable / MirrorStore", .codable, .mirrorStore),
    ]

    var text: String {
        var lines: [String] = []
        var verdicts: [String] = []
        for workload in Workload.allCases {
            let present = Implementation.allCases.filter { implementation in
                Direction.allCases.contains { wall[Self.key(workload, implementation, $0)] != nil }
            }
            guard !present.isEmpty else { continue }
            lines.append("\(workload.rawValue) model: median ns/object over \(runs) runs (± half the interquartile range)\n")
            let rows = present.map { implementation in
                [implementation.rawValue] + Direction.allCases.map { direction in
                    guard let summary = wall[Self.key(workload, implementation, direction)] else { return "–" }
                    return "\(formatNanoseconds(summary.median)) ±\(String(format: "%.1f", summary.relativeSpread * 100))%"
                }
            }
            lines.append(markdownTable(["implementation"] + Direction.allCases.map(\.rawValue), rows) + "\n")

            let ratioRows = Self.ratios.compactMap { label, numerator, denominator -> [String]? in
                let cells = Direction.allCases.map { direction in
                    ratio(wall, workload, numerator, denominator, direction).map(formatRatio) ?? "–"
                }
                return cells.allSatisfy { $0 == "–" } ? nil : [label] + cells
            }
            if !ratioRows.isEmpty {
                lines.append(markdownTable(["ratio of medians"] + Direction.allCases.map(\.rawValue), ratioRows))
                let cpuRatios = Self.ratios.compactMap { label, numerator, denominator -> String? in
                    let cells = Direction.allCases.compactMap { ratio(cpu, workload, numerator, denominator, $0) }
                    return cells.count == Direction.allCases.count ? "\(label) \(cells.map(formatRatio).joined(separator: " · "))" : nil
                }
                if !cpuRatios.isEmpty {
                    lines.append("same ratios in thread CPU time: " + cpuRatios.joined(separator: "; "))
                }
                lines.append("")
            }

            // The brief's targets, judged on the round trip (model → record → model): 1.25×
            // hand-written for both workloads, 20× Codable for the flat one.
            let handLimit = 1.25
            let codableFactor = 20.0
            if let measured = ratio(wall, workload, .mirrorStore, .handWritten, .roundTrip) {
                let cpuText = ratio(cpu, workload, .mirrorStore, .handWritten, .roundTrip).map { " (CPU time \(formatRatio($0)))" } ?? ""
                verdicts.append("\(workload.rawValue): MirrorStore round trip ≤ \(formatRatio(handLimit)) hand-written: "
                    + "\(formatRatio(measured))\(cpuText) — \(measured <= handLimit ? "MET" : "NOT MET")")
            }
            if workload == .flat, let measured = ratio(wall, workload, .codable, .mirrorStore, .roundTrip) {
                let cpuText = ratio(cpu, workload, .codable, .mirrorStore, .roundTrip).map { " (CPU time \(formatRatio($0)))" } ?? ""
                verdicts.append("\(workload.rawValue): MirrorStore round trip ≥ \(formatRatio(codableFactor)) faster than Codable "
                    + "encode+decode: \(formatRatio(measured))\(cpuText) — \(measured >= codableFactor ? "MET" : "NOT MET")")
            }
        }
        if !verdicts.isEmpty {
            lines.append("targets (from the brief; see docs/BENCHMARKS.md), on the monotonic clock:")
            lines += verdicts.map { "  " + $0 }
        }
        return lines.joined(separator: "\n")
    }
}

do {
    try main()
} catch {
    print("error: \(error)")
    exit(1)
}
