import BenchmarkSupport
import Foundation
import GRDB
import MirrorStore

/// A postal address, embedded in its profile (it has no primary key).
struct Address: Persistable, Codable, Equatable {
    var street = ""
    var city = ""
    var postcode = ""
    var country = ""

    init() {}
}

/// A shape keyed by a string (a user name, not in key order), with an embedded struct and an
/// array of integers.
final class Profile: StoreShape {
    var username = ""
    var name = ""
    var address = Address()
    var scores: [Int] = []
    var joinedAt = Date(timeIntervalSince1970: 0)

    init() {}

    static var primaryKey: String? { "username" }
    static let databaseTableName = "profile"
    static let shapeName = "profiles"
    static let shapeSummary = "Profile: String key, a name, an embedded Address (4 strings), 5–20 Int scores, a Date"

    private static let streets = ["Main Street", "Rue de la Paix", "Hauptstraße", "Via Roma", "Calle Mayor", "Baker Street"]
    private static let cities = [("Lyon", "FR"), ("Berlin", "DE"), ("Rome", "IT"), ("Madrid", "ES"), ("London", "GB"), ("Austin", "US")]

    static func fixture(id: Int, seed: UInt64) -> Profile {
        var random = SplitMix64.object(id: id, seed: seed, salt: 4)
        let person = CustomerName(id: id, random: &random)
        let profile = Profile()
        profile.username = key(id: id, seed: seed)
        profile.name = person.name
        let (city, country) = cities[random.next(in: 0...(cities.count - 1))]
        profile.address.street = "\(random.next(in: 1...250)) \(streets[random.next(in: 0...(streets.count - 1))])"
        profile.address.city = city
        profile.address.postcode = String(random.next(in: 10_000...99_999))
        profile.address.country = country
        profile.scores = (0 ..< random.next(in: 5...20)).map { _ in random.next(in: 0...1_000) }
        profile.joinedAt = Date(timeIntervalSince1970: Fixtures.firstDate + Double(random.next() % (8 * 86_400 * 365 * 8)) / 8)
        return profile
    }

    /// A user name: a name's letters, then the id, so keys are unique and not in id order.
    static func key(id: Int, seed: UInt64) -> String {
        var random = SplitMix64.object(id: id, seed: seed, salt: 4)
        let person = CustomerName(id: id, random: &random)
        return person.email.prefix { $0 != "@" }.replacingOccurrences(of: ".", with: "_")
    }

    var storedKey: String { username }

    /// The address and the scores are JSON text, as GRDB encodes a nested Codable value and an
    /// array; the key is a text primary key of a rowid table (GRDB's default).
    static func createTable(_ db: Database) throws {
        try db.create(table: databaseTableName) { table in
            table.primaryKey("username", .text)
            table.column("name", .text).notNull()
            table.column("address", .jsonText).notNull()
            table.column("scores", .jsonText).notNull()
            table.column("joinedAt", .datetime).notNull()
        }
    }

    func differences(from other: Profile) -> [String] {
        var result = FieldComparison()
        result.compare("username", username, other.username)
        result.compare("name", name, other.name)
        result.compare("address", address, other.address)
        result.compare("scores", scores, other.scores)
        result.compare("joinedAt", joinedAt, other.joinedAt)
        return result.differences
    }
}
