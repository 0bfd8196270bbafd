// MirrorStore's PostgreSQL backend against hand-written postgres-nio SQL doing the same work, on
// the same server and the same table (issue 30, "Must show": the mapping layer's overhead).
//
//     bash Backends/MirrorStorePostgres/Scripts/with-postgres.sh \
//         swift run -c release --package-path Backends/MirrorStorePostgres mirrorstore-postgres-benchmarks [--objects N] [--runs R]
//
// Both sides use the table `PostgresStore.open` creates for `BenchItem` ("id" bigint primary key,
// "name" text COLLATE "C", "category" bigint with its index, "score" and "created" double
// precision). The hand-written side binds parameters, runs the same statements in the same
// transactions (an upsert per object, BEGIN … COMMIT) and decodes rows into `BenchItem` by hand.
// Each cell prints the median of the runs (with the range), per operation, and the ratio
// MirrorStore / hand-written. Then lookups, queries and commits run once more with the sides
// alternating operation by operation, each figure the median of the operations' times: load
// that comes and goes on a shared machine then falls on both sides alike; a control row runs the
// hand-written query through two clients alternating the same way, which should read about 1×.
// MirrorStore runs its reads as statements prepared once per connection and shape; the
// hand-written side sends its statements unprepared, as `query` does, and a last row compares
// the query with a hand-written prepared statement (`PostgresPreparedStatement`).
// Both sides' answers are compared; a difference exits 1.
import Foundation
import MirrorStore
import MirrorStorePostgres
import PostgresNIO

/// The model both sides store and read.
struct BenchItem: Persistable, Equatable {
    var id = 0
    var name = ""
    var category = 0
    var score = 0.0
    var created = Date(timeIntervalSinceReferenceDate: 0)
    static var primaryKey: String? { "id" }
    static var indexedProperties: [String] { ["category"] }

    /// The `index`th object of the data set: every field depends on it.
    static func sample(_ index: Int, categories: Int) -> BenchItem {
        BenchItem(
            id: index, name: "item \(index)", category: index % categories, score: Double(index) * 0.5,
            created: Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(index)))
    }
}

/// A failure of the benchmark, said in one sentence.
struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
}

// MARK: Arguments

func usage() -> Never {
    FileHandle.standardError.write(Data("""
        usage: mirrorstore-postgres-benchmarks [--objects N] [--runs R]
               mirrorstore-postgres-benchmarks --profile \(ProfileMode.allCases.map(\.rawValue).joined(separator: "|")) [--operations N] [--objects N]

        """.utf8))
    exit(2)
}

var objects = 10_000
var runs = 3
/// With `--profile`, the one kind of operation to run (see `Profile.swift`), and how many.
var profileMode: ProfileMode?
var profileOperations = 1_000
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    guard let text = arguments.popFirst() else { usage() }
    if flag == "--profile" {
        guard let mode = ProfileMode(rawValue: text) else { usage() }
        profileMode = mode
        continue
    }
    guard let value = Int(text), value >= 0 else { usage() }
    switch flag {
    case "--objects" where value > 0: objects = value
    case "--runs" where value > 0: runs = value
    case "--operations": profileOperations = value
    default: usage()
    }
}
guard let settings = PostgresSettings.fromEnvironment() else {
    FileHandle.standardError.write(Data("mirrorstore-postgres-benchmarks: set MIRRORSTORE_POSTGRES_HOST, _PORT, _USER and _DATABASE (Scripts/with-postgres.sh does)\n".utf8))
    exit(2)
}

let categories = max(1, objects / 10)                // about ten objects per category
let lookups = min(objects, 2_000)
let queries = min(categories, 500)
let commits = 500
/// How many lookups, queries and commits each side runs in the interleaved cells.
let interleavedOperations = 1_000
let items = (0..<objects).map { BenchItem.sample($0, categories: categories) }
/// The keys looked up and the categories queried: the same scattered sequence for both sides.
let lookupKeys = (0..<lookups).map { ($0 &* 7_919) % objects }
let queryCategories = (0..<queries).map { ($0 &* 104_729) % categories }

// MARK: The hand-written side

/// The same work in hand-written SQL through postgres-nio, with bound parameters.
enum Hand {
    static let logger: Logger = {
        var logger = Logger(label: "mirrorstore-postgres-benchmarks")
        logger.logLevel = .critical
        return logger
    }()

    static let upsertSQL = """
        INSERT INTO "BenchItem" ("id", "name", "category", "score", "created") VALUES ($1, $2, $3, $4, $5) \
        ON CONFLICT ("id") DO UPDATE SET "name" = EXCLUDED."name", "category" = EXCLUDED."category", \
        "score" = EXCLUDED."score", "created" = EXCLUDED."created"
        """

    static func upsert(_ item: BenchItem, on connection: PostgresConnection) async throws {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(item.id)
        bindings.append(item.name)
        bindings.append(item.category)
        bindings.append(item.score)
        bindings.append(item.created.timeIntervalSinceReferenceDate)
        _ = try await connection.query(PostgresQuery(unsafeSQL: upsertSQL, binds: bindings), logger: logger)
    }

    static func items(from rows: PostgresRowSequence) async throws -> [BenchItem] {
        var found: [BenchItem] = []
        for try await (id, name, category, score, created) in rows.decode((Int, String, Int, Double, Double).self) {
            found.append(BenchItem(id: id, name: name, category: category, score: score, created: Date(timeIntervalSinceReferenceDate: created)))
        }
        return found
    }

    /// What a MirrorStore write block runs before `COMMIT` so other processes hear of it.
    static func notify(channel: String, payload: String, on connection: PostgresConnection) async throws {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(channel)
        bindings.append(payload)
        _ = try await connection.query(PostgresQuery(unsafeSQL: "SELECT pg_notify($1, $2)", binds: bindings), logger: logger)
    }

    static let selectSQL = #"SELECT "id", "name", "category", "score", "created" FROM "BenchItem""#

    static func fetchAll(_ client: PostgresClient) async throws -> [BenchItem] {
        try await client.withConnection { connection in
            try await items(from: try await connection.query(PostgresQuery(unsafeSQL: selectSQL + #" ORDER BY "id""#), logger: logger))
        }
    }

    static func lookup(_ client: PostgresClient, _ key: Int) async throws -> BenchItem? {
        try await client.withConnection { connection in
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(key)
            return try await items(from: try await connection.query(PostgresQuery(unsafeSQL: selectSQL + #" WHERE "id" = $1"#, binds: bindings), logger: logger)).first
        }
    }

    static func query(_ client: PostgresClient, _ category: Int) async throws -> [BenchItem] {
        try await client.withConnection { connection in
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(category)
            return try await items(from: try await connection.query(
                PostgresQuery(unsafeSQL: selectSQL + #" WHERE "category" = $1 ORDER BY "id""#, binds: bindings), logger: logger))
        }
    }

    /// The indexed query as a statement postgres-nio prepares once per connection, as
    /// MirrorStore prepares its reads: the reference for what preparing alone gives.
    struct PreparedQuery: PostgresPreparedStatement {
        typealias Row = (Int, String, Int, Double, Double)
        static let sql = Hand.selectSQL + #" WHERE "category" = $1 ORDER BY "id""#
        let category: Int

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(category)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    static func preparedQuery(_ client: PostgresClient, _ category: Int) async throws -> [BenchItem] {
        try await client.withConnection { connection in
            var found: [BenchItem] = []
            for try await (id, name, category, score, created) in try await connection.execute(PreparedQuery(category: category), logger: logger) {
                found.append(BenchItem(id: id, name: name, category: category, score: score, created: Date(timeIntervalSinceReferenceDate: created)))
            }
            return found
        }
    }

    static func truncate(_ client: PostgresClient) async throws {
        _ = try await client.query(#"TRUNCATE "BenchItem""#, logger: logger)
    }
}

// MARK: Timing

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func timed(_ body: () async throws -> Void) async throws -> Double {
    let start = ContinuousClock.now
    try await body()
    return seconds(ContinuousClock.now - start)
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw BenchmarkFailure(description: message()) }
}

/// Per-operation times in microseconds, by cell and side, one per run.
struct Cell {
    let name: String
    let unit: String
    var store: [Double] = []
    var hand: [Double] = []
}

var cells = [
    Cell(name: "insert \(objects) in one transaction", unit: "per object"),
    Cell(name: "fetch all \(objects)", unit: "per object"),
    Cell(name: "lookup by primary key (\(lookups))", unit: "per lookup"),
    Cell(name: "indexed equality, ~10 objects (\(queries))", unit: "per query"),
    Cell(name: "single-object write commit (\(commits))", unit: "per commit"),
    Cell(name: "the same, hand-written also pg_notify", unit: "per commit"),
]

/// A client of its own (pool, connection, server process) on the benchmark's database.
func makeClient(_ settings: PostgresSettings) -> PostgresClient {
    PostgresClient(
        configuration: PostgresClient.Configuration(
            host: settings.host, port: settings.port, username: settings.user, password: settings.password,
            database: settings.database, tls: .disable),
        backgroundLogger: Hand.logger)
}

// MARK: Runs

if let profileMode {
    runProfile(profileMode, operations: profileOperations, settings: settings, items: items, lookupKeys: lookupKeys,
               queryCategories: queryCategories)
}

do {
    let store = try await PostgresStore.open(settings, models: [BenchItem.self])
    let client = makeClient(settings)
    let runner = Task { await client.run() }

    print("PostgreSQL backend against hand-written postgres-nio: \(objects) objects, \(runs) runs, median per operation in µs")
    let sampleCategory = 0
    print("MirrorStore's indexed query: \(try store.objects(BenchItem.self).filter(#Predicate { $0.category == sampleCategory }).plan)")
    for run in 1...runs {
        // Insert: each side into an empty table, alternating which goes first.
        var insertStore = 0.0
        var insertHand = 0.0
        for side in (run % 2 == 0 ? [1, 0] : [0, 1]) {
            try await Hand.truncate(client)
            if side == 0 {
                insertStore = try await timed {
                    try await store.write { transaction in
                        for item in items { try await transaction.add(item) }
                    }
                }
            } else {
                insertHand = try await timed {
                    try await client.withTransaction(logger: Hand.logger) { connection in
                        for item in items { try await Hand.upsert(item, on: connection) }
                    }
                }
            }
        }
        // The table now holds the items, written by one side or the other: check it, then read.
        let storeAll = try await store.objects(BenchItem.self).all()
        let handAll = try await Hand.fetchAll(client)
        try check(storeAll == items, "MirrorStore's fetch-all differs from the items written (\(storeAll.count) of \(items.count))")
        try check(handAll == items, "the hand-written fetch-all differs from the items written (\(handAll.count) of \(items.count))")

        var fetchStore = 0.0
        var fetchHand = 0.0
        var lookupStore = 0.0
        var lookupHand = 0.0
        var queryStore = 0.0
        var queryHand = 0.0
        for side in (run % 2 == 0 ? [1, 0] : [0, 1]) {
            if side == 0 {
                fetchStore = try await timed { _ = try await store.objects(BenchItem.self).all() }
                var found: [BenchItem?] = []
                lookupStore = try await timed {
                    for key in lookupKeys { found.append(try await store.object(BenchItem.self, primaryKey: key)) }
                }
                try check(found == lookupKeys.map { items[$0] }, "MirrorStore's lookups differ from the items written")
                var answers: [[BenchItem]] = []
                queryStore = try await timed {
                    for category in queryCategories {
                        answers.append(try await store.objects(BenchItem.self).filter(#Predicate { $0.category == category }).all())
                    }
                }
                try check(answers == queryCategories.map { category in items.filter { $0.category == category } },
                          "MirrorStore's indexed queries differ from the items written")
            } else {
                fetchHand = try await timed { _ = try await Hand.fetchAll(client) }
                var found: [BenchItem?] = []
                lookupHand = try await timed {
                    for key in lookupKeys { found.append(try await Hand.lookup(client, key)) }
                }
                try check(found == lookupKeys.map { items[$0] }, "the hand-written lookups differ from the items written")
                var answers: [[BenchItem]] = []
                queryHand = try await timed {
                    for category in queryCategories { answers.append(try await Hand.query(client, category)) }
                }
                try check(answers == queryCategories.map { category in items.filter { $0.category == category } },
                          "the hand-written indexed queries differ from the items written")
            }
        }

        // Commit latency: one upsert of an existing object per transaction, a changed score each time.
        var commitStore = 0.0
        var commitHand = 0.0
        for side in (run % 2 == 0 ? [1, 0] : [0, 1]) {
            if side == 0 {
                commitStore = try await timed {
                    for number in 0..<commits {
                        var item = items[number % objects]
                        item.score = Double(run * 1_000_000 + number)
                        try await store.write { transaction in try await transaction.add(item) }
                    }
                }
            } else {
                commitHand = try await timed {
                    for number in 0..<commits {
                        var item = items[number % objects]
                        item.score = Double(run * 1_000_000 + number) + 0.25
                        try await client.withTransaction(logger: Hand.logger) { connection in try await Hand.upsert(item, on: connection) }
                    }
                }
            }
        }
        let last = (commits - 1) % objects
        let storeLast = try await store.object(BenchItem.self, primaryKey: last)
        let handLast = try await Hand.lookup(client, last)
        try check(storeLast == handLast, "after the commits the two sides read object \(last) differently")
        try check(storeLast?.score == Double(run * 1_000_000 + commits - 1) + (run % 2 == 0 ? 0 : 0.25),
                  "after the commits object \(last) does not hold the last side's score")
        // The same hand-written commits, also running the `pg_notify` a MirrorStore write block runs
        // before `COMMIT` (its channel, a payload naming the type and key), after the store's.
        let channel = store.changeChannel
        let commitHandNotifying = try await timed {
            for number in 0..<commits {
                var item = items[number % objects]
                item.score = Double(run * 1_000_000 + number) + 0.5
                try await client.withTransaction(logger: Hand.logger) { connection in
                    try await Hand.upsert(item, on: connection)
                    try await Hand.notify(channel: channel, payload: #"{"BenchItem":["\#(item.id)"]}"#, on: connection)
                }
            }
        }
        let notifiedLast = try await store.object(BenchItem.self, primaryKey: last)
        try check(notifiedLast?.score == Double(run * 1_000_000 + commits - 1) + 0.5,
                  "after the notifying commits object \(last) does not hold their score")

        let perObject = Double(objects)
        let measured: [(Double, Double)] = [
            (insertStore / perObject, insertHand / perObject),
            (fetchStore / perObject, fetchHand / perObject),
            (lookupStore / Double(lookups), lookupHand / Double(lookups)),
            (queryStore / Double(queries), queryHand / Double(queries)),
            (commitStore / Double(commits), commitHand / Double(commits)),
            (commitStore / Double(commits), commitHandNotifying / Double(commits)),
        ]
        for (index, (storeTime, handTime)) in measured.enumerated() {
            cells[index].store.append(storeTime * 1e6)
            cells[index].hand.append(handTime * 1e6)
        }
        print("run \(run): " + measured.map { String(format: "%.1f/%.1f", $0.0 * 1e6, $0.1 * 1e6) }.joined(separator: "  "))
    }

    func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
    func pad(_ text: String, _ width: Int) -> String { text.count >= width ? text : text + String(repeating: " ", count: width - text.count) }
    print("")
    print(pad("cell", 44) + pad("unit", 12) + pad("MirrorStore µs (range)", 26) + pad("hand-written µs (range)", 26) + "ratio")
    for cell in cells {
        let storeMedian = median(cell.store)
        let handMedian = median(cell.hand)
        let storeText = String(format: "%.1f (%.1f–%.1f)", storeMedian, cell.store.min() ?? 0, cell.store.max() ?? 0)
        let handText = String(format: "%.1f (%.1f–%.1f)", handMedian, cell.hand.min() ?? 0, cell.hand.max() ?? 0)
        print(pad(cell.name, 44) + pad(cell.unit, 12) + pad(storeText, 26) + pad(handText, 26) + String(format: "%.2f×", storeMedian / handMedian))
    }
    print("both sides read the same answers in every run")

    // The same lookups, queries and commits again, the two sides alternating operation by
    // operation (which goes first alternates too): a job that starts on the machine then slows
    // both sides alike, where it may land on one side's whole block above. Each figure is the
    // median of the operations' times, which a stall of a few operations does not move.
    var interleaved: [(name: String, store: [Double], hand: [Double])] = [
        ("lookup by primary key", [], []), ("indexed equality, ~10 objects", [], []), ("single-object write commit", [], []),
    ]
    // The table as the runs' commits left it, then as each commit below leaves it (both sides
    // write the same item).
    var current = try await Hand.fetchAll(client)
    try check(current.map(\.id) == items.map(\.id), "before the interleaved cells the table does not hold the items written")
    for number in 0..<interleavedOperations {
        let key = lookupKeys[number % lookups]
        let category = queryCategories[number % queries]
        var item = items[number % objects]
        item.score = Double(number) + 0.75
        for side in (number % 2 == 0 ? [0, 1] : [1, 0]) {
            if side == 0 {
                var found: BenchItem?
                interleaved[0].store.append(try await timed { found = try await store.object(BenchItem.self, primaryKey: key) })
                try check(found == current[key], "MirrorStore's interleaved lookup of \(key) differs from the item written")
                var answer: [BenchItem] = []
                interleaved[1].store.append(try await timed {
                    answer = try await store.objects(BenchItem.self).filter(#Predicate { $0.category == category }).all()
                })
                try check(answer == current.filter { $0.category == category }, "MirrorStore's interleaved query of \(category) differs from the items written")
                interleaved[2].store.append(try await timed { try await store.write { transaction in try await transaction.add(item) } })
                current[item.id] = item
            } else {
                var found: BenchItem?
                interleaved[0].hand.append(try await timed { found = try await Hand.lookup(client, key) })
                try check(found == current[key], "the hand-written interleaved lookup of \(key) differs from the item written")
                var answer: [BenchItem] = []
                interleaved[1].hand.append(try await timed { answer = try await Hand.query(client, category) })
                try check(answer == current.filter { $0.category == category }, "the hand-written interleaved query of \(category) differs from the items written")
                interleaved[2].hand.append(try await timed {
                    try await client.withTransaction(logger: Hand.logger) { connection in try await Hand.upsert(item, on: connection) }
                })
                current[item.id] = item
            }
        }
    }
    /// A row of the interleaved table: `name`, the medians of both columns in µs, their ratio.
    func printInterleavedRow(_ name: String, _ left: [Double], _ right: [Double]) {
        let leftMedian = median(left) * 1e6
        let rightMedian = median(right) * 1e6
        print(pad(name, 44) + pad(String(format: "%.1f", leftMedian), 26) + pad(String(format: "%.1f", rightMedian), 26) + String(format: "%.2f×", leftMedian / rightMedian))
    }
    print("")
    print("interleaved, operation by operation (\(interleavedOperations) each), median µs per operation")
    print(pad("cell", 44) + pad("MirrorStore µs", 26) + pad("hand-written µs", 26) + "ratio")
    for cell in interleaved { printInterleavedRow(cell.name, cell.store, cell.hand) }

    // Two pairs alternating query by query as the sides alternate above. The method's own bias:
    // the same hand-written query through a second client (its own pool, connection and server
    // process) against the first; switching connections query by query costs both alike, so this
    // ratio stays near 1. And, as MirrorStore prepares each read's statement once per connection
    // while the hand-written side above sends its statement unprepared, MirrorStore's query
    // against a hand-written prepared statement, which shows the mapping alone.
    let secondClient = makeClient(settings)
    let secondRunner = Task { await secondClient.run() }
    let pairs: [(name: String, what: String, left: @Sendable (Int) async throws -> [BenchItem], right: @Sendable (Int) async throws -> [BenchItem])] = [
        ("control: hand-written, 2nd client / 1st", "control",
         { try await Hand.query(secondClient, $0) }, { try await Hand.query(client, $0) }),
        ("equality, hand-written side prepared", "reference",
         { category in try await store.objects(BenchItem.self).filter(#Predicate { $0.category == category }).all() },
         { try await Hand.preparedQuery(client, $0) }),
    ]
    for pair in pairs {
        var times: (left: [Double], right: [Double]) = ([], [])
        for number in 0..<interleavedOperations {
            let category = queryCategories[number % queries]
            for side in (number % 2 == 0 ? [0, 1] : [1, 0]) {
                var answer: [BenchItem] = []
                if side == 0 {
                    times.left.append(try await timed { answer = try await pair.left(category) })
                } else {
                    times.right.append(try await timed { answer = try await pair.right(category) })
                }
                try check(answer == current.filter { $0.category == category }, "the \(pair.what) query of \(category) differs from the items written")
            }
        }
        printInterleavedRow(pair.name, times.left, times.right)
    }
    secondRunner.cancel()
    runner.cancel()
    await store.close()
} catch {
    FileHandle.standardError.write(Data("mirrorstore-postgres-benchmarks: \(error)\n".utf8))
    exit(1)
}
