import Foundation
import Testing
import TestSupport
import MirrorStore

private final class RuleToy: Persistable {
    var id = 0
    init() {}
    static var primaryKey: String? { "id" }
}

private final class RuleVet: Persistable {
    var id = 0
    init() {}
    static var primaryKey: String? { "id" }
}

private final class RulePet: Persistable {
    var id = 0
    var toy: RuleToy?
    var friend: RulePet?
    init() {}
    static var primaryKey: String? { "id" }
    /// A pet's toy goes with it; so does its friend, and the friend's friend: cycles end.
    static var deleteRules: [String: DeleteRule] { ["toy": .cascade, "friend": .cascade] }
}

private final class RuleOwner: Persistable {
    var id = 0
    var pets: [RulePet] = []
    var vet: RuleVet?
    init() {}
    static var primaryKey: String? { "id" }
    static var deleteRules: [String: DeleteRule] { ["pets": .cascade, "vet": .deny] }
}

/// Delete rules against a plain reference: random adds and deletes of owners, pets, toys and
/// vets, each applied to the store and to dictionaries by the rules' own definition.
@Suite struct DeleteRuleTests {
    /// What is stored, by type and key, with each object's links.
    struct Reference {
        var owners: [Int: (pets: [Int], vet: Int?)] = [:]
        var pets: [Int: (toy: Int?, friend: Int?)] = [:]
        var toys: Set<Int> = []
        var vets: Set<Int> = []

        /// Deletes under the rules; `false` (and nothing deleted) when a deny applies.
        mutating func delete(owners deletedOwners: Set<Int> = [], pets deletedPets: Set<Int> = [], toys deletedToys: Set<Int> = [], vets deletedVets: Set<Int> = []) -> Bool {
            let owners = deletedOwners.intersection(self.owners.keys)
            var pets = deletedPets.intersection(self.pets.keys)
            var toys = deletedToys.intersection(self.toys)
            let vets = deletedVets.intersection(self.vets)
            for owner in owners { pets.formUnion(self.owners[owner]?.pets.filter { self.pets[$0] != nil } ?? []) }
            var queue = Array(pets)
            while let pet = queue.popLast() {
                guard let links = self.pets[pet] else { continue }
                if let toy = links.toy, self.toys.contains(toy) { toys.insert(toy) }
                if let friend = links.friend, self.pets[friend] != nil, pets.insert(friend).inserted { queue.append(friend) }
            }
            // A vet an owner that stays links to cannot go.
            for (owner, links) in self.owners where !owners.contains(owner) {
                if let vet = links.vet, vets.contains(vet) { return false }
            }
            owners.forEach { self.owners[$0] = nil }
            pets.forEach { self.pets[$0] = nil }
            self.toys.subtract(toys)
            self.vets.subtract(vets)
            return true
        }
    }

    static func stored(_ store: Store) throws -> Reference {
        var reference = Reference()
        for owner in try store.objects(RuleOwner.self).all() { reference.owners[owner.id] = (owner.pets.map(\.id), owner.vet?.id) }
        for pet in try store.objects(RulePet.self).all() { reference.pets[pet.id] = (pet.toy?.id, pet.friend?.id) }
        reference.toys = Set(try store.objects(RuleToy.self).all().map(\.id))
        reference.vets = Set(try store.objects(RuleVet.self).all().map(\.id))
        return reference
    }

    @Test("cascade, deny and nullify match a reference over random adds and deletes")
    func modelBased() throws {
        let seed = SeededRandom.seed(default: 0x29_0001)
        var random = SeededRandom(seed: seed)
        let store = try Store.inMemory(models: [RuleOwner.self, RuleVet.self])
        var reference = Reference()
        for step in 0..<300 {
            let context = "seed \(seed), step \(step)"
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4:
                // An owner with new or existing pets (with toys and friends) and maybe a vet.
                let owner = RuleOwner()
                owner.id = Int.random(in: 1...20, using: &random)
                for _ in 0..<Int.random(in: 0...3, using: &random) {
                    let pet = RulePet()
                    pet.id = Int.random(in: 1...40, using: &random)
                    if random.chance(50) { pet.toy = RuleToy(); pet.toy?.id = Int.random(in: 1...30, using: &random) }
                    if random.chance(30), let friendID = reference.pets.keys.sorted().randomElement(using: &random), friendID != pet.id {
                        pet.friend = try store.object(RulePet.self, primaryKey: friendID)
                    }
                    owner.pets.append(pet)
                }
                if random.chance(50) { owner.vet = RuleVet(); owner.vet?.id = Int.random(in: 1...5, using: &random) }
                try store.write { try $0.add(owner) }
                reference = try Self.stored(store)
            case 4, 5:
                let id = Int.random(in: 1...20, using: &random)
                try store.write { try $0.delete(RuleOwner.self, primaryKey: id) }
                let deleted = reference.delete(owners: [id])
                #expect(deleted, "\(context)")
            case 6:
                let id = Int.random(in: 1...40, using: &random)
                try store.write { try $0.delete(RulePet.self, primaryKey: id) }
                let deleted = reference.delete(pets: [id])
                #expect(deleted, "\(context)")
            case 7:
                let id = Int.random(in: 1...30, using: &random)
                try store.write { try $0.delete(RuleToy.self, primaryKey: id) }
                let deleted = reference.delete(toys: [id])
                #expect(deleted, "\(context)")
            case 8:
                let id = Int.random(in: 1...5, using: &random)
                let allowed = reference.delete(vets: [id])
                do {
                    try store.write { try $0.delete(RuleVet.self, primaryKey: id) }
                    #expect(allowed, "\(context): a vet an owner links to was deleted")
                } catch let error as StoreError {
                    guard case .deleteDenied(let typeName, let key, let linkedFrom, _, let property) = error.kind else { throw error }
                    #expect(!allowed && typeName == "RuleVet" && key == "\(id)" && linkedFrom == "RuleOwner" && property == "vet", "\(context)")
                }
            default:
                try store.write { try $0.deleteAll(RulePet.self) }
                let deleted = reference.delete(pets: Set(reference.pets.keys))
                #expect(deleted, "\(context)")
            }
            let actual = try Self.stored(store)
            #expect(Set(actual.owners.keys) == Set(reference.owners.keys), "\(context) owners")
            #expect(Set(actual.pets.keys) == Set(reference.pets.keys), "\(context) pets")
            #expect(actual.toys == reference.toys, "\(context) toys")
            #expect(actual.vets == reference.vets, "\(context) vets")
            if Set(actual.pets.keys) != Set(reference.pets.keys) { return }
        }
    }

    @Test("a denied delete deletes nothing, and the same delete may remove the link's owner too")
    func denyIsAllOrNothing() throws {
        let store = try Store.inMemory(models: [RuleOwner.self, RuleVet.self])
        let owner = RuleOwner()
        owner.id = 1
        owner.vet = RuleVet()
        owner.vet?.id = 7
        try store.write { try $0.add(owner) }
        let error = #expect(throws: StoreError.self) {
            try store.write { transaction in
                try transaction.deleteAll(RuleVet.self)
            }
        }
        #expect(error?.kind == .deleteDenied(typeName: "RuleVet", key: "7", linkedFrom: "RuleOwner", sourceKey: "1", property: "vet"))
        #expect(try store.objects(RuleVet.self).count == 1)
        try store.write { transaction in
            try transaction.delete(RuleOwner.self, primaryKey: 1)
            try transaction.delete(RuleVet.self, primaryKey: 7)
        }
        #expect(try store.objects(RuleVet.self).count == 0)
    }

    /// The ways a transaction deletes objects of a type: each must apply the rules.
    enum DeletePath: String, CaseIterable, Sendable {
        case primaryKey, model, predicate, results, all

        /// Deletes the objects of `type` with `ids`, which `matching` matches (every stored one for
        /// ``all``), by this path.
        func delete<Model: Persistable>(_ type: Model.Type, ids: [Int], matching: Predicate<Model>, in store: Store) throws {
            let results = try store.objects(type).filter(matching)
            try store.write { transaction in
                switch self {
                case .primaryKey: for id in ids { try transaction.delete(type, primaryKey: id) }
                case .model: for model in try results.all() { try transaction.delete(model) }
                case .predicate: try transaction.delete(type, where: matching)
                case .results: try transaction.delete(results)
                case .all: try transaction.deleteAll(type)
                }
            }
        }
    }

    /// Owner 1 with pet 10 (toy 100, friend pet 11) and vet 7; owner 2 with pet 12 and vet 8.
    static func family() throws -> Store {
        let store = try Store.inMemory(models: [RuleOwner.self, RuleVet.self])
        for (ownerID, petID, vetID) in [(1, 10, 7), (2, 12, 8)] {
            let owner = RuleOwner()
            owner.id = ownerID
            let pet = RulePet()
            pet.id = petID
            owner.pets = [pet]
            owner.vet = RuleVet()
            owner.vet?.id = vetID
            try store.write { try $0.add(owner) }
        }
        let pet = try #require(try store.object(RulePet.self, primaryKey: 10))
        pet.toy = RuleToy()
        pet.toy?.id = 100
        pet.friend = RulePet()
        pet.friend?.id = 11
        try store.write { try $0.add(pet) }
        return store
    }

    @Test("every delete path cascades", arguments: DeletePath.allCases)
    func everyPathCascades(path: DeletePath) throws {
        let store = try Self.family()
        let ids = path == .all ? [1, 2] : [1]
        try path.delete(RuleOwner.self, ids: ids, matching: #Predicate { ids.contains($0.id) }, in: store)
        let petIDs = Set(try store.objects(RulePet.self).all().map(\.id))
        #expect(petIDs == (path == .all ? [] : [12]))
        #expect(try store.objects(RuleToy.self).count == 0)
        #expect(try store.objects(RuleVet.self).count == 2)
    }

    @Test("every delete path denies, deleting nothing", arguments: DeletePath.allCases)
    func everyPathDenies(path: DeletePath) throws {
        let store = try Self.family()
        let error = #expect(throws: StoreError.self) {
            try path.delete(RuleVet.self, ids: [7, 8], matching: #Predicate { $0.id >= 7 }, in: store)
        }
        guard case .deleteDenied(let typeName, _, let linkedFrom, _, let property) = error?.kind else {
            Issue.record("expected deleteDenied, got \(String(describing: error))")
            return
        }
        #expect(typeName == "RuleVet" && linkedFrom == "RuleOwner" && property == "vet")
        #expect(try store.objects(RuleVet.self).count == 2)
    }

    final class Plain: Persistable {
        var id = 0
        var name = ""
        var note = Note()
        init() {}
        static var primaryKey: String? { "id" }
        nonisolated(unsafe) static var rules: [String: DeleteRule] = [:]
        static var deleteRules: [String: DeleteRule] { rules }
    }

    struct Note: Persistable {
        var text = ""
    }

    @Test("a rule on a property that is not a link to a model with a primary key is refused, naming it", arguments: [
        ("name", "it holds String values, not links to models"),
        ("missing", "the model stores no property of that name"),
        ("note", "Note has no primary key, so it is embedded, not linked, and goes with its parent"),
    ])
    func badRulesAreNamed(property: String, reason: String) throws {
        Plain.rules = [property: .cascade]
        defer { Plain.rules = [:] }
        let error = #expect(throws: StoreError.self) { try Store.inMemory(models: [Plain.self]) }
        #expect(error?.kind == .invalidDeleteRule(typeName: "Plain", property: property, reason: reason))
    }
}
