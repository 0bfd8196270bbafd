import BenchmarkSupport
import Foundation

// Query and index benchmarks: MirrorStore's Results and secondary indexes against GRDB 7
// (SQLite with the same indexes) on the same 100,000 customers (and 100,000 members for the
// compound-index and case-insensitive cells). See docs/BENCHMARKS.md,
// "Queries and indexes versus GRDB".
//
//     swift run -c release --package-path Benchmarks query-benchmarks [--runs N] [--filter TEXT]

struct QueryOptions {
    var runs = 5
    var sizes = QuerySizes()
    var filter: String?
    var directory: String?
    /// Internal: run one cell (`--child CELL`) or build the shared stores (`--prepare SYSTEM`,
    /// with `--large`, `--members`, `--no-customers` saying which).
    var child: QueryCell?
    var prepare: QuerySystemName?
    var large = false
    var members = false
    var customers = true
    /// The model whose cells run (`--shape`); `--prepare` with `--events` builds the events' store.
    var shape = QueryShape.customers
    var events = false

    static let usage = """
        usage: query-benchmarks [--runs N] [--objects N] [--open-objects N] [--seed N] [--filter TEXT] [--directory DIR]
          --runs N          child processes per cell; medians are taken over them (default 5)
          --objects N       customers queried and inserted, and members queried (default 100000)
          --open-objects N  customers in the store the open cells open (default 1000000)
          --seed N          seed of the data (default 20261123)
          --filter TEXT     run only the cells whose name contains TEXT; workloads: \(QueryWorkload.allCases.map(\.rawValue).joined(separator: ", "))
          --directory DIR   scratch directory (default: a new one in the temporary directory, removed after)
          --shape SHAPE     the model queried: \(QueryShape.allCases.map(\.rawValue).joined(separator: " or ")) (default customers)
          --encrypted       encrypt every MirrorStore file with a raw key (compare with a run without)
        """

    init(arguments: [String]) throws {
        var iterator = arguments.makeIterator()
        func text(_ flag: String) throws -> String {
            guard let text = iterator.next() else { throw QueryBenchmarkFailure("\(flag) needs a value\n\(Self.usage)") }
            return text
        }
        func number(_ flag: String) throws -> Int {
            guard let value = Int(try text(flag)), value > 0 else { throw QueryBenchmarkFailure("\(flag) needs a positive number") }
            return value
        }
        while let argument = iterator.next() {
            switch argument {
            case "--runs": runs = try number(argument)
            case "--objects": sizes.objects = try number(argument)
            case "--open-objects": sizes.openObjects = try number(argument)
            case "--seed":
                guard let seed = UInt64(try text(argument)) else { throw QueryBenchmarkFailure("--seed needs a number") }
                sizes.seed = seed
            case "--filter": filter = try text(argument)
            case BenchmarkEncryption.option: BenchmarkEncryption.turnOn()
            case "--directory": directory = try text(argument)
            case "--child":
                let name = try text(argument)
                guard let cell = QueryCell(name: name) else { throw QueryBenchmarkFailure("unknown cell \(name)") }
                child = cell
            case "--prepare":
                let name = try text(argument)
                guard let system = QuerySystemName(rawValue: name) else { throw QueryBenchmarkFailure("unknown system \(name)") }
                prepare = system
            case "--large": large = true
            case "--members": members = true
            case "--no-customers": customers = false
            case "--events": events = true
            case "--shape":
                let name = try text(argument)
                guard let value = QueryShape(rawValue: name) else { throw QueryBenchmarkFailure("unknown shape \(name)\n\(Self.usage)") }
                shape = value
            case "--help", "-h":
                print(Self.usage)
                exit(0)
            default:
                throw QueryBenchmarkFailure("unknown argument \(argument)\n\(Self.usage)")
            }
        }
        if (child != nil || prepare != nil) && directory == nil {
            throw QueryBenchmarkFailure("--child and --prepare need --directory")
        }
    }
}

func main() throws {
    let options = try QueryOptions(arguments: Array(CommandLine.arguments.dropFirst()))
    #if DEBUG
    FileHandle.standardError.write(Data("warning: this is a debug build; benchmark numbers are meaningless. Use -c release.\n".utf8))
    #endif
    if let cell = options.child, let directory = options.directory {
        let result = switch (cell.system, cell.workload.shape) {
        case (.mirrorStore, .events): try EventCellRunner<MirrorStoreEvents>(cell: cell, sizes: options.sizes, directory: directory).run()
        case (.grdb, .events): try EventCellRunner<GRDBEvents>(cell: cell, sizes: options.sizes, directory: directory).run()
        case (.mirrorStore, .customers): try QueryCellRunner<MirrorStoreQueries>(cell: cell, sizes: options.sizes, directory: directory).run()
        case (.grdb, .customers): try QueryCellRunner<GRDBQueries>(cell: cell, sizes: options.sizes, directory: directory).run()
        }
        print("result: " + String(decoding: try JSONEncoder().encode(result), as: UTF8.self))
        return
    }
    if let system = options.prepare, let directory = options.directory, options.events {
        let built = switch system {
        case .mirrorStore: try prepareEvents(MirrorStoreEvents.self, sizes: options.sizes, directory: directory)
        case .grdb: try prepareEvents(GRDBEvents.self, sizes: options.sizes, directory: directory)
        }
        print("result: " + String(decoding: try JSONEncoder().encode("\(system.rawValue): " + built), as: UTF8.self))
        return
    }
    if let system = options.prepare, let directory = options.directory {
        print("result: " + String(decoding: try JSONEncoder().encode(
            try prepareStores(system, sizes: options.sizes, directory: directory, large: options.large,
                              customers: options.customers, members: options.members)), as: UTF8.self))
        return
    }
    try runQueryCells(options: options)
}

do {
    try main()
} catch {
    print("error: \(error)")
    exit(1)
}
