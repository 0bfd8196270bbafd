import Foundation
import MirrorStore

enum Mood: String, Codable, Sendable { case happy, sad, calm }
enum Level: Int { case low = -1, mid = 0, high = 7 }

struct Geo: Persistable, Equatable {
    var latitude = 0.0
    var longitude = 0.0
    var label: String?
}

/// Embedded (no primary key): kept as jsonb in its parent's row.
struct Address: Persistable, Equatable {
    var street = ""
    var number: Int16 = 0
    var geo = Geo()
    var previous: [Geo] = []
    var since: Date?
}

struct Publisher: Persistable, Equatable {
    var identifier = 0
    var name = ""
    static var primaryKey: String? { "identifier" }
}

/// One property of every kind the PostgreSQL backend stores.
struct Sample: Persistable, Equatable {
    var id = 0
    var flag = false
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
    var text = ""
    var data = Data()
    var date = Date(timeIntervalSinceReferenceDate: 0)
    var uuid = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    var decimal: Decimal = 0
    var url = URL(fileURLWithPath: "/")
    var mood = Mood.happy
    var optionalText: String?
    var optionalInt: Int?
    var optionalDate: Date?
    var optionalMood: Mood?
    var optionalUUID: UUID?
    var numbers: [Int] = []
    var names: [String] = []
    var tags: Set<String> = []
    var doubles: [Double] = []
    var floats: [Float] = []
    var flags: [Bool] = []
    var uuids: [UUID] = []
    var dates: [Date] = []
    var moods: [Mood] = []
    var blobs: [Data] = []
    var decimals: [Decimal] = []
    var unsigneds: [UInt64] = []
    var optionalNumbers: [Int?] = []
    var maybeNames: [String]?
    var scores: [String: Double] = [:]
    var nested: [String: [Int]] = [:]
    var address = Address()
    var addresses: [Address] = []
    var optionalAddress: Address?
    var publisher: Publisher?
    var level = Level.mid
    var levels: [Level] = []
    var places: [String: Geo] = [:]
    var maybeCounts: [String: Int]?
    var numberSet: Set<Int> = []
    var maybeFlags: Set<Bool>?
    static var primaryKey: String? { "id" }
}

/// Immutable: built from its record alone, in fresh memory.
struct Frozen: Persistable, Equatable {
    let id: Int
    let name: String
    let tags: [String]
    let geo: Geo?
    static var primaryKey: String? { "id" }
}

final class Account: Persistable {
    var identifier = ""
    var email = ""
    var team = 0
    var number = 0
    init() {}
    static var primaryKey: String? { "identifier" }
    static var uniqueProperties: [String] { ["email"] }
    static var compoundIndexes: [CompoundIndex] { [.unique("team", "number")] }
}

/// The model of the random query test.
struct Item: Persistable, Equatable {
    var id = 0
    var n = 0
    var x = 0.0
    var s = ""
    var opt: Int?
    var optS: String?
    var flag = false
    var tags: [String] = []
    var mood = Mood.happy
    var big: UInt64 = 0
    var d: Decimal = 0
    var nums: [Int] = []
    static var primaryKey: String? { "id" }
    static var indexedProperties: [String] { ["n", "s", "tags", "nums"] }
}

/// Links in a dictionary: their targets' keys in the `jsonb`.
struct Shelf: Persistable, Equatable {
    var id = 0
    var publishers: [String: Publisher] = [:]
    static var primaryKey: String? { "id" }
}


/// Two models stored under one name, to change a stored schema.
struct VersionedOne: Persistable {
    var id = 0
    var name = ""
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "Versioned" }
}

struct VersionedTwo: Persistable {
    var id = 0
    var title = ""
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "Versioned" }
}

/// A class linking to its own type, for cycles.
final class Person: Persistable {
    var id = 0
    var name = ""
    var bestFriend: Person?
    init() {}
    convenience init(id: Int, name: String) {
        self.init()
        self.id = id
        self.name = name
    }
    static var primaryKey: String? { "id" }
}

/// Keys of every kind a link can hold: String, UUID, UInt64.
struct Owner: Persistable, Equatable {
    var code = ""
    var name = ""
    static var primaryKey: String? { "code" }
}

struct Badge: Persistable, Equatable {
    var id = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    var level = 0
    static var primaryKey: String? { "id" }
}

struct Tagged: Persistable, Equatable {
    var key: UInt64 = 0
    var owner: Owner?
    var badge: Badge?
    var parent: Parent?
    static var primaryKey: String? { "key" }
}

struct Parent: Persistable, Equatable {
    var key: UInt64 = 0
    var owner = Owner()
    static var primaryKey: String? { "key" }
}

/// A unique array: no tag may belong to two objects.
struct UniqueTags: Persistable, Equatable {
    var id = 0
    var tags: [String] = []
    static var primaryKey: String? { "id" }
    static var uniqueProperties: [String] { ["tags"] }
}

/// One stored type with and without a unique property: indexes are not part of the schema.
struct Reindexed: Persistable, Equatable {
    var id = 0
    var name = ""
    static var primaryKey: String? { "id" }
}

struct ReindexedUnique: Persistable, Equatable {
    var id = 0
    var name = ""
    static var primaryKey: String? { "id" }
    static var uniqueProperties: [String] { ["name"] }
    static var persistedTypeName: String { "Reindexed" }
}

/// The models the observation tests write, apart from the others' tables.
struct Watched: Persistable, Equatable {
    var id = 0
    var n = 0
    var label = ""
    var owner: WatchOwner?
    static var primaryKey: String? { "id" }
}

struct WatchOwner: Persistable, Equatable {
    var id = 0
    var name = ""
    var city = ""
    static var primaryKey: String? { "id" }
}

/// One stored type before and after a migration.
struct MigrationOne: Persistable, Equatable {
    var id = 0
    var name = ""
    var note: String?
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "Migrated" }
}

struct MigrationTwo: Persistable, Equatable {
    var id = 0
    var fullName = ""
    var age = 42
    var tags: [String] = ["new"]
    var nickname: String?
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "Migrated" }
}

/// A second type whose change of kind the migration refuses, after the first's DDL ran.
struct MigrationOther: Persistable, Equatable {
    var id = 0
    var value = ""
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "MigratedOther" }
}

struct MigrationOtherAsInt: Persistable, Equatable {
    var id = 0
    var value = 0
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "MigratedOther" }
}

/// ``MigrationTwo`` with `nickname` no longer optional and `age` optional.
struct MigrationThree: Persistable, Equatable {
    var id = 0
    var fullName = ""
    var age: Int?
    var tags: [String] = []
    var nickname = "none"
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "Migrated" }
}

/// Single values only, so reads make it straight from a row's values, with no record between.
struct Gauge: Persistable, Equatable {
    var id = 0
    var level: Int8 = 0
    var reading: Double?
    var label = ""
    var note: String?
    var at = Date(timeIntervalSinceReferenceDate: 0)
    var serial = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    var amount: Decimal = 0
    var big: UInt64 = 0
    var checked: Bool?
    static var primaryKey: String? { "id" }
    static var indexedProperties: [String] { ["level"] }
}

/// Linked by a string key, which an array of links quotes in PostgreSQL's array text.
struct Label: Persistable, Hashable {
    var name = ""
    var color = 0
    static var primaryKey: String? { "name" }
}

/// Arrays of links of every shape, to models keyed by strings and UUIDs.
struct Board: Persistable, Equatable {
    var id = 0
    var labels: [Label] = []
    var slots: [Label?] = []
    var palette: Set<Label> = []
    var badges: [Badge]?
    static var primaryKey: String? { "id" }
    static var deleteRules: [String: DeleteRule] { ["badges": .cascade] }
}

/// A class whose arrays of links lead back to itself.
final class Node: Persistable {
    var id = 0
    var next: [Node] = []
    init() {}
    convenience init(id: Int) {
        self.init()
        self.id = id
    }
    static var primaryKey: String? { "id" }
    static var deleteRules: [String: DeleteRule] { ["next": .cascade] }
}

/// A to-one link whose target cannot be deleted while it links to it.
struct Pin: Persistable, Equatable {
    var id = 0
    var label: Label?
    static var primaryKey: String? { "id" }
    static var deleteRules: [String: DeleteRule] { ["label": .deny] }
}

/// One stored type before and after a migration that adds arrays of links.
struct LinksBefore: Persistable, Equatable {
    var id = 0
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "MigratedLinks" }
}

struct LinksAfter: Persistable, Equatable {
    var id = 0
    var labels: [Label] = []
    var spares: [Label?]?
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "MigratedLinks" }
}

/// A linked type that a migration renames (`MigratedWriter` to `MigratedAuthor`), and the type
/// linking to it, before and after.
struct WriterBefore: Persistable, Equatable {
    var id = 0
    var name = ""
    static var primaryKey: String? { "id" }
    static var indexedProperties: [String] { ["name"] }
    static var persistedTypeName: String { "MigratedWriter" }
}

struct EssayBefore: Persistable, Equatable {
    var id = 0
    var title = ""
    var writer: WriterBefore?
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "MigratedEssay" }
}

struct AuthorAfter: Persistable, Equatable {
    var id = 0
    var name = ""
    static var primaryKey: String? { "id" }
    static var indexedProperties: [String] { ["name"] }
    static var persistedTypeName: String { "MigratedAuthor" }
}

struct EssayAfter: Persistable, Equatable {
    var id = 0
    var title = ""
    var writer: AuthorAfter?
    /// The writer's id as the enumeration read it from the old record's link.
    var writerID = 0
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "MigratedEssay" }
}

/// A stop embedded in a route, linking to a publisher from inside it.
struct Stop: Persistable, Equatable {
    var name = ""
    var publisher: Publisher?
}

/// A route whose embedded stop links to a publisher: a query through it runs in Swift.
struct Route: Persistable, Equatable {
    var id = 0
    var stop = Stop()
    static var primaryKey: String? { "id" }
}
