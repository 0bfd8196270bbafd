import Foundation
import Testing
import TestSupport
@_spi(Testing) import MirrorStore

final class PresenceHolding: Persistable, Equatable {
    var identifier = 0
    var name = ""
    init() {}
    static var primaryKey: String? { "identifier" }
    static func == (lhs: PresenceHolding, rhs: PresenceHolding) -> Bool { lhs.identifier == rhs.identifier }
    static var indexedProperties: [String] { ["name"] }
}

final class PresenceEmployer: Persistable, Equatable {
    var identifier = 0
    var name = ""
    var holding: PresenceHolding?
    init() {}
    static var primaryKey: String? { "identifier" }
    static func == (lhs: PresenceEmployer, rhs: PresenceEmployer) -> Bool { lhs.identifier == rhs.identifier }
}

final class PresencePerson: Persistable {
    var identifier = 0
    var name = ""
    var employer: PresenceEmployer?
    init() {}
    static var primaryKey: String? { "identifier" }
}

/// `link == nil` and `link != nil` read the link's index, counting a link to a deleted object
/// as `nil`, as the model reads it; chains of optional links join through their indexes.
@Suite("Link presence by index")
struct LinkPresenceTests {
    /// People, employers and holdings, some links `nil`; then employer 1 and holding 2 are
    /// deleted, and the models' links to them set to `nil`, as a read gives them.
    static func world() throws -> (Store, [PresencePerson]) {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x11F))
        let holdings = (1...4).map { identifier in
            let holding = PresenceHolding()
            holding.identifier = identifier
            holding.name = "H\(identifier % 3)"
            return holding
        }
        let employers = (1...8).map { identifier in
            let employer = PresenceEmployer()
            employer.identifier = identifier
            employer.name = "E\(identifier)"
            employer.holding = random.chance(20) ? nil : random.pick(holdings)
            return employer
        }
        let people = (1...300).map { identifier in
            let person = PresencePerson()
            person.identifier = identifier
            person.name = random.pick(["Ann", "Bob", "Cy"])
            person.employer = random.chance(25) ? nil : random.pick(employers)
            return person
        }
        let store = try Store.inMemory(models: [PresencePerson.self])
        try store.write { try $0.add(contentsOf: people) }
        try store.write { transaction in
            try transaction.delete(PresenceEmployer.self, primaryKey: 1)
            try transaction.delete(PresenceHolding.self, primaryKey: 2)
        }
        for person in people where person.employer?.identifier == 1 { person.employer = nil }
        for employer in employers where employer.holding?.identifier == 2 { employer.holding = nil }
        return (store, people)
    }

    static func check(
        _ store: Store, _ people: [PresencePerson], _ predicate: Predicate<PresencePerson>,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> QueryPlan {
        let results = try store.objects(PresencePerson.self).filter(predicate)
        let expected = try people.filter { try predicate.evaluate($0) }.map(\.identifier)
        #expect(results.map(\.identifier) == expected, "plan: \(results.plan)", sourceLocation: sourceLocation)
        return results.plan
    }

    @Test("`== nil` and `!= nil` on a to-one link read its index; a deleted object's link reads nil")
    func nilLinksReadTheIndex() throws {
        let (store, people) = try Self.world()
        #expect(people.contains { $0.employer == nil } && people.contains { $0.employer != nil })
        let none = try Self.check(store, people, #Predicate { $0.employer == nil })
        #expect(none.access == .index(name: "PresencePerson.employer", range: "== nil"))
        #expect(none.filter == .none)
        let some = try Self.check(store, people, #Predicate { $0.employer != nil })
        #expect(some.access == .index(name: "PresencePerson.employer", range: "!= nil"))
        #expect(some.filter == .none)
        let named = try Self.check(store, people, #Predicate { $0.name == "Ann" && $0.employer == nil })
        #expect(named.access == .index(name: "PresencePerson.employer", range: "== nil"))
        #expect(named.filter == .storedBytes || named.filter == .records)
        // Through a link: employers without a holding (or with a deleted one), then their people.
        let noHolding = try Self.check(store, people, #Predicate { $0.employer?.holding == nil })
        #expect(noHolding.filter != .recordsThenModels)
    }

    @Test("A chain of two optional links joins through both links' indexes")
    func twoLinkChains() throws {
        let (store, people) = try Self.world()
        let h1 = try Self.check(store, people, #Predicate { $0.employer?.holding?.name == "H1" })
        #expect(h1.access == .linked(index: "PresencePerson.employer",
                                     target: "index PresenceEmployer.holding of the objects found by: index PresenceHolding.name == \"H1\""))
        #expect(h1.filter == .records)
        let h2 = try Self.check(store, people, #Predicate { $0.employer?.holding?.name == "H2" })
        #expect(h2.filter == .records)
    }

    @Test("Inside a write block, a link to an object deleted in the block reads nil")
    func nilLinksInAWriteBlock() throws {
        let (store, people) = try Self.world()
        let linkedToTwo = people.filter { $0.employer?.identifier == 2 }.map(\.identifier)
        #expect(!linkedToTwo.isEmpty)
        let expected = people.filter { $0.employer == nil || $0.employer?.identifier == 2 }.count
        try store.write { transaction in
            try transaction.delete(PresenceEmployer.self, primaryKey: 2)
            #expect(try transaction.delete(PresencePerson.self, where: #Predicate { $0.employer == nil }) == expected)
            #expect(try linkedToTwo.allSatisfy { try transaction.object(PresencePerson.self, primaryKey: $0) == nil })
        }
    }
}
