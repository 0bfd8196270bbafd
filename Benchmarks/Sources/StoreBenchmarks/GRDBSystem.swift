import BenchmarkSupport
import GRDB

/// GRDB 7 with a `DatabaseQueue` and its default `Configuration`: SQLite's rollback journal
/// (`journal_mode = DELETE`) and `synchronous = FULL`, so every transaction is synced before it
/// returns. Records are the Codable `Customer` through `FetchableRecord & PersistableRecord`.
final class GRDBSystem: BenchmarkedSystem {
    static let name = "GRDB"
    static let fileExtension = "sqlite"
    let dbQueue: DatabaseQueue

    init(path: String) throws {
        dbQueue = try DatabaseQueue(path: path)
    }

    /// A new database with the `customer` table: `id` is an `INTEGER PRIMARY KEY` (the rowid).
    static func create(path: String) throws -> GRDBSystem {
        let system = try GRDBSystem(path: path)
        try system.dbQueue.write { db in
            try db.create(table: Customer.databaseTableName) { table in
                table.primaryKey("id", .integer)
                table.column("name", .text).notNull()
                table.column("email", .text).notNull()
                table.column("age", .integer).notNull()
                table.column("score", .double).notNull()
                table.column("active", .boolean).notNull()
                table.column("createdAt", .datetime).notNull()
            }
        }
        return system
    }

    /// The database file and whatever journal SQLite may leave beside it.
    static func files(for path: String) -> [String] {
        [path, path + "-journal", path + "-wal", path + "-shm"]
    }

    func insert(_ customers: [Customer]) throws {
        try dbQueue.write { db in
            for customer in customers { try customer.insert(db) }
        }
    }

    func insertOne(_ customer: Customer) throws {
        try dbQueue.write { db in try customer.insert(db) }
    }

    func fetchAll() throws -> [Customer] {
        try dbQueue.read { db in try Customer.fetchAll(db) }
    }

    func object(id: Int) throws -> Customer? {
        try dbQueue.read { db in try Customer.fetchOne(db, key: id) }
    }

    /// Every lookup inside one `read` block: GRDB's fastest way to run many of them.
    func lookUp(_ ids: [Int]) throws -> Int {
        try dbQueue.read { db in
            var found = 0
            for id in ids {
                if let customer = try Customer.fetchOne(db, key: id) {
                    found += 1
                    blackHole(customer)
                }
            }
            return found
        }
    }

    /// Each lookup in its own `read` block, as a standalone call like `store.object(_:primaryKey:)`.
    func lookUpEachInOwnRead(_ ids: [Int]) throws -> Int {
        var found = 0
        for id in ids {
            if let customer = try dbQueue.read({ db in try Customer.fetchOne(db, key: id) }) {
                found += 1
                blackHole(customer)
            }
        }
        return found
    }

    func count() throws -> Int {
        try dbQueue.read { db in try Customer.fetchCount(db) }
    }

    func close() throws {
        try dbQueue.close()
    }

    var note: String {
        let version = (try? dbQueue.read { db in try String.fetchOne(db, sql: "SELECT sqlite_version()") }) ?? nil
        let journal = (try? dbQueue.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }) ?? nil
        let synchronous = (try? dbQueue.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }) ?? nil
        return "SQLite \(version ?? "?"), DatabaseQueue, default Configuration "
            + "(journal_mode \(journal ?? "?"), synchronous \(synchronous.map(String.init) ?? "?"))"
    }
}
