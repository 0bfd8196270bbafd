import Foundation

// The parent side: builds the shared stores, runs every cell in a child process of its own,
// round-robin over the repetitions, and prints the report.

/// Runs this executable with `arguments` and decodes the `result: ` line it prints.
private func runChild<Decoded: Decodable>(_ arguments: [String], as type: Decoded.Type) throws -> Decoded {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    guard process.terminationStatus == 0, let line = text.split(separator: "\n").last(where: { $0.hasPrefix("result: ") }) else {
        throw QueryBenchmarkFailure("child \(arguments.joined(separator: " ")) failed (status \(process.terminationStatus)):\n\(text)")
    }
    return try JSONDecoder().decode(Decoded.self, from: Data(line.dropFirst("result: ".count).utf8))
}

/// The 1, 5 and 15 minute load averages: other work on the machine shows in the timings.
private func loadAverage() -> String {
    var loads = [0.0, 0.0, 0.0]
    guard getloadavg(&loads, 3) == 3 else { return "unknown" }
    return loads.map { String(format: "%.2f", $0) }.joined(separator: " ")
}

func runQueryCells(options: QueryOptions) throws {
    let cells = QueryCell.all.filter { $0.workload.shape == options.shape }.filter { cell in options.filter.map { cell.name.localizedCaseInsensitiveContains($0) } ?? true }
    guard !cells.isEmpty else { throw QueryBenchmarkFailure("no cell matches \(options.filter ?? "")\n\(QueryOptions.usage)") }
    let directory = options.directory
        ?? FileManager.default.temporaryDirectory.appendingPathComponent("query-benchmarks-\(getpid())").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer {
        if options.directory == nil { try? FileManager.default.removeItem(atPath: directory) }
    }
    let sizes = options.sizes
    print("""
        MirrorStore versus GRDB: queries and indexes (\(Date().formatted(.iso8601)))
        machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory >> 30) GiB, \
        \(ProcessInfo.processInfo.operatingSystemVersionString)
        load average before: \(loadAverage())
        shape: \(options.shape.rawValue); sizes: \(sizes.objects) customers (or events) queried and inserted (and as many members), \(sizes.openObjects) opened; seed \(sizes.seed)
        """)
    fflush(nil)
    let needsLarge = cells.contains { $0.workload.usesLargeStore }
    for system in [QuerySystemName.mirrorStore, .grdb] where cells.contains(where: { $0.system == system }) && options.shape == .events {
        let arguments = ["--prepare", system.rawValue, "--events", "--directory", directory] + sizes.arguments
        print("prepared " + (try runChild(arguments, as: String.self)))
        fflush(nil)
    }
    for system in [QuerySystemName.mirrorStore, .grdb] where cells.contains(where: { $0.system == system }) && options.shape == .customers {
        var arguments = ["--prepare", system.rawValue, "--directory", directory] + sizes.arguments
        if needsLarge { arguments.append("--large") }
        // The members' store only for the cells that read it; the customers' only if another cell runs.
        let systemCells = cells.filter { $0.system == system }
        if systemCells.contains(where: \.workload.usesMembers) { arguments.append("--members") }
        if systemCells.allSatisfy(\.workload.usesMembers) { arguments.append("--no-customers") }
        print("prepared " + (try runChild(arguments, as: String.self)))
        fflush(nil)
    }
    var results: [String: [QueryCellResult]] = [:]
    let started = Date()
    for repetition in 0..<options.runs {
        // The system that goes first alternates, so neither always follows the other.
        let ordered = repetition.isMultiple(of: 2) ? cells : QueryWorkload.allCases.flatMap { workload in
            cells.filter { $0.workload == workload }.reversed()
        }
        for cell in ordered {
            let result = try runChild(["--child", cell.name, "--directory", directory] + sizes.arguments, as: QueryCellResult.self)
            results[cell.name, default: []].append(result)
        }
    }
    print(String(format: "\n%d repetitions timed in %.0f s; load average after: %@\n", options.runs, Date().timeIntervalSince(started), loadAverage()))
    print(QueryReport(sizes: sizes, results: results).text)
}
