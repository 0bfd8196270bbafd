import Foundation
import Testing
import MirrorStore
import MirrorStoreEngine

private final class Squad: Persistable {
    var identifier = 0
    var name = ""
    var motto = ""
    var captain: Member?
    var cache = 0
    init() {}
    static var primaryKey: String? { "identifier" }
    static var ignoredProperties: [String] { ["cache"] }
    var shout: String { name.uppercased() }

    static func make(_ identifier: Int, _ name: String, captain: Member?) -> Squad {
        let squad = Squad()
        squad.identifier = identifier
        squad.name = name
        squad.captain = captain
        return squad
    }
}

private final class Member: Persistable {
    var identifier = 0
    var name = ""
    var age = 0
    init() {}
    static var primaryKey: String? { "identifier" }

    static func make(_ identifier: Int, _ name: String) -> Member {
        let member = Member()
        member.identifier = identifier
        member.name = name
        return member
    }
}

/// `results.changes(keyPaths:)`: elements only for changes of membership, order, or a watched
/// property, through links too; a change of another property wakes the observer but makes no
/// element and no modification.
@Suite struct WatchedChangesTests {
    @Test("only watched properties, on the object or through its link, make modifications")
    func onlyWatchedPropertiesCount() async throws {
        let store = try Store.inMemory(models: [Squad.self])
        try await store.write { transaction in
            for identifier in 1...3 {
                try transaction.add(Squad.make(identifier, "S\(identifier)", captain: Member.make(identifier, "M\(identifier)")))
            }
        }
        var iterator = try store.objects(Squad.self).changes(keyPaths: [\.name, \.captain?.name]).makeAsyncIterator()
        let first = try #require(try await iterator.next())
        #expect(first.results.count == 3)

        // An unwatched property, then a watched one: one element, the watched change only (the
        // first commit made none, or coalesced into this one without counting).
        try await store.write { try $0.update(Squad.self, primaryKey: 1) { $0.motto = "onwards" } }
        try await store.write { try $0.update(Squad.self, primaryKey: 2) { $0.name = "Two" } }
        let named = try #require(try await iterator.next())
        #expect(named.modifications == IndexSet(integer: 1))
        #expect(named.insertions.isEmpty && named.deletions.isEmpty)

        // Through the link: the captain's age does not count, the captain's name does.
        try await store.write { try $0.update(Member.self, primaryKey: 3) { $0.age = 40 } }
        try await store.write { try $0.update(Member.self, primaryKey: 3) { $0.name = "Third" } }
        let linked = try #require(try await iterator.next())
        #expect(linked.modifications == IndexSet(integer: 2))

        // Unwatched changes, then an insertion: the element holds the insertion alone.
        try await store.write { try $0.update(Member.self, primaryKey: 1) { $0.age = 9 } }
        try await store.write { try $0.update(Squad.self, primaryKey: 2) { $0.motto = "again" } }
        try await store.write { try $0.add(Squad.make(4, "S4", captain: nil)) }
        let inserted = try #require(try await iterator.next())
        #expect(inserted.insertions == IndexSet(integer: 3))
        #expect(inserted.modifications.isEmpty)

        // A link set to another object with the same watched name is no change; to nil, one.
        try await store.write { try $0.update(Squad.self, primaryKey: 1) { $0.captain = Member.make(11, "M1") } }
        try await store.write { try $0.update(Squad.self, primaryKey: 2) { $0.captain = nil } }
        let unlinked = try #require(try await iterator.next())
        #expect(unlinked.modifications == IndexSet(integer: 1))
    }

    @Test("the object form: an element for a watched change, its deletion, and its return")
    func objectFormWatchesItsProperties() async throws {
        let store = try Store.inMemory(models: [Squad.self])
        try await store.write { try $0.add(Squad.make(1, "S1", captain: Member.make(1, "M1"))) }
        var iterator = try store.changes(Squad.self, primaryKey: 1, keyPaths: [\.captain?.name]).makeAsyncIterator()
        #expect(try await iterator.next()??.name == "S1")
        try await store.write { try $0.update(Squad.self, primaryKey: 1) { $0.name = "renamed" } }
        try await store.write { try $0.update(Member.self, primaryKey: 1) { $0.age = 3 } }
        try await store.write { try $0.update(Member.self, primaryKey: 1) { $0.name = "Captain" } }
        let changed = try #require(try await iterator.next())
        #expect(changed?.captain?.name == "Captain" && changed?.name == "renamed")
        try await store.write { try $0.delete(Squad.self, primaryKey: 1) }
        let deleted = try #require(try await iterator.next())
        #expect(deleted == nil)
        let missing = #expect(throws: QueryError.self) { try store.changes(Squad.self, primaryKey: 1, keyPaths: [\.shout]) }
        #expect(missing?.kind == .unknownProperty(typeName: "Squad", property: "a computed property"))
    }

    @Test("a key path that is not a stored property is a typed error naming it")
    func badKeyPathsAreNamed() throws {
        let store = try Store.inMemory(models: [Squad.self])
        let squads = try store.objects(Squad.self)
        let ignored = #expect(throws: QueryError.self) { try squads.changes(keyPaths: [\.cache]) }
        #expect(ignored?.kind == .ignoredProperty(typeName: "Squad", property: "cache"))
        let computed = #expect(throws: QueryError.self) { try squads.changes(keyPaths: [\.shout]) }
        #expect(computed?.kind == .unknownProperty(typeName: "Squad", property: "a computed property"))
        let through = #expect(throws: QueryError.self) { try squads.changes(keyPaths: [\.name.count]) }
        if case .unknownProperty? = through?.kind {} else { Issue.record("\(String(describing: through))") }
    }
}
