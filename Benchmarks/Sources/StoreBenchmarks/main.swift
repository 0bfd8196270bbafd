import BenchmarkSupport
import Foundation

// Store benchmarks: MirrorStore and GRDB 7 (SQLite, Codable records) on the same data in one run.
// See docs/BENCHMARKS.md, "Store versus GRDB".
//
//     swift run -c release --package-path Benchmarks store-benchmarks [options]

struct Options {
    var runs = 5
    var sizes = Sizes()
    var filter: String?
    var directory: String?
    var json: String?
    var combine: [String] = []
    /// Internal: run one cell in this process (`--child CELL`), or build the shared stores
    /// (`--prepare IMPLEMENTATION`).
    var child: Cell?
    var prepare: Implementation?
    var small = false
    var large = false

    static let usage = """
        usage: store-benchmarks [--runs N] [--objects N] [--commits N] [--threads N] [--open-objects N]
                                [--seed N] [--shape NAME] [--filter TEXT] [--directory DIR] [--json FILE]
               store-benchmarks --combine FILE...
          --runs N          repetitions of every cell, medians are taken over them (default 5, at least 1)
          --objects N       objects for insert, fetch-all and lookup (default 100000)
          --commits N       durable single-object commits, sequential and concurrent (default 1000)
          --threads N       committing threads in the concurrent workload (default 4)
          --open-objects N  objects in the store the open workloads open (default 1000000)
          --seed N          seed of the data and of the lookup order (default 20261122)
          --shape NAME      the model every cell stores (default customer): \(Shapes.names)
          --filter TEXT     run only the cells whose name (workload/system) contains TEXT, e.g. "lookup"
                            or "MirrorStore"; workloads: \(Workload.allCases.map(\.rawValue).joined(separator: ", "))
          --directory DIR   scratch directory (default: a new one in the temporary directory, removed after)
          --json FILE       also write every sample to FILE, for --combine
          --encrypted       encrypt every MirrorStore file with a raw key (compare with a run without)
          --combine FILE... print the report of several runs' JSON files: medians of their medians, with ranges
        """

    init(arguments: [String]) throws {
        var iterator = arguments.makeIterator()
        func text(_ flag: String) throws -> String {
            guard let text = iterator.next() else { throw BenchmarkFailure("\(flag) needs a value\n\(Self.usage)") }
            return text
        }
        func number(_ flag: String) throws -> Int {
            guard let value = Int(try text(flag)), value > 0 else {
                throw BenchmarkFailure("\(flag) needs a positive number\n\(Self.usage)")
            }
            return value
        }
        while let argument = iterator.next() {
            switch argument {
            case "--runs": runs = try number(argument)
            case "--objects": sizes.objects = try number(argument)
            case "--commits": sizes.commits = try number(argument)
            case "--threads": sizes.threads = try number(argument)
            case "--open-objects": sizes.openObjects = try number(argument)
            case "--seed":
                guard let seed = UInt64(try text(argument)) else { throw BenchmarkFailure("--seed needs a number") }
                sizes.seed = seed
            case "--shape":
                let name = try text(argument)
                guard Shapes.named(name) != nil else { throw BenchmarkFailure("unknown shape \(name); shapes: \(Shapes.names)") }
                sizes.shape = name
            case "--filter": filter = try text(argument)
            case BenchmarkEncryption.option: BenchmarkEncryption.turnOn()
            case "--directory": directory = try text(argument)
            case "--json": json = try text(argument)
            case "--combine":
                while let file = iterator.next() { combine.append(file) }
            case "--child":
                let name = try text(argument)
                guard let cell = Cell(name: name) else { throw BenchmarkFailure("unknown cell \(name)") }
                child = cell
            case "--prepare":
                let name = try text(argument)
                guard let implementation = Implementation(rawValue: name) else { throw BenchmarkFailure("unknown system \(name)") }
                prepare = implementation
            case "--small": small = true
            case "--large": large = true
            case "--help", "-h":
                print(Self.usage)
                exit(0)
            default:
                throw BenchmarkFailure("unknown argument \(argument)\n\(Self.usage)")
            }
        }
        if (child != nil || prepare != nil) && directory == nil {
            throw BenchmarkFailure("--child and --prepare need --directory")
        }
    }
}

/// Runs one cell on `Model` in this process and reports it.
func runChild<Model: StoreShape>(_ cell: Cell, model: Model.Type, sizes: Sizes, directory: String) throws {
    switch cell.implementation {
    case .mirrorStore:
        try report(CellRunner<MirrorStoreSystem<Model>>(cell: cell, sizes: sizes, directory: directory).run())
    case .grdb, .grdbReadEach:
        try report(CellRunner<GRDBSystem<Model>>(cell: cell, sizes: sizes, directory: directory).run())
    }
}

/// Builds the shared stores of `Model` for one implementation and reports them.
func runPrepare<Model: StoreShape>(_ implementation: Implementation, model: Model.Type, options: Options, directory: String) throws {
    let result = implementation == .mirrorStore
        ? try prepare(MirrorStoreSystem<Model>.self, sizes: options.sizes, directory: directory, small: options.small, large: options.large)
        : try prepare(GRDBSystem<Model>.self, sizes: options.sizes, directory: directory, small: options.small, large: options.large)
    try report(result)
}

/// Prints a child's result as the one line its parent reads.
func report(_ value: some Encodable) throws {
    print("result: " + String(decoding: try JSONEncoder().encode(value), as: UTF8.self))
}

func main() throws {
    let options = try Options(arguments: Array(CommandLine.arguments.dropFirst()))
    #if DEBUG
    FileHandle.standardError.write(Data("warning: this is a debug build; benchmark numbers are meaningless. Use -c release.\n".utf8))
    #endif
    if let cell = options.child, let directory = options.directory {
        try runChild(cell, model: options.sizes.model, sizes: options.sizes, directory: directory)
        return
    }
    if let implementation = options.prepare, let directory = options.directory {
        try runPrepare(implementation, model: options.sizes.model, options: options, directory: directory)
        return
    }
    if !options.combine.isEmpty {
        let runs = try options.combine.map { file in
            try JSONDecoder().decode(RunSummary.self, from: Data(contentsOf: URL(fileURLWithPath: file)))
        }
        print("combined runs:")
        for (file, run) in zip(options.combine, runs) {
            print("  \((file as NSString).lastPathComponent): \(run.date), \(run.repetitions) repetitions, load average \(run.loadBefore) → \(run.loadAfter)")
        }
        print("machine: \(runs[0].machine)\n")
        print(Report(runs: runs).text)
        return
    }
    let summary = try runAll(options: options)
    print(Report(runs: [summary]).text)
    if let json = options.json {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(summary).write(to: URL(fileURLWithPath: json))
    }
}

do {
    try main()
} catch {
    print("error: \(error)")
    exit(1)
}
