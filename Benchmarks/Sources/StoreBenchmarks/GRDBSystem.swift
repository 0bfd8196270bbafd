import BenchmarkSupport
import GRDB

/// GRDB 7 with a `DatabaseQueue` and its default `Configuration`: SQLite's rollback journal
/// (`journal_mode = DELETE`) and `synchronous = FULL`, so every transaction is synced before it
/// returns. Records are the Codable model through `FetchableRecord & PersistableRecord`.
final class GRDBSystem<Model: StoreShape>: BenchmarkedSystem {
    static var name: String { "GRDB" }
    static var fileExtension: String { "sqlite" }
    let dbQueue: DatabaseQueue

    init(path: String) throws {
        dbQueue = try DatabaseQueue(path: path)
    }

    /// A new database with the model's table (``StoreShape/createTable(_:)``).
    static func create(path: String) throws -> GRDBSystem {
        let system = try GRDBSystem(path: path)
        try system.dbQueue.write { db in try Model.createTable(db) }
        return system
    }

    /// The database file and whatever journal SQLite may leave beside it.
    static func files(for path: String) -> [String] {
        [path, path + "-journal", path + "-wal", path + "-shm"]
    }

    func insert(_ objects: [Model]) throws {
        try dbQueue.write { db in
            for object in objects { try object.insert(db) }
        }
    }

    func insertOne(_ object: Model) throws {
        try dbQueue.write { db in try object.insert(db) }
    }

    func fetchAll() throws -> [Model] {
        try dbQueue.read { db in try Model.fetchAll(db) }
    }

    func object(key: Model.Key) throws -> Model? {
        try dbQueue.read { db in try Model.fetchOne(db, key: key) }
    }

    /// Every lookup inside one `read` block: GRDB's fastest way to run many of them.
    func lookUp(_ keys: [Model.Key]) throws -> Int {
        try dbQueue.read { db in
            var found = 0
            for key in keys {
                if let object = try Model.fetchOne(db, key: key) {
                    found += 1
                    blackHole(object)
                }
            }
            return found
        }
    }

    /// Each lookup in its own `read` block, as a standalone call like `store.object(_:primaryKey:)`.
    func lookUpEachInOwnRead(_ keys: [Model.Key]) throws -> Int {
        var found = 0
        for key in keys {
            if let object = try dbQueue.read({ db in try Model.fetchOne(db, key: key) }) {
                found += 1
                blackHole(object)
            }
        }
        return found
    }

    func count() throws -> Int {
        try dbQueue.read { db in try Model.fetchCount(db) }
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
