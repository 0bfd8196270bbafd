import MirrorStore

/// An owner of pets, with the inverses of both kinds of link a pet has to it.
final class Owner: Persistable {
    var identifier = 0
    var name = ""
    var pets = LinkingObjects<Pet>(property: "owner")
    var sharedPets = LinkingObjects<Pet>(property: "coOwners")
    init() {}
    static var primaryKey: String? { "identifier" }

    static func named(_ name: String, _ identifier: Int) -> Owner {
        let owner = Owner()
        owner.identifier = identifier
        owner.name = name
        return owner
    }
}

/// Links to owners: to-one through `owner`, to-many through `coOwners`.
final class Pet: Persistable {
    var identifier = 0
    var name = ""
    var owner: Owner?
    var coOwners: [Owner] = []
    init() {}
    static var primaryKey: String? { "identifier" }
}

/// The same type as `Owner` in a file, without the inverses: the stored schemas are the same.
final class PlainOwner: Persistable {
    var identifier = 0
    var name = ""
    init() {}
    static var primaryKey: String? { "identifier" }
    static var persistedTypeName: String { "Owner" }
}

/// Struct models whose inverse and link form a cycle.
struct Walker: Persistable {
    var identifier = 0
    var walks = LinkingObjects<Walk>(property: "walker")
    init() {}
    static var primaryKey: String? { "identifier" }
}

struct Walk: Persistable {
    var identifier = 0
    var walker: Walker?
    init() {}
    static var primaryKey: String? { "identifier" }
}

/// A tree whose nodes list their children as the inverse of `parent`.
final class TreeNode: Persistable {
    var identifier = 0
    var parent: TreeNode?
    var children = LinkingObjects<TreeNode>(property: "parent")
    init() {}
    static var primaryKey: String? { "identifier" }
}

// Inverses that cannot apply, each refused with its own MappingError.

/// No primary key, so no link can point at it.
struct KeylessTarget: Persistable {
    var name = ""
    var sources = LinkingObjects<KeylessSource>(property: "target")
    init() {}
}

struct KeylessSource: Persistable {
    var identifier = 0
    var target: KeylessTarget?
    init() {}
    static var primaryKey: String? { "identifier" }
}

/// Names a property `Pet` does not have.
final class Ghost: Persistable {
    var identifier = 0
    var haunted = LinkingObjects<Pet>(property: "ghost")
    init() {}
    static var primaryKey: String? { "identifier" }
}

/// Names a property of `Pet` that is not a link.
final class NameFan: Persistable {
    var identifier = 0
    var pets = LinkingObjects<Pet>(property: "name")
    init() {}
    static var primaryKey: String? { "identifier" }
}

/// Names a link of `Pet` to another type, `Owner`.
final class Vet: Persistable {
    var identifier = 0
    var patients = LinkingObjects<Pet>(property: "owner")
    init() {}
    static var primaryKey: String? { "identifier" }
}

/// Names a dictionary of links, which the store does not index per linked object.
final class Sponsor: Persistable {
    var identifier = 0
    var sponsored = LinkingObjects<Sponsorship>(property: "byRole")
    init() {}
    static var primaryKey: String? { "identifier" }
}

final class Sponsorship: Persistable {
    var identifier = 0
    var byRole: [String: Sponsor] = [:]
    init() {}
    static var primaryKey: String? { "identifier" }
}
