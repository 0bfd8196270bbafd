import BenchmarkSupport
import Foundation

// The parent side: builds the shared stores, runs every cell in a child process of its own,
// round-robin over the repetitions, and reports medians, ratios and the brief's targets.

/// Everything one run measured: the raw samples, kept so several runs can be combined.
struct RunSummary: Codable {
    var date: String
    var machine: String
    var loadBefore: String
    var loadAfter: String
    var sizes: Sizes
    var repetitions: Int
    var prepared: [PrepareResult]
    /// Cell name → one result per repetition.
    var results: [String: [CellResult]]
}

/// This executable, to start children of.
private func executablePath() -> String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
}

/// Runs this executable with `arguments` and decodes the `result: ` line it prints.
private func runChild<Decoded: Decodable>(_ arguments: [String], as type: Decoded.Type) throws -> Decoded {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executablePath())
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    guard process.terminationStatus == 0,
          let line = text.split(separator: "\n").last(where: { $0.hasPrefix("result: ") })
    else {
        throw BenchmarkFailure("child \(arguments.joined(separator: " ")) failed (status \(process.terminationStatus)):\n\(text)")
    }
    return try JSONDecoder().decode(Decoded.self, from: Data(line.dropFirst("result: ".count).utf8))
}

/// The CPU model from /proc/cpuinfo.
func cpuModel() -> String {
    guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
          let line = info.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
          let colon = line.firstIndex(of: ":")
    else { return "unknown CPU" }
    return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
}

/// The operating system's name and the kernel's release.
func operatingSystem() -> String {
    var name = "unknown OS"
    if let release = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8),
       let line = release.split(separator: "\n").first(where: { $0.hasPrefix("PRETTY_NAME=") }) {
        name = line.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
    }
    var system = utsname()
    uname(&system)
    let kernel = withUnsafeBytes(of: &system.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    return "\(name), kernel \(kernel)"
}

/// The 1, 5 and 15 minute load averages: other work on the machine shows up in the timings.
func loadAverage() -> String {
    var loads = [0.0, 0.0, 0.0]
    guard getloadavg(&loads, 3) == 3 else { return "unknown" }
    return loads.map { String(format: "%.2f", $0) }.joined(separator: " ")
}

/// One run: prepare, then `repetitions` rounds over the cells.
func runAll(options: Options) throws -> RunSummary {
    let cells = Cell.all.filter { cell in options.filter.map { cell.name.localizedCaseInsensitiveContains($0) } ?? true }
    guard !cells.isEmpty else { throw BenchmarkFailure("no cell matches \(options.filter ?? "")\n\(Options.usage)") }
    let directory = options.directory
        ?? FileManager.default.temporaryDirectory.appendingPathComponent("store-benchmarks-\(getpid())").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer {
        if options.directory == nil { try? FileManager.default.removeItem(atPath: directory) }
    }
    let sizes = options.sizes
    let showsProgress = isatty(STDERR_FILENO) != 0
    func progress(_ text: String) {
        if showsProgress { FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8)) }
    }

    var summary = RunSummary(
        date: Date().formatted(.iso8601),
        machine: "\(cpuModel()), \(ProcessInfo.processInfo.activeProcessorCount) cores, "
            + "\(ProcessInfo.processInfo.physicalMemory >> 30) GiB, \(operatingSystem())",
        loadBefore: loadAverage(), loadAfter: "", sizes: sizes, repetitions: options.runs, prepared: [], results: [:])
    print("""
        MirrorStore versus GRDB: store benchmarks (\(summary.date))
        machine: \(summary.machine)
        load average before: \(summary.loadBefore)
        model: \(sizes.model.shapeSummary) (--shape \(sizes.model.shapeName))
        sizes: \(formatCount(sizes.objects)) objects (insert, fetch-all, lookup), \(formatCount(sizes.commits)) commits, \
        \(sizes.threads) threads × \(formatCount(sizes.commitsPerThread)) commits, \(formatCount(sizes.openObjects)) objects (open); seed \(sizes.seed)
        scratch directory: \(directory)
        """)
    fflush(nil)

    // The shared stores for the read workloads, built and verified once per run.
    let needsSmall = cells.contains { $0.workload == .fetchAll || $0.workload == .lookup }
    let needsLarge = cells.contains { $0.workload == .open || $0.workload == .openCold }
    for implementation in [Implementation.mirrorStore, .grdb] {
        let used = cells.contains { ($0.implementation == .mirrorStore) == (implementation == .mirrorStore) }
        guard used else { continue }
        progress("preparing \(implementation.rawValue)…")
        var arguments = ["--prepare", implementation.rawValue, "--directory", directory] + sizes.arguments
        if needsSmall { arguments.append("--small") }
        if needsLarge { arguments.append("--large") }
        let prepared = try runChild(arguments, as: PrepareResult.self)
        summary.prepared.append(prepared)
        var built: [String] = []
        if let bytes = prepared.smallBytes, let seconds = prepared.smallSeconds {
            built.append("\(formatCount(sizes.objects)) in \(formatSeconds(seconds)) (\(formatBytes(Double(bytes))))")
        }
        if let bytes = prepared.largeBytes, let seconds = prepared.largeSeconds {
            built.append("\(formatCount(sizes.openObjects)) in \(formatSeconds(seconds)) (\(formatBytes(Double(bytes))))")
        }
        progress("")
        print("\(prepared.implementation): \(prepared.note)"
            + (built.isEmpty ? "" : "; shared stores built and verified (\(prepared.verified) objects, every field): "
                + built.joined(separator: ", ")))
    }
    print("""
        every cell runs in a child process of its own: \(options.runs) repetition\(options.runs == 1 ? "" : "s"), round-robin over the cells, \
        the system that goes first alternating; each child checks what it reads or wrote against the fixtures
        """)
    fflush(nil)

    let started = Date()
    for repetition in 0..<options.runs {
        // Alternate which system goes first within each workload, so neither always follows the other.
        let ordered = repetition.isMultiple(of: 2) ? cells : Workload.allCases.flatMap { workload in
            cells.filter { $0.workload == workload }.reversed()
        }
        for cell in ordered {
            progress("repetition \(repetition + 1)/\(options.runs): \(cell.name)")
            let result = try runChild(["--child", cell.name, "--directory", directory] + sizes.arguments, as: CellResult.self)
            summary.results[cell.name, default: []].append(result)
        }
    }
    progress("")
    summary.loadAfter = loadAverage()
    print(String(format: "timed in %.0f s; load average after: %@\n", Date().timeIntervalSince(started), summary.loadAfter))
    return summary
}

/// The tables and verdicts of one run, or of several combined (medians of their medians, with
/// the range over the runs in brackets).
struct Report {
    let runs: [RunSummary]

    private var sizes: Sizes { runs[0].sizes }

    /// A cell's per-run medians of `value`.
    private func perRun(_ cell: Cell, _ value: (CellResult) -> Double?) -> [Double] {
        runs.compactMap { run in
            let values = (run.results[cell.name] ?? []).compactMap(value)
            return values.isEmpty ? nil : median(values)
        }
    }

    private func secondsPerOperation(_ cell: Cell) -> [Double] {
        perRun(cell) { $0.seconds / Double($0.operations) }
    }

    /// GRDB's time over MirrorStore's, per run: how many times faster MirrorStore is.
    private func ratios(_ workload: Workload, against implementation: Implementation = .grdb) -> [Double] {
        let store = secondsPerOperation(Cell(workload, .mirrorStore))
        let other = secondsPerOperation(Cell(workload, implementation))
        guard store.count == other.count else { return [] }
        return zip(other, store).map { $0 / $1 }
    }

    /// One figure: the median, and its spread (within a run) or range (over runs).
    private func show(_ values: [Double], spread cell: Cell? = nil, _ format: (Double) -> String) -> String {
        guard !values.isEmpty else { return "–" }
        let summary = Summary(values)
        if runs.count > 1 {
            let (low, high) = (format(summary.minimum), format(summary.maximum))
            return low == high ? format(summary.median) : "\(format(summary.median)) [\(low)–\(high)]"
        }
        if let cell, let samples = runs[0].results[cell.name], samples.count > 1 {
            let spread = Summary(samples.map { $0.seconds / Double($0.operations) }).relativeSpread
            return "\(format(summary.median)) ±\(String(format: "%.1f", spread * 100))%"
        }
        return format(summary.median)
    }

    private func verdict(_ values: [Double], _ isMet: (Double) -> Bool) -> String {
        values.isEmpty ? "–" : (isMet(median(values)) ? "met" : "**NOT MET**")
    }

    var text: String {
        var lines: [String] = []
        let header = runs.count > 1
            ? "median of the \(runs.count) runs' medians [lowest–highest]"
            : "median of \(runs[0].repetitions) repetition\(runs[0].repetitions == 1 ? "" : "s") ± half the interquartile range"

        // Timings.
        let rows: [(label: String, workload: Workload, other: Implementation, per: String)] = [
            ("insert \(formatCount(sizes.objects)), one transaction", .insert, .grdb, "object"),
            ("fetch all \(formatCount(sizes.objects)), mapped to models", .fetchAll, .grdb, "object"),
            ("lookup by primary key (GRDB: one read block)", .lookup, .grdb, "lookup"),
            ("lookup by primary key (GRDB: a read block each)", .lookup, .grdbReadEach, "lookup"),
            ("\(formatCount(sizes.commits)) durable single-object commits", .commit, .grdb, "commit"),
            ("\(sizes.threads) threads × \(formatCount(sizes.commitsPerThread)) durable commits", .concurrent, .grdb, "commit"),
            ("open \(formatCount(sizes.openObjects)) and read one (file cached)", .open, .grdb, "open"),
            ("open \(formatCount(sizes.openObjects)) and read one (file evicted)", .openCold, .grdb, "open"),
        ]
        var table: [[String]] = []
        for row in rows {
            let store = Cell(row.workload, .mirrorStore), other = Cell(row.workload, row.other)
            let storeValues = secondsPerOperation(store), otherValues = secondsPerOperation(other)
            guard !storeValues.isEmpty || !otherValues.isEmpty else { continue }
            table.append([
                row.label, "per \(row.per)",
                show(storeValues, spread: store, formatSeconds),
                show(otherValues, spread: other, formatSeconds),
                show(ratios(row.workload, against: row.other), formatRatio),
            ])
        }
        lines.append("time per operation, \(header); ratio = GRDB / MirrorStore (above 1: MirrorStore is faster)\n")
        lines.append(markdownTable(["workload", "unit", "MirrorStore", "GRDB", "ratio"], table) + "\n")

        // Concurrency: total time and throughput.
        let concurrencyRows = [Workload.commit, .concurrent].compactMap { workload -> [String]? in
            let store = perRun(Cell(workload, .mirrorStore)) { $0.seconds }
            let grdb = perRun(Cell(workload, .grdb)) { $0.seconds }
            guard !store.isEmpty || !grdb.isEmpty else { return nil }
            let commits = Double(workload == .commit ? sizes.commits : sizes.threads * sizes.commitsPerThread)
            let label = workload == .commit
                ? "1 thread × \(formatCount(sizes.commits))"
                : "\(sizes.threads) threads × \(formatCount(sizes.commitsPerThread))"
            let rate: (Double) -> String = { String(format: "%.0f/s", $0) }
            return [label, show(store, formatSeconds), show(store.map { commits / $0 }, rate),
                    show(grdb, formatSeconds), show(grdb.map { commits / $0 }, rate)]
        }
        if !concurrencyRows.isEmpty {
            lines.append("durable commits: total time and commits per second (GRDB's DatabaseQueue serializes writes)\n")
            lines.append(markdownTable(
                ["commits", "MirrorStore total", "MirrorStore commits/s", "GRDB total", "GRDB commits/s"], concurrencyRows) + "\n")
        }

        // Files.
        var fileRows: [[String]] = []
        func fileRow(_ label: String, _ store: [Double], _ sqlite: [Double], objects: Int) {
            guard !store.isEmpty, !sqlite.isEmpty else { return }
            let perObject: (Double) -> String = { formatBytes($0) + String(format: " (%.1f B/object)", $0 / Double(objects)) }
            fileRows.append([label, show(store, perObject), show(sqlite, perObject),
                             show(zip(sqlite, store).map { $0 / $1 }, formatRatio)])
        }
        func prepared(_ implementation: Implementation, _ value: (PrepareResult) -> Int?) -> [Double] {
            runs.compactMap { run in
                run.prepared.first { $0.implementation == implementation.rawValue }.flatMap(value).map(Double.init)
            }
        }
        let insertStore = perRun(Cell(.insert, .mirrorStore)) { $0.fileBytes.map(Double.init) }
        let insertSQLite = perRun(Cell(.insert, .grdb)) { $0.fileBytes.map(Double.init) }
        fileRow("\(formatCount(sizes.objects)) objects, one transaction",
                insertStore.isEmpty ? prepared(.mirrorStore, \.smallBytes) : insertStore,
                insertSQLite.isEmpty ? prepared(.grdb, \.smallBytes) : insertSQLite, objects: sizes.objects)
        fileRow("\(formatCount(sizes.openObjects)) objects, transactions of 100,000",
                prepared(.mirrorStore, \.largeBytes), prepared(.grdb, \.largeBytes), objects: sizes.openObjects)
        fileRow("\(formatCount(sizes.commits)) objects, one commit each",
                perRun(Cell(.commit, .mirrorStore)) { $0.fileBytes.map(Double.init) },
                perRun(Cell(.commit, .grdb)) { $0.fileBytes.map(Double.init) }, objects: sizes.commits)
        if !fileRows.isEmpty {
            lines.append("file size after close (MirrorStore: the store; SQLite: the database plus any -journal/-wal/-shm); ratio = SQLite / MirrorStore\n")
            lines.append(markdownTable(["data", "MirrorStore", "SQLite", "ratio"], fileRows) + "\n")
        }

        // Memory of the open store.
        let openCells = [Workload.open, .openCold].filter { !perRun(Cell($0, .mirrorStore)) { $0.allocatedGrowth.map(Double.init) }.isEmpty }
        var openRows: [[String]] = []
        if let workload = openCells.first {
            let objects = Double(sizes.openObjects)
            let totalAndPerObject: (Double) -> String = { formatBytes($0) + String(format: " (%.1f B/object)", $0 / objects) }
            for (label, value) in [
                ("malloc'ed and still allocated", { (result: CellResult) in result.allocatedGrowth.map(Double.init) }),
                ("resident set growth", { (result: CellResult) in result.residentGrowth.map(Double.init) }),
            ] {
                openRows.append([label, show(perRun(Cell(workload, .mirrorStore), value), totalAndPerObject),
                                 show(perRun(Cell(workload, .grdb), value), totalAndPerObject)])
            }
            lines.append("memory held by an open store of \(formatCount(sizes.openObjects)) after reading one object "
                + "(\(workload.rawValue); malloc statistics: glibc mallinfo2 before and after)\n")
            lines.append(markdownTable(["", "MirrorStore", "GRDB"], openRows) + "\n")
        }

        // Peak memory per cell.
        var memoryRows: [[String]] = []
        let mebibytes: (Double) -> String = { String(format: "%.1f MiB", $0 / 1_048_576) }
        for workload in Workload.allCases {
            let implementations: [Implementation] = workload == .lookup ? [.mirrorStore, .grdb, .grdbReadEach] : [.mirrorStore, .grdb]
            for implementation in implementations {
                let cell = Cell(workload, implementation)
                let peak = perRun(cell) { Double($0.peakResident) }
                guard !peak.isEmpty else { continue }
                let growth = perRun(cell) { Double(max(0, $0.peakResident - $0.residentBefore)) }
                memoryRows.append([cell.name, show(peak, mebibytes), show(growth, mebibytes)])
            }
        }
        if !memoryRows.isEmpty {
            lines.append("peak memory of each cell's process during its timed section (VmHWM, reset just before it), "
                + "and its growth over the resident set at the start of the section\n")
            lines.append(markdownTable(["cell", "peak resident", "growth during the section"], memoryRows) + "\n")
        }

        // Targets.
        var targets: [[String]] = []
        func target(_ name: String, _ values: [Double], _ format: (Double) -> String, _ isMet: (Double) -> Bool) {
            guard !values.isEmpty else { return }
            targets.append([name, show(values, format), verdict(values, isMet)])
        }
        target("insert: MirrorStore ≥ 5× faster than GRDB", ratios(.insert), formatRatio) { $0 >= 5 }
        target("fetch all: ≥ 3× faster", ratios(.fetchAll), formatRatio) { $0 >= 3 }
        target("lookup: ≥ 40× faster than fetchOne (one read block)", ratios(.lookup), formatRatio) { $0 >= 40 }
        target("lookup: ≥ 40× faster than fetchOne (a read block each)", ratios(.lookup, against: .grdbReadEach), formatRatio) { $0 >= 40 }
        target("durable single-object commit: no slower than GRDB", ratios(.commit), formatRatio) { $0 >= 1 }
        target("open \(formatCount(sizes.openObjects)) and read one, file cached: ≤ 3× GRDB's time",
               ratios(.open).map { 1 / $0 }, formatRatio) { $0 <= 3 }
        target("open \(formatCount(sizes.openObjects)) and read one, file evicted: ≤ 3× GRDB's time",
               ratios(.openCold).map { 1 / $0 }, formatRatio) { $0 <= 3 }
        let indexBytes = perRun(Cell(.open, .mirrorStore)) { $0.allocatedGrowth.map { Double($0) / Double(sizes.openObjects) } }
        target("memory held by the open store ≤ 8 bytes/object (malloc'ed by open)", indexBytes, { String(format: "%.1f B", $0) }) { $0 <= 8 }
        if let smallStore = fileRows.first, smallStore.count == 4 {
            let store = insertStore.isEmpty ? prepared(.mirrorStore, \.smallBytes) : insertStore
            let sqlite = insertSQLite.isEmpty ? prepared(.grdb, \.smallBytes) : insertSQLite
            target("file size, \(formatCount(sizes.objects)): ≤ 1/1.2 of SQLite's", zip(sqlite, store).map { $0 / $1 }, formatRatio) { $0 >= 1.2 }
        }
        let largeStore = prepared(.mirrorStore, \.largeBytes), largeSQLite = prepared(.grdb, \.largeBytes)
        target("file size, \(formatCount(sizes.openObjects)): ≤ 1/1.2 of SQLite's",
               zip(largeSQLite, largeStore).map { $0 / $1 }, formatRatio) { $0 >= 1.2 }
        if !targets.isEmpty {
            lines.append("targets (from the brief), judged on the median\n")
            lines.append(markdownTable(["target", "measured", "verdict"], targets))
        }
        return lines.joined(separator: "\n")
    }
}
