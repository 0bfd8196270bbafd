import Foundation
import MirrorStore

enum Suit: String, CaseIterable, Hashable { case hearts, spades, clubs, diamonds }
enum Level: Int, CaseIterable, Hashable { case low = 1, middle = 5, high = 9 }
enum Ratio: Double, CaseIterable, Hashable { case half = 0.5, whole = 1 }

/// A struct model with a property of every supported scalar type, their optionals, raw-value
/// enums, and every container shape.
struct AllTypes: Persistable, Equatable {
    var bool = false
    var int = 0
    var int8: Int8 = 0
    var int16: Int16 = 0
    var int32: Int32 = 0
    var int64: Int64 = 0
    var uint: UInt = 0
    var uint8: UInt8 = 0
    var uint16: UInt16 = 0
    var uint32: UInt32 = 0
    var uint64: UInt64 = 0
    var float: Float = 0
    var double = 0.0
    var string = ""
    var data = Data()
    var date = Date(timeIntervalSinceReferenceDate: 0)
    var uuid = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    var decimal = Decimal()
    var url = URL(fileURLWithPath: "/")
    var suit = Suit.hearts
    var level = Level.low
    var ratio = Ratio.half

    var optionalBool: Bool?
    var optionalInt: Int?
    var optionalInt8: Int8?
    var optionalUInt64: UInt64?
    var optionalFloat: Float?
    var optionalDouble: Double?
    var optionalString: String?
    var optionalData: Data?
    var optionalDate: Date?
    var optionalUUID: UUID?
    var optionalDecimal: Decimal?
    var optionalURL: URL?
    var optionalSuit: Suit?

    var ints: [Int] = []
    var strings: Set<String> = []
    var doubles: [String: Double] = [:]
    var optionalStrings: [String]?
    var optionalElements: [Int?] = []
    var nestedLists: [[String]] = []
    var listsByKey: [String: [Int]] = [:]
    var suits: [Suit] = []
    var levels: Set<Level> = []
    var optionalSet: Set<UUID>?

    init() {}
}

/// Leaf of a three-level graph, as a struct.
struct Address: Persistable, Hashable {
    var street = ""
    var zip: Int?
    init() {}
}

final class Company: Persistable {
    var name = ""
    var headquarters = Address()
    var branches: [Address] = []
    init() {}
}

final class Employee: Persistable {
    var identifier = 0
    var name = ""
    var employer: Company?
    var previousEmployers: [Company] = []
    var homes: Set<Address> = []
    var contacts: [String: Address] = [:]
    init() {}
    static var primaryKey: String? { "identifier" }
}

/// A class graph node: links to itself make cycles, two links to one node make sharing.
final class Node: Persistable {
    var name = ""
    var next: Node?
    var children: [Node] = []
    var byName: [String: Node] = [:]
    init() {}
}

class Animal: Persistable {
    var name = ""
    var legs = 4
    required init() {}
}

class Dog: Animal {
    var breed = ""
    var goodBoy = true
}

final class Puppy: Dog {
    var ageInWeeks = 8
}

final class Zoo: Persistable {
    var star: Animal?
    init() {}
}

final class LegacyRecord: NSObject, Persistable {
    var title = ""
    var count = 0
    var tags: [String] = []
    override init() {}
}

final class Publisher: Persistable {
    var identifier = 0
    var name = ""
    init() {}
    static var primaryKey: String? { "identifier" }
}

enum Power: String { case flight, money, strength }

final class Hero: Persistable {
    var identifier = 0
    var name = ""
    var realName = ""
    var power = Power.money
    var publisher: Publisher?
    var tags: [String] = []
    var aliases: Set<String> = []
    var cache: [String: Int] = [:]
    lazy var displayName = "\(name) (\(realName))"
    init() {}
    static var primaryKey: String? { "identifier" }
    static var indexedProperties: [String] { ["name"] }
    static var ignoredProperties: [String] { ["cache"] }

    static func ironMan() -> Hero {
        let hero = Hero()
        hero.identifier = 1455
        hero.name = "Iron Man"
        hero.realName = "Tony Stark"
        let publisher = Publisher()
        publisher.identifier = 1
        publisher.name = "Marvel"
        hero.publisher = publisher
        hero.tags = ["avenger", "genius"]
        hero.aliases = ["Shellhead"]
        hero.cache = ["views": 3]
        return hero
    }
}
