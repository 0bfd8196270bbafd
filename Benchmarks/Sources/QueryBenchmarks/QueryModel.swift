import BenchmarkSupport
import Foundation
import GRDB
import MirrorStore

/// The customer both systems store and query: eight fields, with a unique index on `email` and
/// an ordered index on `createdAt` (MirrorStore through `uniqueProperties` and
/// `indexedProperties`, SQLite through `CREATE INDEX`). `city` is not indexed.
final class Customer: Persistable, Codable, FetchableRecord, PersistableRecord {
    var id = 0
    var name = ""
    var email = ""
    var city = ""
    var age = 0
    var score = 0.0
    var active = false
    var createdAt = Date(timeIntervalSince1970: 0)

    init() {}

    static var primaryKey: String? { "id" }
    static var indexedProperties: [String] { ["createdAt"] }
    static var uniqueProperties: [String] { ["email"] }
    /// GRDB's table.
    static let databaseTableName = "customer"

    /// A plain copy of the fields, for comparing results.
    var fields: CustomerFields {
        CustomerFields(id: id, name: name, email: email, city: city, age: age, score: score, active: active, createdAt: createdAt)
    }
}

/// The same eight fields without any secondary index: the baseline the index memory is
/// measured against.
final class PlainCustomer: Persistable {
    var id = 0
    var name = ""
    var email = ""
    var city = ""
    var age = 0
    var score = 0.0
    var active = false
    var createdAt = Date(timeIntervalSince1970: 0)

    init() {}

    static var primaryKey: String? { "id" }

    convenience init(_ customer: Customer) {
        self.init()
        id = customer.id
        name = customer.name
        email = customer.email
        city = customer.city
        age = customer.age
        score = customer.score
        active = customer.active
        createdAt = customer.createdAt
    }

    var fields: CustomerFields {
        CustomerFields(id: id, name: name, email: email, city: city, age: age, score: score, active: active, createdAt: createdAt)
    }
}

/// A customer's stored fields as a value, so results compare with `==`.
struct CustomerFields: Equatable {
    var id: Int
    var name: String
    var email: String
    var city: String
    var age: Int
    var score: Double
    var active: Bool
    var createdAt: Date
}

/// The member of the compound-index and insensitive-search cells, in a store of its own so the
/// customers' data and indexes stay as they are: a unique compound index on `team` and `number`,
/// and an index of the folded `name` (MirrorStore through `compoundIndexes` and
/// `insensitiveIndexedProperties`; SQLite through `CREATE UNIQUE INDEX member_team_number ON
/// member(team, number)` and `CREATE INDEX member_name ON member(name COLLATE NOCASE)`, on a
/// `name` column that is itself `COLLATE NOCASE`).
final class Member: Persistable, Codable, FetchableRecord, PersistableRecord {
    var id = 0
    var team = ""
    var number = 0
    var name = ""
    var score = 0.0
    var active = false

    init() {}

    static var primaryKey: String? { "id" }
    static var compoundIndexes: [CompoundIndex] { [.unique("team", "number")] }
    static var insensitiveIndexedProperties: [String] { ["name"] }
    /// GRDB's table.
    static let databaseTableName = "member"

    /// A plain copy of the fields, for comparing results.
    var fields: MemberFields {
        MemberFields(id: id, team: team, number: number, name: name, score: score, active: active)
    }
}

/// A member's stored fields as a value, so results compare with `==`.
struct MemberFields: Equatable {
    var id: Int
    var team: String
    var number: Int
    var name: String
    var score: Double
    var active: Bool
}

/// The data set. Customer `id` is a pure function of `(id, seed)`, so every process builds the
/// same customers and can compute what a query must return.
enum QueryFixtures {
    /// 100 cities, so a city matches about 1% of the customers.
    static let cities: [String] = {
        let first = ["North", "South", "East", "West", "New", "Old", "Upper", "Lower", "Great", "Little"]
        let second = ["Haven", "Field", "Bridge", "Ford", "Port", "Wood", "Brook", "Hill", "Dale", "Mouth"]
        return first.flatMap { a in second.map { b in "\(a) \(b)" } }
    }()
    /// 2017-07-14 02:40:00 UTC. Creation dates fall in the `dateSpan` seconds after it, in steps
    /// of 1/8 s: exact in binary and in GRDB's millisecond date text.
    static let firstDate = 1_500_000_000.0
    static let dateSpan = 8.0 * 365 * 86_400

    static func customer(id: Int, seed: UInt64) -> Customer {
        var random = SplitMix64(seed: seed ^ (UInt64(truncatingIfNeeded: id) &* 0xD6E8_FEB8_6659_FD93))
        let person = CustomerName(id: id, random: &random)
        let customer = Customer()
        customer.id = id
        customer.name = person.name
        customer.email = person.email
        customer.city = cities[Int(random.next() % UInt64(cities.count))]
        customer.age = 18 + Int(random.next() % 73)
        customer.score = Double(random.next() % 1_000_000) / 100
        customer.active = random.next() % 4 != 0
        customer.createdAt = Date(timeIntervalSince1970: firstDate + Double(random.next() % UInt64(dateSpan * 8)) / 8)
        return customer
    }

    static func customers(_ ids: some Sequence<Int>, seed: UInt64) -> [Customer] {
        ids.map { customer(id: $0, seed: seed) }
    }

    /// The members' teams: the 100 city names, so a team has about 1% of the members.
    static var teams: [String] { cities }

    /// Member `id` of `objects` members: a pure function of `(id, objects, seed)`. `team` and
    /// `number` come from a seeded permutation of the ids, so every (team, number) pair is
    /// unique and numbers run 1, 2, … within each team; `name` is two capitalised words of
    /// random ASCII letters ("Kqzmvt Abrelw"), so a 3-letter prefix matches about
    /// `objects / 26³` members (5.7 of 100,000), ignoring case.
    static func member(id: Int, objects: Int, seed: UInt64) -> Member {
        var random = SplitMix64(seed: seed ^ 0x4D45_4D42 ^ (UInt64(truncatingIfNeeded: id) &* 0x9E37_79B9_7F4A_7C15))
        let slot = memberSlot(id: id, objects: objects, seed: seed)
        let member = Member()
        member.id = id
        member.team = teams[slot % teams.count]
        member.number = slot / teams.count + 1
        func word() -> String {
            let length = 5 + Int(random.next() % 5)
            let letters = (0..<length).map { _ in UInt8(ascii: "a") + UInt8(random.next() % 26) }
            return String(decoding: [letters[0] - 32] + letters.dropFirst(), as: UTF8.self)
        }
        member.name = word() + " " + word()
        member.score = Double(random.next() % 1_000_000) / 100
        member.active = random.next() % 4 != 0
        return member
    }

    static func members(_ ids: some Sequence<Int>, objects: Int, seed: UInt64) -> [Member] {
        ids.map { member(id: $0, objects: objects, seed: seed) }
    }

    /// Where member `id` goes in `0..<objects`: `(id - 1) * a + b` modulo `objects`, with `a`
    /// drawn from the seed and prime to `objects`, a permutation.
    private static func memberSlot(id: Int, objects: Int, seed: UInt64) -> Int {
        var random = SplitMix64(seed: seed &+ 97)
        var multiplier = 1 + Int(random.next() % UInt64(max(objects - 1, 1)))
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        while gcd(multiplier, objects) != 1 { multiplier += 1 }
        let offset = Int(random.next() % UInt64(objects))
        return ((id - 1) * multiplier % objects + offset) % objects
    }

    /// `count` distinct ids out of `1...objects`, in a seeded order.
    static func sample(_ count: Int, of objects: Int, seed: UInt64) -> [Int] {
        var random = SplitMix64(seed: seed &+ 17)
        var ids: [Int] = []
        var seen: Set<Int> = []
        while ids.count < min(count, objects) {
            let id = 1 + Int(random.next() % UInt64(objects))
            if seen.insert(id).inserted { ids.append(id) }
        }
        return ids
    }

    /// `count` date windows, each `fraction` of the span wide, at seeded places: whole seconds,
    /// so both systems compare the bounds exactly.
    static func windows(_ count: Int, fraction: Double, seed: UInt64) -> [Range<Date>] {
        var random = SplitMix64(seed: seed &+ 41)
        let width = (dateSpan * fraction).rounded()
        return (0..<count).map { _ in
            let start = firstDate + Double(random.next() % UInt64(dateSpan - width))
            return Date(timeIntervalSince1970: start)..<Date(timeIntervalSince1970: start + width)
        }
    }
}
