import Foundation
import Testing
import TestSupport
@testable import MirrorStore

/// Random transactions on owners and pets, mirrored on plain dictionaries: after each one, every
/// owner's inverses read from the store are the pets the dictionaries say link to it, and every
/// pet read is in its owner's inverse. Replay a failure with `MIRRORSTORE_SEED=<seed>`.
@Suite("Inverse relationships model-based")
struct LinkingObjectsModelBasedTests {
    /// What the store should hold. Links are kept as the stored keys: a pet keeps linking to a
    /// deleted owner's key, reads that link as missing, and is listed again if the owner returns.
    struct Reference {
        struct PetState {
            var name: String
            var owner: Int?
            var coOwners: [Int]
        }

        var owners: [Int: String] = [:]
        var pets: [Int: PetState] = [:]

        func pets(ownedBy owner: Int) -> [Int] {
            pets.filter { $0.value.owner == owner }.keys.sorted()
        }

        func pets(coOwnedBy owner: Int) -> [Int] {
            pets.filter { $0.value.coOwners.contains(owner) }.keys.sorted()
        }

        /// A pet as the store gives it back: links to missing owners are gone, and so they are
        /// when the pet is stored again.
        func asRead(_ pet: PetState) -> PetState {
            PetState(name: pet.name, owner: pet.owner.flatMap { owners[$0] == nil ? nil : $0 },
                     coOwners: pet.coOwners.filter { owners[$0] != nil })
        }

        /// An owner object to link to, as the store has it or new.
        func ownerToLink(_ identifier: Int) -> Owner {
            Owner.named(owners[identifier] ?? "owner \(identifier)", identifier)
        }

        /// Linking stores the owners linked to, so missing ones come back.
        mutating func linked(_ linked: [Owner]) {
            for owner in linked { owners[owner.identifier] = owner.name }
        }
    }

    struct Rollback: Error {}

    @Test("300 random transactions with reopen and compaction keep every inverse equal to the links")
    func randomTransactions() throws {
        let seed = SeededRandom.seed(default: 0x5EED_0008)
        var random = SeededRandom(seed: seed)
        try withTemporaryDirectory { directory in
            let path = directory + "/inverse.store"
            var configuration = Store.Configuration()
            configuration.durability = .none
            var store = try Store(path: path, models: [Owner.self], configuration: configuration)
            var expected = Reference()
            for step in 0..<300 {
                let context = "seed \(seed), step \(step)"
                var working = expected
                let rollsBack = random.chance(5)
                do {
                    try store.write { transaction in
                        for _ in 0..<Int.random(in: 1...4, using: &random) {
                            try Self.randomOperation(transaction, &working, &random, context)
                        }
                        if rollsBack { throw Rollback() }
                    }
                    expected = working
                } catch is Rollback {}
                switch step % 50 {
                case 17: try store.compact()
                case 41:
                    try store.close()
                    store = try Store(path: path, models: [Owner.self], configuration: configuration)
                default: break
                }
                guard try Self.matches(store, expected, context) else { return }
            }
            try store.compact()
            #expect(try Self.matches(store, expected, "seed \(seed), after compaction"))
            try store.close()
            store = try Store(path: path, models: [Owner.self], configuration: configuration)
            #expect(try Self.matches(store, expected, "seed \(seed), after reopening"))
            try store.close()
        }
    }

    private static func randomOperation(
        _ transaction: WriteTransaction, _ reference: inout Reference, _ random: inout SeededRandom, _ context: String
    ) throws {
        let ownerIdentifier = Int.random(in: 0..<8, using: &random)
        let petIdentifier = Int.random(in: 0..<30, using: &random)
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<15:
            let name = "owner \(ownerIdentifier).\(random.next() % 100)"
            try transaction.add(Owner.named(name, ownerIdentifier))
            reference.owners[ownerIdentifier] = name
        case 15..<40:
            let pet = Pet()
            pet.identifier = petIdentifier
            pet.name = "pet \(petIdentifier).\(random.next() % 100)"
            let owner = random.chance(80) ? ownerIdentifier : nil
            let coOwners = (0..<Int.random(in: 0...3, using: &random)).map { _ in Int.random(in: 0..<8, using: &random) }
            pet.owner = owner.map { reference.ownerToLink($0) }
            pet.coOwners = coOwners.map { reference.ownerToLink($0) }
            try transaction.add(pet)
            reference.linked(pet.coOwners + (pet.owner.map { [$0] } ?? []))
            reference.pets[petIdentifier] = .init(name: pet.name, owner: owner, coOwners: coOwners)
        case 40..<55:
            // Move the pet to another owner, or to none.
            let owner = random.chance(75) ? ownerIdentifier : nil
            let linked = owner.map { reference.ownerToLink($0) }
            let updated = try transaction.update(Pet.self, primaryKey: petIdentifier) { $0.owner = linked }
            #expect((updated != nil) == (reference.pets[petIdentifier] != nil), "\(context)")
            if let pet = reference.pets[petIdentifier] {
                reference.pets[petIdentifier] = reference.asRead(pet)
                reference.pets[petIdentifier]?.owner = owner
                reference.linked(linked.map { [$0] } ?? [])
            }
        case 55..<63:
            let coOwners = (0..<Int.random(in: 0...2, using: &random)).map { _ in Int.random(in: 0..<8, using: &random) }
            let linked = coOwners.map { reference.ownerToLink($0) }
            try transaction.update(Pet.self, primaryKey: petIdentifier) { $0.coOwners = linked }
            if let pet = reference.pets[petIdentifier] {
                reference.pets[petIdentifier] = reference.asRead(pet)
                reference.pets[petIdentifier]?.coOwners = coOwners
                reference.linked(linked)
            }
        case 63..<70:
            let name = "renamed \(random.next() % 100)"
            try transaction.update(Owner.self, primaryKey: ownerIdentifier) { $0.name = name }
            if reference.owners[ownerIdentifier] != nil { reference.owners[ownerIdentifier] = name }
        case 70..<82:
            try transaction.delete(Pet.self, primaryKey: petIdentifier)
            reference.pets[petIdentifier] = nil
        case 82..<92:
            try transaction.delete(Owner.self, primaryKey: ownerIdentifier)
            reference.owners[ownerIdentifier] = nil
        case 92..<94:
            try transaction.deleteAll(Pet.self)
            reference.pets = [:]
        default:
            // Reads inside the transaction see its writes, inverses included.
            let owner = try transaction.object(Owner.self, primaryKey: ownerIdentifier)
            #expect(owner?.pets.map(\.identifier) == reference.owners[ownerIdentifier].map { _ in reference.pets(ownedBy: ownerIdentifier) }, "\(context)")
            #expect(owner?.sharedPets.map(\.identifier) == reference.owners[ownerIdentifier].map { _ in reference.pets(coOwnedBy: ownerIdentifier) }, "\(context)")
        }
    }

    /// Whether every owner and pet read from the store agrees with the reference, inverses
    /// included; records an issue for each difference.
    private static func matches(_ store: Store, _ expected: Reference, _ context: String) throws -> Bool {
        var failures: [String] = []
        let owners = try store.objects(Owner.self).all()
        if owners.map(\.identifier) != expected.owners.keys.sorted() { failures.append("owners \(owners.map(\.identifier))") }
        for owner in owners {
            let pets = owner.pets.map(\.identifier)
            let shared = owner.sharedPets.map(\.identifier)
            if owner.name != expected.owners[owner.identifier] { failures.append("owner \(owner.identifier) name") }
            if pets != expected.pets(ownedBy: owner.identifier) { failures.append("owner \(owner.identifier) pets \(pets)") }
            if shared != expected.pets(coOwnedBy: owner.identifier) { failures.append("owner \(owner.identifier) shared \(shared)") }
            if !owner.pets.allSatisfy({ $0.owner?.identifier == owner.identifier }) { failures.append("owner \(owner.identifier) pets' owner") }
            if !owner.sharedPets.allSatisfy({ $0.coOwners.contains { $0.identifier == owner.identifier } }) { failures.append("owner \(owner.identifier) pets' co-owners") }
            if !owner.pets.allSatisfy({ $0.name == expected.pets[$0.identifier]?.name }) { failures.append("owner \(owner.identifier) pet names") }
        }
        let pets = try store.objects(Pet.self).all()
        if pets.map(\.identifier) != expected.pets.keys.sorted() { failures.append("pets \(pets.map(\.identifier))") }
        for pet in pets {
            guard let state = expected.pets[pet.identifier].map(expected.asRead) else { continue }
            if pet.owner?.identifier != state.owner { failures.append("pet \(pet.identifier) owner") }
            if let owner = pet.owner, !owner.pets.contains(where: { $0.identifier == pet.identifier }) { failures.append("pet \(pet.identifier) not in its owner's pets") }
        }
        if let identifier = expected.owners.keys.min() {
            let one = try store.object(Owner.self, primaryKey: identifier)
            if one?.pets.map(\.identifier) != expected.pets(ownedBy: identifier) { failures.append("object(_:primaryKey:) pets") }
        }
        #expect(failures.isEmpty, "\(context): \(failures.joined(separator: "; "))")
        return failures.isEmpty
    }
}
