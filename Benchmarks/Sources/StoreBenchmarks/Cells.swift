import Foundation

/// What a cell does; see docs/BENCHMARKS.md, "Store versus GRDB".
enum Workload: String, CaseIterable, Codable {
    /// `objects` objects in one transaction, into a new store.
    case insert
    /// The same objects in one transaction in a seeded random order of their keys, as an app
    /// whose keys are not increasing writes them.
    case insertShuffled = "insert-shuffled"
    /// Every object of a store of `objects`, mapped to models.
    case fetchAll = "fetch-all"
    /// Each of `objects` objects by primary key, in a seeded random order.
    case lookup
    /// `commits` durable transactions of one object each, one after the other.
    case commit
    /// `commits` durable single-object transactions from `threads` threads at once.
    case concurrent
    /// Opening a store of `openObjects` objects and reading one, its file in the page cache.
    case open
    /// The same with the file dropped from the page cache first.
    case openCold = "open-cold"

    /// What one operation is, for per-operation figures.
    var operation: String {
        switch self {
        case .insert, .insertShuffled, .fetchAll: "object"
        case .lookup: "lookup"
        case .commit, .concurrent: "commit"
        case .open, .openCold: "open"
        }
    }
}

enum Implementation: String, CaseIterable, Codable {
    case mirrorStore = "MirrorStore"
    case grdb = "GRDB"
    /// GRDB with each primary-key lookup in its own `read` block (lookup only).
    case grdbReadEach = "GRDB-read-each"
}

/// One measured combination: a workload run by one implementation, in a child process.
struct Cell: Hashable {
    let workload: Workload
    let implementation: Implementation

    var name: String { "\(workload.rawValue)/\(implementation.rawValue)" }

    init(_ workload: Workload, _ implementation: Implementation) {
        self.workload = workload
        self.implementation = implementation
    }

    init?(name: String) {
        guard let cell = Cell.all.first(where: { $0.name == name }) else { return nil }
        self = cell
    }

    /// Every cell, in the order a run goes through them.
    static let all: [Cell] = Workload.allCases.flatMap { workload -> [Cell] in
        workload == .lookup
            ? [Cell(workload, .mirrorStore), Cell(workload, .grdb), Cell(workload, .grdbReadEach)]
            : [Cell(workload, .mirrorStore), Cell(workload, .grdb)]
    }
}

/// The sizes and the seed, shared by the parent and its children.
struct Sizes: Codable {
    var objects = 100_000
    var commits = 1_000
    var threads = 4
    var openObjects = 1_000_000
    var seed: UInt64 = 20_261_122
    /// The model's ``StoreShape/shapeName``; nil (as in runs from before shapes) is `Customer`.
    var shape: String?

    /// The model the cells store.
    var model: any StoreShape.Type { shape.flatMap(Shapes.named) ?? Customer.self }

    /// The same sizes as command-line arguments, for a child.
    var arguments: [String] {
        ["--objects", "\(objects)", "--commits", "\(commits)", "--threads", "\(threads)",
         "--open-objects", "\(openObjects)", "--seed", "\(seed)", "--shape", model.shapeName]
    }

    /// Commits per thread in the concurrent workload (the total is rounded down to a multiple).
    var commitsPerThread: Int { max(1, commits / threads) }
}

/// What a child reports for one cell.
struct CellResult: Codable {
    var cell: String
    var seconds: Double
    var operations: Int
    /// Resident set just before the timed section, and its peak during it (bytes).
    var residentBefore: Int
    var peakResident: Int
    /// The store's files after `close()` (insert, commit, concurrent).
    var fileBytes: Int?
    /// Open: malloc'ed bytes left allocated by opening and reading one object.
    var allocatedGrowth: Int?
    /// Open: resident set after opening and reading one object, minus before.
    var residentGrowth: Int?
    /// Objects whose fields were checked against the fixtures.
    var verified: Int
}

/// What a child reports after building the stores the read workloads share.
struct PrepareResult: Codable {
    var implementation: String
    var note: String
    var smallBytes: Int?
    var smallSeconds: Double?
    var largeBytes: Int?
    var largeSeconds: Double?
    var verified: Int
}

/// Where the shared stores live in the scratch directory.
func preparedPath(directory: String, shape: String, objects: Int, fileExtension: String) -> String {
    "\(directory)/\(shape)-\(objects).\(fileExtension)"
}
