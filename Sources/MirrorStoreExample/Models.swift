import MirrorStore

/// A publisher: linked from heroes by its primary key, so it is stored once.
final class Publisher: Persistable {
    var identifier = 0
    var name = ""
    init() {}
    static var primaryKey: String? { "identifier" }
}

enum Side: String, Codable, Sendable {
    case hero, villain
}

/// A hero: scalars, an enum, a to-one link, and collections, with no storage code at all.
final class Hero: Persistable {
    var identifier = 0
    var name = ""
    var realName = ""
    var side = Side.hero
    var publisher: Publisher?
    var tags: [String] = []
    var aliases: Set<String> = []
    var cache: [String: Int] = [:]
    init() {}
    static var primaryKey: String? { "identifier" }
    static var indexedProperties: [String] { ["name"] }
    static var ignoredProperties: [String] { ["cache"] }

    convenience init(_ identifier: Int, _ name: String, _ realName: String, publisher: Publisher, tags: [String] = []) {
        self.init()
        self.identifier = identifier
        self.name = name
        self.realName = realName
        self.publisher = publisher
        self.tags = tags
    }
}
