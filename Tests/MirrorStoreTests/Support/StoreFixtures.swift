import Foundation
import MirrorStore

/// A model with a primary key whose links can form cycles through stored references.
final class Person: Persistable {
    var identifier = 0
    var name = ""
    var bestFriend: Person?
    var friends: [Person] = []
    var home = Address()
    init() {}
    static var primaryKey: String? { "identifier" }

    static func named(_ name: String, _ identifier: Int) -> Person {
        let person = Person()
        person.identifier = identifier
        person.name = name
        return person
    }
}

struct Tag: Persistable, Hashable {
    var label = ""
    var weight = 0
    init() {}
    init(_ label: String, weight: Int = 0) {
        self.label = label
        self.weight = weight
    }
}

struct Article: Persistable {
    var slug = ""
    var title = ""
    var tags: [Tag] = []
    var featured: Tag?
    var byKey: [String: Tag] = [:]
    var author: Person?
    init() {}
    static var primaryKey: String? { "slug" }
}

struct Device: Persistable {
    var serial = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    var model = ""
    init() {}
    static var primaryKey: String? { "serial" }
}

struct Counter: Persistable {
    var slot: UInt8 = 0
    var count = 0
    init() {}
    static var primaryKey: String? { "slot" }
}
