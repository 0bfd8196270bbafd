import Foundation
import Testing
@testable import MirrorStore
import MirrorStoreEngine
import TestSupport

// Models whose links carry every delete rule, with a cycle: an owner's pets and favourite go
// with it, a pet's toys and vet with the pet, a toy's keeper with the toy; a clinic denies
// deleting its vets. The same models open at version 1 and 2: a migration that only deletes.
enum RuledModels {
    struct Owner: Persistable {
        var id = 0
        var doomed = false
        var pets: [Pet] = []
        var favourite: Pet?
        var vet: Vet?
        init() {}
        static var primaryKey: String? { "id" }
        static var persistedTypeName: String { "RuledOwner" }
        static var deleteRules: [String: DeleteRule] { ["pets": .cascade, "favourite": .cascade] }
    }

    struct Pet: Persistable {
        var id = 0
        var toys: [Toy] = []
        var vet: Vet?
        init() {}
        static var primaryKey: String? { "id" }
        static var persistedTypeName: String { "RuledPet" }
        static var deleteRules: [String: DeleteRule] { ["toys": .cascade, "vet": .cascade] }
    }

    struct Toy: Persistable {
        var id = 0
        var keeper: Owner?
        init() {}
        static var primaryKey: String? { "id" }
        static var persistedTypeName: String { "RuledToy" }
        static var deleteRules: [String: DeleteRule] { ["keeper": .cascade] }
    }

    struct Vet: Persistable {
        var id = 0
        init() {}
        static var primaryKey: String? { "id" }
        static var persistedTypeName: String { "RuledVet" }
    }

    struct Clinic: Persistable {
        var id = 0
        var vets: [Vet] = []
        init() {}
        static var primaryKey: String? { "id" }
        static var persistedTypeName: String { "RuledClinic" }
        static var deleteRules: [String: DeleteRule] { ["vets": .deny] }
    }

    static var models: [any Persistable.Type] { [Owner.self, Pet.self, Toy.self, Vet.self, Clinic.self] }
}

/// Every object's key and the keys its links read, per type: what two stores are compared by.
private struct RuledState: Equatable, CustomStringConvertible {
    var objects: [String: [Int: [Int?]]] = [:]

    init(_ store: Store) throws {
        for owner in try store.objects(RuledModels.Owner.self) {
            objects["owner", default: [:]][owner.id] = owner.pets.map(\.id) + [owner.favourite?.id, owner.vet?.id]
        }
        for pet in try store.objects(RuledModels.Pet.self) { objects["pet", default: [:]][pet.id] = pet.toys.map(\.id) + [pet.vet?.id] }
        for toy in try store.objects(RuledModels.Toy.self) { objects["toy", default: [:]][toy.id] = [toy.keeper?.id] }
        for vet in try store.objects(RuledModels.Vet.self) { objects["vet", default: [:]][vet.id] = [] }
        for clinic in try store.objects(RuledModels.Clinic.self) { objects["clinic", default: [:]][clinic.id] = clinic.vets.map(\.id) }
    }

    var description: String { "\(objects.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.sorted { $0.key < $1.key })" })" }
}

@Suite("A migration's deletes follow the delete rules")
struct MigrationDeleteRulesTests {
    /// A version-1 store of random owners, pets, toys, vets and clinics linking at random.
    static func populate(_ path: String, seed: UInt64, encrypted: Bool) throws {
        var random = SeededRandom(seed: seed)
        let store = try Self.store(at: path, Self.configuration(version: 1, encrypted: encrypted))
        defer { try? store.close() }
        let vets = (1...6).map { id in
            var vet = RuledModels.Vet()
            vet.id = id
            return vet
        }
        try store.write { transaction in
            for vet in vets { try transaction.add(vet) }
            for id in 1...3 {
                var clinic = RuledModels.Clinic()
                clinic.id = id
                // Some vets no clinic holds, whose deletes nothing denies.
                clinic.vets = vets.filter { _ in Int.random(in: 0..<5, using: &random) == 0 }
                try transaction.add(clinic)
            }
            var toys: [RuledModels.Toy] = []
            for id in 1...40 {
                var toy = RuledModels.Toy()
                toy.id = id
                toys.append(toy)
                try transaction.add(toy)
            }
            var pets: [RuledModels.Pet] = []
            for id in 1...30 {
                var pet = RuledModels.Pet()
                pet.id = id
                pet.toys = (0..<Int.random(in: 0...2, using: &random)).map { _ in toys[Int.random(in: 0..<toys.count, using: &random)] }
                pet.vet = Int.random(in: 0..<4, using: &random) == 0 ? vets[Int.random(in: 0..<vets.count, using: &random)] : nil
                pets.append(pet)
                try transaction.add(pet)
            }
            var owners: [RuledModels.Owner] = []
            for id in 1...20 {
                var owner = RuledModels.Owner()
                owner.id = id
                owner.doomed = Int.random(in: 0..<4, using: &random) == 0
                owner.pets = (0..<Int.random(in: 0...2, using: &random)).map { _ in pets[Int.random(in: 0..<pets.count, using: &random)] }
                owner.favourite = Bool.random(using: &random) ? pets[Int.random(in: 0..<pets.count, using: &random)] : nil
                owner.vet = Bool.random(using: &random) ? vets[Int.random(in: 0..<vets.count, using: &random)] : nil
                owners.append(owner)
                try transaction.add(owner)
            }
            // Some toys name their keeper, closing cycles back to the owners.
            for index in toys.indices where Int.random(in: 0..<5, using: &random) == 0 {
                var toy = toys[index]
                toy.keeper = owners[Int.random(in: 0..<owners.count, using: &random)]
                try transaction.add(toy)
            }
        }
    }

    /// A raw key: a passphrase would be stretched at every open.
    static let key = [UInt8](repeating: 0x5A, count: 32)

    static func configuration(
        version: Int, encrypted: Bool, keysInMemory: Int? = nil, migration: Store.Configuration.MigrationBlock? = nil
    ) -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.schemaVersion = version
        configuration.rewriteKeysInMemory = keysInMemory
        configuration.migration = migration
        if encrypted { configuration.encryption = .key(Data(key)) }
        return configuration
    }

    /// The store at `path`, opened with the rule models.
    static func store(at path: String, _ configuration: Store.Configuration) throws -> Store {
        try Store(path: path, models: RuledModels.models, configuration: configuration)
    }

    /// Writes a version-1 store at `path` holding `objects`; its bytes, which a refused migration
    /// must leave as they are.
    static func versionOne(at path: String, holding objects: [any Persistable]) throws -> Data {
        let store = try Self.store(at: path, Self.configuration(version: 1, encrypted: false))
        try store.write { transaction in
            for object in objects { try transaction.add(object) }
        }
        try store.close()
        return try bytes(at: path)
    }

    static func bytes(at path: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// Deletes every object of `typeName` in `migration`, one by one, so that the delete rules
    /// apply (`deleteAllObjects(ofType:)` skips them).
    static func deleteEach(_ typeName: String, in migration: Migration) throws {
        try migration.enumerateObjects(ofType: typeName) { _, new in try migration.delete(new) }
    }

    /// The denial's names without the keys: which of several denials each route names first
    /// depends on the order it looks in.
    static func denial(_ error: any Error) -> [String]? {
        guard let error = error as? StoreError, case .deleteDenied(let typeName, _, let linkedFrom, _, let property) = error.kind else { return nil }
        return [typeName, linkedFrom, property]
    }

    @Test("Dropping objects in a migration leaves what one transaction deleting them leaves, or the same refusal",
          arguments: [(0x0DE1, false, nil), (0x0DE2, false, 3), (0x0DE3, true, nil), (0x0DE4, false, 2), (0x0DE5, true, 4), (0x0DE6, false, nil)] as [(UInt64, Bool, Int?)])
    func matchesTransactionDeletes(seed: UInt64, encrypted: Bool, keysInMemory: Int?) throws {
        try withTemporaryDirectory { directory in
            var seen = (migrated: 0, refused: 0)
            for round in 0..<6 {
                let pristine = directory + "/pristine-\(round).store"
                try Self.populate(pristine, seed: SeededRandom.seed(default: seed) &+ UInt64(round), encrypted: encrypted)
                // The general route: one transaction's delete of the doomed owners.
                let referencePath = directory + "/reference-\(round).store"
                try FileManager.default.copyItem(atPath: pristine, toPath: referencePath)
                let reference: Result<RuledState, any Error>
                do {
                    let store = try Self.store(at: referencePath, Self.configuration(version: 1, encrypted: encrypted))
                    defer { try? store.close() }
                    reference = Result {
                        try store.write { transaction in _ = try transaction.delete(RuledModels.Owner.self, where: #Predicate { $0.doomed }) }
                        return try RuledState(store)
                    }
                }
                // The migration's: the same owners dropped while the pass goes.
                let path = directory + "/migrated-\(round).store"
                try FileManager.default.copyItem(atPath: pristine, toPath: path)
                let before = try Self.bytes(at: path)
                let configuration = Self.configuration(version: 2, encrypted: encrypted, keysInMemory: keysInMemory) { migration, _ in
                    try migration.enumerateObjects(ofType: "RuledOwner") { old, new in
                        if try old.value(forProperty: "doomed", as: Bool.self) { try migration.delete(new) }
                    }
                }
                let migrated = Result { () throws -> RuledState in
                    let store = try Self.store(at: path, configuration)
                    defer { try? store.close() }
                    return try RuledState(store)
                }
                switch (reference, migrated) {
                case (.success(let expected), .success(let found)):
                    #expect(found == expected, "seed \(seed) round \(round)")
                    let report = try verifyStoreFile(at: path, encryption: encrypted ? .key(Self.key) : nil)
                    #expect(report.isIntact, "\(report)")
                    // Opened again, the migrated state is what was read right after the migration.
                    let store = try Self.store(at: path, configuration)
                    #expect(try RuledState(store) == expected)
                    try store.close()
                    seen.migrated += 1
                case (.failure(let expected), .failure(let found)):
                    #expect(Self.denial(found) != nil && Self.denial(found) == Self.denial(expected), "\(found) against \(expected)")
                    #expect(try Self.bytes(at: path) == before, "a refused migration leaves the file")
                    seen.refused += 1
                default:
                    Issue.record("seed \(seed) round \(round): the transaction gave \(reference), the migration \(migrated)")
                }
            }
            // Each seed here sees both outcomes over its rounds (more refused than migrated).
            #expect(seen.migrated + seen.refused == 6)
        }
    }

    @Test("A denied migration names the object that denies it and leaves the file as it was")
    func denialNamesTheSource() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/denied.store"
            var vet = RuledModels.Vet()
            vet.id = 7
            var clinic = RuledModels.Clinic()
            clinic.id = 3
            clinic.vets = [vet]
            let before = try Self.versionOne(at: path, holding: [clinic])
            let configuration = Self.configuration(version: 2, encrypted: false) { migration, _ in
                try Self.deleteEach("RuledVet", in: migration)
            }
            #expect {
                try Self.store(at: path, configuration).close()
            } throws: { error in
                (error as? StoreError)?.kind == .deleteDenied(typeName: "RuledVet", key: "7", linkedFrom: "RuledClinic", sourceKey: "3", property: "vets")
            }
            #expect(try Self.bytes(at: path) == before)
            // Dropping the clinic as well lets the vet go: the rules look at what stays.
            let both = Self.configuration(version: 2, encrypted: false) { migration, _ in
                try Self.deleteEach("RuledVet", in: migration)
                try Self.deleteEach("RuledClinic", in: migration)
            }
            let store = try Self.store(at: path, both)
            #expect(try store.objects(RuledModels.Vet.self).count == 0)
            #expect(try store.objects(RuledModels.Clinic.self).count == 0)
            try store.close()
        }
    }

    @Test("Objects a migration creates come after its deletes; a created object may not link to a deleted one")
    func createdAfterDeletes() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/created.store"
            var pet = RuledModels.Pet()
            pet.id = 1
            var owner = RuledModels.Owner()
            owner.id = 1
            owner.pets = [pet]
            let before = try Self.versionOne(at: path, holding: [owner])
            // A created owner linking to the pet its deleted owner's cascade took is refused.
            let linking = Self.configuration(version: 2, encrypted: false) { migration, _ in
                try Self.deleteEach("RuledOwner", in: migration)
                let owner = try migration.create(ofType: "RuledOwner")
                try owner.setValue(2, forProperty: "id")
                guard let schema = migration.newSchema(ofType: "RuledPet") else { throw MigrationError(.unknownType(typeName: "RuledPet")) }
                let pet = ManagedObject(objectSchema: schema)
                try pet.setValue(1, forProperty: "id")
                try owner.setValue(.object(pet), forProperty: "favourite")
            }
            #expect {
                try Self.store(at: path, linking).close()
            } throws: { error in
                (error as? MigrationError)?.kind == .missingLinkTarget(typeName: "RuledPet", key: "1", linkedFrom: "RuledOwner")
            }
            #expect(try Self.bytes(at: path) == before)
            // A pet created under the key the cascade freed is stored.
            let recreating = Self.configuration(version: 2, encrypted: false) { migration, _ in
                try Self.deleteEach("RuledOwner", in: migration)
                try migration.create(ofType: "RuledPet").setValue(1, forProperty: "id")
            }
            let store = try Self.store(at: path, recreating)
            defer { try? store.close() }
            #expect(try store.objects(RuledModels.Owner.self).count == 0)
            #expect(try store.objects(RuledModels.Pet.self).map(\.id) == [1])
        }
    }
}
