import Foundation

/// What a query cell does; see docs/BENCHMARKS.md, "Queries and indexes versus GRDB".
enum QueryWorkload: String, CaseIterable, Codable {
    /// `email == x` on the unique index: one customer, mapped to a model.
    case equal
    /// `createdAt` in a window holding about 1% (1,000 of 100,000), sorted by `createdAt`, mapped.
    case range
    /// Every customer sorted by `createdAt`, the first 20 mapped.
    case first20 = "first-20"
    /// `city == x` on the unindexed `city`: every customer tested, about 1% match, mapped.
    case scan
    /// `age < -50 || city == x`, unindexed: a negative literal tested on every customer (the
    /// predicate holds a minus applied to 50), about 1% match, mapped.
    case scanNegative = "scan-negative"
    /// `score * 2 - 100 > x`, unindexed: arithmetic on every customer, about 1% match, mapped.
    case scanArithmetic = "scan-arithmetic"
    /// The number of customers with `createdAt` in a window holding about 10%.
    case count
    /// The sum of the unindexed `score` over every customer.
    case sum
    /// The mean of the unindexed `age` over every customer.
    case average
    /// The greatest `createdAt`, an indexed property, over every customer.
    case max
    /// 100,000 customers in one transaction into a new store with both indexes.
    case insert
    /// Opening a store of `openObjects` customers with both indexes (rebuilt on open), reading one.
    case open
    /// The same store without secondary indexes: the baseline of the index memory.
    case openPlain = "open-plain"
    /// An app's first screen on the store of `openObjects` customers, its file in the page
    /// cache: open, the 20 newest by the indexed `createdAt`, one customer by the indexed
    /// `email`, all mapped.
    case firstScreen = "first-screen"
    /// The same with the store's file evicted from the page cache first.
    case firstScreenEvicted = "first-screen-evicted"
    /// The first query of the type after opening the store of `openObjects` customers (the open
    /// itself untimed): `email == x`, one customer mapped. Costs what the query costs, not what
    /// the type holds.
    case firstQuery = "first-query"
    /// `team == t && number == n` on the members' unique compound index over (`team`,
    /// `number`): one member, mapped to a model.
    case compoundEqual = "compound-equal"
    /// Names starting with a 3-letter prefix, ignoring case, on the members' index of folded
    /// names (GRDB: `LIKE 'prefix%'` on a `NOCASE` index): about 6 members, by `id`, mapped.
    case insensitivePrefix = "insensitive-prefix"
    /// The events' cells (`--shape events`), on a store of `Event`s of their own:
    /// `sequence == n` on the unique index of an `Int`: one event, mapped.
    case eventEqual = "event-equal"
    /// `kind == k` on the index of an `Int`: about 10 events, by primary key, mapped.
    case eventKind = "event-kind"
    /// `sequence` in a range of 1,000 values, sorted by `sequence`, mapped.
    case eventRange = "event-range"
    /// Every event sorted by the indexed `startsAt`, the first 20 mapped.
    case eventFirst20 = "event-first-20"
    /// Every event sorted by `startsAt` descending, the first 20 mapped.
    case eventNewest20 = "event-newest-20"
    /// The events of one `category` (from about 23% of the events to about 0.6%) sorted by
    /// `startsAt` descending, the first 20 mapped.
    case eventNewest20InCategory = "event-newest-20-category"
    /// As `eventNewest20`, each query after a commit inserting one event (untimed), so nothing
    /// a read kept of the index's earlier state applies.
    case eventNewest20AfterInsert = "event-newest-20-after-insert"

    /// The systems that run it: the open cells measure MirrorStore's own index rebuild.
    var systems: [QuerySystemName] {
        switch self {
        case .open, .openPlain, .firstQuery: [.mirrorStore]
        default: [.mirrorStore, .grdb]
        }
    }

    /// Which model the cell queries.
    var shape: QueryShape {
        rawValue.hasPrefix("event-") ? .events : .customers
    }

    /// Whether the cell opens the store of `openObjects` customers.
    var usesLargeStore: Bool {
        switch self {
        case .open, .openPlain, .firstQuery, .firstScreen, .firstScreenEvicted: true
        default: false
        }
    }

    /// Whether the cell reads the members' store rather than the customers'.
    var usesMembers: Bool {
        switch self {
        case .compoundEqual, .insensitivePrefix: true
        default: false
        }
    }

    /// What one operation is, for the tables.
    var operation: String {
        switch self {
        case .insert: "object"
        case .open, .openPlain, .firstScreen, .firstScreenEvicted: "open"
        default: "query"
        }
    }
}

/// The model a cell queries, chosen with `--shape`.
enum QueryShape: String, CaseIterable, Codable {
    /// `Customer` (and `Member` for the compound and insensitive cells): the published cells.
    case customers
    /// `Event`: another key type, integer and skewed string indexes, optionals, an embedded struct.
    case events
}

enum QuerySystemName: String, Codable {
    case mirrorStore = "MirrorStore"
    case grdb = "GRDB"
}

/// One measured combination, run in a child process of its own.
struct QueryCell: Hashable {
    let workload: QueryWorkload
    let system: QuerySystemName

    var name: String { "\(workload.rawValue)/\(system.rawValue)" }

    init(_ workload: QueryWorkload, _ system: QuerySystemName) {
        self.workload = workload
        self.system = system
    }

    init?(name: String) {
        guard let cell = Self.all.first(where: { $0.name == name }) else { return nil }
        self = cell
    }

    static let all: [QueryCell] = QueryWorkload.allCases.flatMap { workload in
        workload.systems.map { QueryCell(workload, $0) }
    }
}

/// The sizes and the seed, shared by the parent and its children.
struct QuerySizes: Codable {
    var objects = 100_000
    var openObjects = 1_000_000
    var seed: UInt64 = 20_261_123

    var arguments: [String] {
        ["--objects", "\(objects)", "--open-objects", "\(openObjects)", "--seed", "\(seed)"]
    }
}

/// What a child reports for one cell.
struct QueryCellResult: Codable {
    var cell: String
    /// Wall-clock seconds per operation (a query, an inserted object, an open).
    var seconds: Double
    /// CPU seconds of the process per operation, over the same span.
    var cpuSeconds: Double
    /// Operations timed.
    var operations: Int
    /// Results checked against the fixtures before timing.
    var verified: Int
    /// The plan each system reported for the cell's query (MirrorStore's `Results.plan`,
    /// SQLite's `EXPLAIN QUERY PLAN`).
    var plan: String
    /// Open: malloc'ed bytes left allocated by opening the store and reading one customer.
    var allocatedGrowth: Int?
    /// Insert: growth of the peak resident set over the transaction (VmHWM, reset just before it).
    var peakGrowth: Int?
}

/// Where the stores the read cells share live in the scratch directory: `customers` (and, for
/// the open cells, `plain`) for the customers, `members` for the compound and insensitive cells.
func sharedStorePath(directory: String, name: String, objects: Int, fileExtension: String) -> String {
    "\(directory)/\(name)-\(objects).\(fileExtension)"
}
