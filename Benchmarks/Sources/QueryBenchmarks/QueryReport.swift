import BenchmarkSupport
import Foundation

/// The tables of one run: every sample, the medians, GRDB / MirrorStore ratios, the targets and
/// the index memory.
struct QueryReport {
    let sizes: QuerySizes
    /// Cell name → one result per repetition.
    let results: [String: [QueryCellResult]]

    private func medianSeconds(_ cell: QueryCell, _ value: (QueryCellResult) -> Double = \.seconds) -> Double? {
        guard let samples = results[cell.name], !samples.isEmpty else { return nil }
        return Summary(samples.map(value)).median
    }

    private func ratio(_ workload: QueryWorkload, _ value: (QueryCellResult) -> Double = \.seconds) -> Double? {
        guard let grdb = medianSeconds(QueryCell(workload, .grdb), value),
              let store = medianSeconds(QueryCell(workload, .mirrorStore), value) else { return nil }
        return grdb / store
    }

    static func format(seconds: Double) -> String {
        switch seconds {
        case ..<1e-6: String(format: "%.0f ns", seconds * 1e9)
        case ..<1e-3: String(format: "%.2f µs", seconds * 1e6)
        case ..<1: String(format: "%.2f ms", seconds * 1e3)
        default: String(format: "%.2f s", seconds)
        }
    }

    var text: String {
        var lines: [String] = []
        var sampleRows: [[String]] = []
        for cell in QueryCell.all {
            guard let samples = results[cell.name], !samples.isEmpty else { continue }
            let summary = Summary(samples.map(\.seconds))
            sampleRows.append([
                cell.name, "\(Self.format(seconds: summary.median)) per \(cell.workload.operation)",
                Self.format(seconds: Summary(samples.map(\.cpuSeconds)).median),
                samples.map { Self.format(seconds: $0.seconds) }.joined(separator: ", "),
                "\(samples[0].operations)", "\(samples[0].verified)",
            ])
        }
        lines.append("every sample (wall-clock seconds per operation, one child process each), and the median CPU time\n")
        lines.append(markdownTable(["cell", "median", "median CPU", "samples", "operations timed", "checked"], sampleRows) + "\n")

        var plans: [[String]] = []
        for cell in QueryCell.all {
            guard let plan = results[cell.name]?.first?.plan, !plan.isEmpty else { continue }
            plans.append([cell.name, plan])
        }
        lines.append("plans, asserted by each child before timing\n")
        lines.append(markdownTable(["cell", "plan"], plans) + "\n")

        let targets: [(QueryWorkload, String, Double)] = [
            (.equal, "equality on an indexed property, one match, mapped", 20),
            (.range, "indexed range returning ~1,000, sorted by it, mapped", 3),
            (.first20, "sorted by an indexed property, first 20", 10),
            (.scan, "unindexed predicate over 100,000, 1% match, mapped", 2),
            (.scanNegative, "unindexed, a negative literal (age < -50 || city == x), 1% match, mapped", 2),
            (.scanArithmetic, "unindexed arithmetic (score * 2 - 100 > x), 1% match, mapped", 2),
            (.count, "count with a predicate on an indexed property (~10,000)", 5),
            (.insert, "insert 100,000 in one transaction, two indexes", 3),
            (.sum, "sum of an unindexed Double over every customer", 1),
            (.average, "mean of an unindexed Int over every customer", 1),
            (.max, "max of an indexed property", 10),
            (.compoundEqual, "equality on two properties with a compound index, one match, mapped", 10),
            (.insensitivePrefix, "case-insensitive 3-letter prefix on an indexed property, ~6 matches by id, mapped", 10),
            // At most 3× GRDB's time: a ratio of at least 1/3.
            (.firstScreen, "first screen of \(sizes.openObjects) customers: open, 20 newest by an index, one by an indexed string", 1.0 / 3),
            (.firstScreenEvicted, "the same, the file evicted from the page cache", 1.0 / 3),
            // The events' shape, under the targets of the customers' cells they repeat.
            (.eventEqual, "events: equality on an indexed Int, one match, mapped", 20),
            (.eventKind, "events: equality on an indexed Int, ~10 matches by key, mapped", 20),
            (.eventRange, "events: indexed Int range returning 1,000, sorted by it, mapped", 3),
            (.eventFirst20, "events: sorted by an indexed Date, first 20", 10),
            (.eventNewest20, "events: sorted by an indexed Date descending, first 20", 10),
            (.eventNewest20InCategory, "events: one category (skewed), sorted by an indexed Date descending, first 20", 10),
            (.eventNewest20AfterInsert, "events: first 20 descending, each after a commit of one insert (untimed)", 10),
        ]
        var rows: [[String]] = []
        for (workload, text, target) in targets {
            guard let store = medianSeconds(QueryCell(workload, .mirrorStore)), let grdb = medianSeconds(QueryCell(workload, .grdb)),
                  let ratio = ratio(workload), let cpuRatio = self.ratio(workload, \.cpuSeconds) else { continue }
            rows.append([text, Self.format(seconds: store), Self.format(seconds: grdb), String(format: "%.1f×", ratio),
                         String(format: "%.1f×", cpuRatio), String(format: target < 1 ? "≥ %.2f×" : "≥ %.0f×", target), ratio >= target ? "met" : "missed"])
        }
        if !rows.isEmpty {
            lines.append("medians, GRDB time / MirrorStore time; the verdict is on the wall clock\n")
            lines.append(markdownTable(["cell", "MirrorStore", "GRDB", "ratio", "CPU-time ratio", "target", "verdict"], rows) + "\n")
        }

        var insertMemory: [[String]] = []
        for system in QueryWorkload.insert.systems {
            let growth = (results[QueryCell(.insert, system).name] ?? []).compactMap { $0.peakGrowth.map(Double.init) }
            guard !growth.isEmpty else { continue }
            insertMemory.append([QueryCell(.insert, system).name, String(format: "%.1f MiB", Summary(growth).median / 1_048_576)])
        }
        if !insertMemory.isEmpty {
            lines.append("peak memory growth inserting \(sizes.objects) customers in one transaction, two indexes (VmHWM, reset just before it)\n")
            lines.append(markdownTable(["cell", "median growth"], insertMemory) + "\n")
        }

        let open = results[QueryCell(.open, .mirrorStore).name] ?? []
        let plain = results[QueryCell(.openPlain, .mirrorStore).name] ?? []
        if !open.isEmpty {
            let indexed = Summary(open.compactMap { $0.allocatedGrowth.map(Double.init) }).median
            var memory = [["open \(sizes.openObjects) customers with two indexes, read one", Self.format(seconds: Summary(open.map(\.seconds)).median),
                           String(format: "%.1f", indexed / Double(sizes.openObjects))]]
            if !plain.isEmpty {
                let bare = Summary(plain.compactMap { $0.allocatedGrowth.map(Double.init) }).median
                memory.append(["the same without secondary indexes", Self.format(seconds: Summary(plain.map(\.seconds)).median),
                               String(format: "%.1f", bare / Double(sizes.openObjects))])
                memory.append(["→ index memory, bytes per object per index", "",
                               String(format: "%.1f", (indexed - bare) / Double(sizes.openObjects) / 2)])
            }
            lines.append("open (file in the page cache): time, and malloc'ed bytes the open left allocated (mallinfo2), per object\n")
            lines.append(markdownTable(["cell", "median time", "bytes per object"], memory))
        }
        let first = results[QueryCell(.firstQuery, .mirrorStore).name] ?? []
        if !first.isEmpty {
            lines.append("\nthe first query of the type after opening \(sizes.openObjects) customers (the open untimed): "
                + "`email == x`, one customer mapped: median \(Self.format(seconds: Summary(first.map(\.seconds)).median))\n")
        }
        return lines.joined(separator: "\n")
    }
}
