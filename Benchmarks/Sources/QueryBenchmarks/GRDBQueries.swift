import Foundation
import GRDB

/// GRDB 7 with a `DatabaseQueue` and its default configuration, the `customer` table with a
/// unique index on `email` and an index on `createdAt`, records mapped through Codable
/// `FetchableRecord`. Each query runs in a `read` block of its own, as a standalone call does.
/// A store of members has the `member` table, with `CREATE UNIQUE INDEX member_team_number ON
/// member(team, number)` and `CREATE INDEX member_name ON member(name COLLATE NOCASE)` on a
/// `name` column of collation `NOCASE`: with `case_sensitive_like` off (SQLite's default),
/// `name LIKE 'abc%'` reads a range of that index.
final class GRDBQueries: QuerySystem {
    static let fileExtension = "sqlite"
    let dbQueue: DatabaseQueue
    /// Whether this is a store of members rather than of customers.
    private let holdsMembers: Bool

    init(path: String) throws {
        dbQueue = try DatabaseQueue(path: path)
        holdsMembers = false
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

    init(membersPath path: String) throws {
        dbQueue = try DatabaseQueue(path: path)
        holdsMembers = true
    }

    static func createMembers(path: String) throws -> GRDBQueries {
        let system = try GRDBQueries(membersPath: path)
        try system.dbQueue.write { db in
            try db.create(table: Member.databaseTableName) { table in
                table.primaryKey("id", .integer)
                table.column("team", .text).notNull()
                table.column("number", .integer).notNull()
                table.column("name", .text).notNull().collate(.nocase)
                table.column("score", .double).notNull()
                table.column("active", .boolean).notNull()
            }
            try db.execute(sql: "CREATE UNIQUE INDEX member_team_number ON member(team, number)")
            try db.execute(sql: "CREATE INDEX member_name ON member(name COLLATE NOCASE)")
        }
        return system
    }

    static func files(for path: String) -> [String] {
        [path, path + "-journal", path + "-wal", path + "-shm"]
    }

    /// SQLite reads its schema on the first statement.
    func warmUp() throws {
        _ = try holdsMembers ? countMembers() : count()
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

    private static let team = Column("team")
    private static let number = Column("number")
    private static let name = Column("name")

    private func teamNumberRequest(_ team: String, _ number: Int) -> QueryInterfaceRequest<Member> {
        Member.filter(Self.team == team && Self.number == number)
    }

    /// The prefix is ASCII letters: no wildcard to escape.
    private func prefixRequest(_ prefix: String) -> QueryInterfaceRequest<Member> {
        Member.filter(Self.name.like(prefix + "%")).order(Self.id)
    }

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

    func insert(members: [Member]) throws {
        try dbQueue.write { db in
            for member in members { try member.insert(db) }
        }
    }

    func countMembers() throws -> Int {
        try dbQueue.read { db in try Member.fetchCount(db) }
    }

    func member(team: String, number: Int) throws -> [Member] {
        try dbQueue.read { db in try teamNumberRequest(team, number).fetchAll(db) }
    }

    func members(namePrefix prefix: String) throws -> [Member] {
        try dbQueue.read { db in try prefixRequest(prefix).fetchAll(db) }
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

    func newestCreated(_ limit: Int) throws -> [Customer] {
        try dbQueue.read { db in try Customer.order(Self.createdAt.desc, Self.id).limit(limit).fetchAll(db) }
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
        default: return ""
        }
        let plan = try explain(request)
        guard plan.contains(expected) else { throw QueryBenchmarkFailure("\(workload.rawValue)/GRDB: unexpected plan: \(plan)") }
        return plan
    }

    func checkMemberPlan(_ workload: QueryWorkload, team: String, number: Int, prefix: String) throws -> String {
        let request: QueryInterfaceRequest<Member>
        let expected: String
        switch workload {
        case .compoundEqual: (request, expected) = (teamNumberRequest(team, number), "USING INDEX member_team_number (team=? AND number=?)")
        // The LIKE becomes a range of the NOCASE index (the LIKE itself still tested on each row).
        case .insensitivePrefix: (request, expected) = (prefixRequest(prefix), "USING INDEX member_name (name>? AND name<?)")
        default: return ""
        }
        let plan = try explain(request)
        guard plan.contains(expected) else { throw QueryBenchmarkFailure("\(workload.rawValue)/GRDB: unexpected plan: \(plan)") }
        return plan
    }

    /// SQLite's `EXPLAIN QUERY PLAN` of `request`, with its arguments bound (a `LIKE` with a
    /// bound pattern is planned again once the pattern is known, as the query itself is).
    private func explain<Record>(_ request: QueryInterfaceRequest<Record>) throws -> String {
        try dbQueue.read { db in
            let statement = try request.makePreparedRequest(db, forSingleResult: false).statement
            return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: statement.arguments)
                .map { $0["detail"] as String? ?? "" }.joined(separator: "; ")
        }
    }

    func close() throws {
        try dbQueue.close()
    }
}
