import TestSupport
import Foundation
import MirrorStore

/// Models for the query tests: a hero with scalars of several kinds, arrays, a set, an enum, a
/// to-one link to a publisher and a to-many link to dogs.
final class QueryPublisher: Persistable {
    var identifier = 0
    var name = ""
    var country: String?
    init() {}
    static var primaryKey: String? { "identifier" }
    static var indexedProperties: [String] { ["name"] }
}

final class QueryDog: Persistable {
    var identifier = 0
    var name = ""
    var age = 0
    init() {}
    static var primaryKey: String? { "identifier" }
}

enum QuerySide: String, Codable, Sendable {
    case hero, villain, neutral
}

final class QueryHero: Persistable {
    var identifier = 0
    var name = ""
    var realName: String?
    var age = 0
    var rating = 0.0
    var side = QuerySide.hero
    var joined = Date(timeIntervalSinceReferenceDate: 0)
    var isActive = false
    var tags: [String] = []
    var powers: Set<Int> = []
    var publisher: QueryPublisher?
    var dogs: [QueryDog] = []
    var scratch = 0
    init() {}
    static var primaryKey: String? { "identifier" }
    static var indexedProperties: [String] { ["name", "age", "joined", "tags", "realName"] }
    static var ignoredProperties: [String] { ["scratch"] }

    /// Not stored: queries on it are answered on the decoded model.
    var nameLength: Int { name.count }
}

/// Builds heroes, publishers and dogs from a seed, with values chosen so that conditions match
/// some objects and not others.
struct QueryWorld {
    static let names = ["Thor", "Hulk", "Ant-Man", "Élodie", "zed", "Zed", "", "Thor Odinson", "Hawkeye", "Wasp", "Vision", "Ω"]
    static let tagWords = ["avenger", "cosmic", "street", "mutant", "tech"]

    var random: SeededRandom
    var publishers: [QueryPublisher] = []
    var dogs: [QueryDog] = []

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
        for identifier in 1...30 {
            let publisher = QueryPublisher()
            publisher.identifier = identifier
            publisher.name = random.pick(["Marvel", "DC", "Image", "Dark Horse"])
            publisher.country = random.chance(30) ? nil : random.pick(["US", "FR", "JP"])
            publishers.append(publisher)
        }
        for identifier in 1...200 {
            let dog = QueryDog()
            dog.identifier = identifier
            dog.name = random.pick(["Rex", "Lucky", "Bolt", "Krypto"])
            dog.age = Int.random(in: 0..<15, using: &random)
            dogs.append(dog)
        }
    }

    mutating func hero(_ identifier: Int) -> QueryHero {
        let hero = QueryHero()
        hero.identifier = identifier
        hero.name = random.pick(Self.names)
        hero.realName = random.chance(30) ? nil : random.pick(Self.names)
        hero.age = Int.random(in: 0..<100, using: &random)
        hero.rating = Double(Int.random(in: 0..<1000, using: &random)) / 10
        hero.side = random.pick([.hero, .villain, .neutral])
        hero.joined = Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0..<1000, using: &random)) * 86_400)
        hero.isActive = random.chance(50)
        hero.tags = (0..<Int.random(in: 0...3, using: &random)).map { _ in random.pick(Self.tagWords) }
        hero.powers = Set((0..<Int.random(in: 0...3, using: &random)).map { _ in Int.random(in: 0..<10, using: &random) })
        hero.publisher = random.chance(15) ? nil : random.pick(publishers)
        hero.dogs = (0..<Int.random(in: 0...3, using: &random)).map { _ in random.pick(dogs) }
        return hero
    }
}
