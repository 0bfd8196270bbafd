import BenchmarkSupport
import Foundation
import GRDB
import MirrorStore

/// The benchmark's first model, the one docs/BENCHMARKS.md reports: a plain final class with
/// seven fields, a realistic row.
///
/// MirrorStore needs `Persistable` and nothing else; GRDB needs `Codable` plus its record
/// protocols, and a table (``createTable(_:)``). Both read and write this very class.
final class Customer: StoreShape {
    var id = 0
    var name = ""
    var email = ""
    var age = 0
    var score = 0.0
    var active = false
    var createdAt = Date(timeIntervalSince1970: 0)

    init() {}

    /// MirrorStore's primary key.
    static var primaryKey: String? { "id" }
    /// GRDB's table.
    static let databaseTableName = "customer"

    static let shapeName = "customer"
    static let shapeSummary = "Customer: Int key, name, e-mail, Int, Double, Bool, Date"

    static func fixture(id: Int, seed: UInt64) -> Customer {
        Fixtures.customer(id: id, seed: seed)
    }

    static func key(id: Int, seed: UInt64) -> Int { id }

    var storedKey: Int { id }

    /// `id` is an `INTEGER PRIMARY KEY` (the rowid).
    static func createTable(_ db: Database) throws {
        try db.create(table: databaseTableName) { table in
            table.primaryKey("id", .integer)
            table.column("name", .text).notNull()
            table.column("email", .text).notNull()
            table.column("age", .integer).notNull()
            table.column("score", .double).notNull()
            table.column("active", .boolean).notNull()
            table.column("createdAt", .datetime).notNull()
        }
    }

    /// The fields that differ from `other`, as `name: a ≠ b`; empty when all seven are equal.
    func differences(from other: Customer) -> [String] {
        var result = FieldComparison()
        result.compare("id", id, other.id)
        result.compare("name", name, other.name)
        result.compare("email", email, other.email)
        result.compare("age", age, other.age)
        result.compare("score", score, other.score)
        result.compare("active", active, other.active)
        result.compare("createdAt", createdAt, other.createdAt)
        return result.differences
    }
}

/// The data set. Customer `id` is a pure function of `(id, seed)`, so a child process can build
/// the objects it writes, or the ones it expects to read, without holding the whole set.
enum Fixtures {
    /// 2017-07-14 02:40:00 UTC. Creation dates fall in the eight years after it, in steps of
    /// 1/8 s: exact in binary, and within the millisecond precision of GRDB's default date text.
    static let firstDate = 1_500_000_000.0

    static func customer(id: Int, seed: UInt64) -> Customer {
        var random = SplitMix64(seed: seed ^ (UInt64(truncatingIfNeeded: id) &* 0xD6E8_FEB8_6659_FD93))
        let person = CustomerName(id: id, random: &random)
        let customer = Customer()
        customer.id = id
        customer.name = person.name
        customer.email = person.email
        customer.age = 18 + Int(random.next() % 73)
        customer.score = Double(random.next() % 1_000_000) / 100  // 0.00 … 9,999.99
        customer.active = random.next() % 4 != 0
        customer.createdAt = Date(timeIntervalSince1970: firstDate + Double(random.next() % (8 * 86_400 * 365 * 8)) / 8)
        return customer
    }

    /// Objects `ids` of `Model`'s data set, built now.
    static func objects<Model: StoreShape>(_: Model.Type, _ ids: some Sequence<Int>, seed: UInt64) -> [Model] {
        ids.map { Model.fixture(id: $0, seed: seed) }
    }

    /// `count` distinct ids out of `1...objects`, in a seeded order: the ones verified.
    static func sample(_ count: Int, of objects: Int, seed: UInt64) -> [Int] {
        var random = SplitMix64(seed: seed &+ 17)
        var ids: Set<Int> = [1, objects]
        while ids.count < min(count, objects) {
            ids.insert(1 + Int(random.next() % UInt64(objects)))
        }
        return ids.sorted()
    }

    /// `1...objects` in a seeded random order: the order of the primary-key lookups.
    static func lookupOrder(objects: Int, seed: UInt64) -> [Int] {
        var random = SplitMix64(seed: seed &+ 29)
        return Array(1...objects).shuffled(using: &random)
    }
}
