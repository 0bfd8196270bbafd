import Foundation
import GRDB

/// GRDB 7 with a `DatabaseQueue` and its default configuration, the `customer` table with a
/// unique index on `email` and an index on `createdAt`, records mapped through Codable
/// `FetchableRecord`. Each query runs in a `read` block of its own, as a standalone call does.
final class GRDBQueries: QuerySystem {
    static let fileExtension = "sqlite"
    let dbQueue: DatabaseQueue

    init(path: String) throws {
        dbQueue = try DatabaseQueue(path: path)
    }

    static func create(path: String) throws -> GRDBQueries {
        let system = try GRDBQueries(path: path)
        try system.dbQueue.write { db in
            try db.create(table: Customer.databaseTableName) { table in
                table.primaryKey("id", .integer)
                table.column("name", .text).notNull()
                table.column("email", .text).notNull()
                table.column("city", .text).notNull()
                table.column("age", .integer).notNull()
                table.column("score", .double).notNull()
                table.column("active", .boolean).notNull()
                table.column("createdAt", .datetime).notNull()
            }
            try db.create(index: "customer_email", on: Customer.databaseTableName, columns: ["email"], options: .unique)
            try db.create(index: "customer_createdAt", on: Customer.databaseTableName, columns: ["createdAt"])
        }
        return system
    }

    static func files(for path: String) -> [String] {
        [path, path + "-journal", path + "-wal", path + "-shm"]
    }

    /// SQLite reads its schema on the first statement.
    func warmUp() throws {
        _ = try count()
    }

    func insert(_ customers: [Customer]) throws {
        try dbQueue.write { db in
            for customer in customers { try customer.insert(db) }
        }
    }

    private static let email = Column("email")
    private static let createdAt = Column("createdAt")
    private static let city = Column("city")
    private static let age = Column("age")
    private static let score = Column("score")
    private static let id = Column("id")

    private func emailRequest(_ email: String) -> QueryInterfaceRequest<Customer> {
        Customer.filter(Self.email == email)
    }

    private func windowRequest(_ window: Range<Date>) -> QueryInterfaceRequest<Customer> {
        Customer.filter(Self.createdAt >= window.lowerBound && Self.createdAt < window.upperBound)
    }

    private func sortedWindowRequest(_ window: Range<Date>) -> QueryInterfaceRequest<Customer> {
        windowRequest(window).order(Self.createdAt, Self.id)
    }

    private func firstRequest(_ limit: Int) -> QueryInterfaceRequest<Customer> {
        Customer.order(Self.createdAt, Self.id).limit(limit)
    }

    private func cityRequest(_ city: String) -> QueryInterfaceRequest<Customer> {
        Customer.filter(Self.city == city).order(Self.id)
    }

    private func negativeRequest(_ city: String) -> QueryInterfaceRequest<Customer> {
        Customer.filter(Self.age < -50 || Self.city == city).order(Self.id)
    }

    private func arithmeticRequest(_ bound: Double) -> QueryInterfaceRequest<Customer> {
        Customer.filter(Self.score * 2 - 100 > bound).order(Self.id)
    }

    func withEmail(_ email: String) throws -> [Customer] {
        try dbQueue.read { db in try emailRequest(email).fetchAll(db) }
    }

    func created(in window: Range<Date>) throws -> [Customer] {
        try dbQueue.read { db in try sortedWindowRequest(window).fetchAll(db) }
    }

    func firstCreated(_ limit: Int) throws -> [Customer] {
        try dbQueue.read { db in try firstRequest(limit).fetchAll(db) }
    }

    func living(in city: String) throws -> [Customer] {
        try dbQueue.read { db in try cityRequest(city).fetchAll(db) }
    }

    func negativeAgeOrLiving(in city: String) throws -> [Customer] {
        try dbQueue.read { db in try negativeRequest(city).fetchAll(db) }
    }

    func scoring(above bound: Double) throws -> [Customer] {
        try dbQueue.read { db in try arithmeticRequest(bound).fetchAll(db) }
    }

    func count(createdIn window: Range<Date>) throws -> Int {
        try dbQueue.read { db in try windowRequest(window).fetchCount(db) }
    }

    func count() throws -> Int {
        try dbQueue.read { db in try Customer.fetchCount(db) }
    }

    func sumOfScores() throws -> Double {
        try dbQueue.read { db in try Double.fetchOne(db, sql: "SELECT SUM(score) FROM customer") ?? 0 }
    }

    func averageAge() throws -> Double? {
        try dbQueue.read { db in try Double.fetchOne(db, sql: "SELECT AVG(age) FROM customer") }
    }

    func latestCreated() throws -> Date? {
        try dbQueue.read { db in try Date.fetchOne(db, sql: "SELECT MAX(createdAt) FROM customer") }
    }

    func checkPlan(_ workload: QueryWorkload, email: String, window: Range<Date>, city: String, bound: Double) throws -> String {
        let request: QueryInterfaceRequest<Customer>
        let expected: String
        switch workload {
        case .equal: (request, expected) = (emailRequest(email), "USING INDEX customer_email")
        case .range: (request, expected) = (sortedWindowRequest(window), "INDEX customer_createdAt")
        case .count: (request, expected) = (windowRequest(window), "INDEX customer_createdAt")
        case .first20: (request, expected) = (firstRequest(20), "USING INDEX customer_createdAt")
        case .scan: (request, expected) = (cityRequest(city), "SCAN customer")
        case .sum, .average: (request, expected) = (Customer.all(), "SCAN customer")
        case .max: (request, expected) = (Customer.select(max(Self.createdAt)), "customer_createdAt")
        case .scanNegative: (request, expected) = (negativeRequest(city), "SCAN customer")
        case .scanArithmetic: (request, expected) = (arithmeticRequest(bound), "SCAN customer")
        case .insert, .open, .openPlain, .firstQuery: return ""
        }
        let plan = try dbQueue.read { db in
            let statement = try request.makePreparedRequest(db, forSingleResult: false).statement
            return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: statement.arguments)
                .map { $0["detail"] as String? ?? "" }.joined(separator: "; ")
        }
        guard plan.contains(expected) else { throw QueryBenchmarkFailure("\(workload.rawValue)/GRDB: unexpected plan: \(plan)") }
        return plan
    }

    func close() throws {
        try dbQueue.close()
    }
}
