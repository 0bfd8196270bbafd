import Foundation
import Testing
import TestSupport
@testable import MirrorStore

@Suite("Inverse relationships")
struct LinkingObjectsTests {
    private func pet(_ identifier: Int, owner: Owner?, coOwners: [Owner] = []) -> Pet {
        let pet = Pet()
        pet.identifier = identifier
        pet.name = "pet \(identifier)"
        pet.owner = owner
        pet.coOwners = coOwners
        return pet
    }

    @Test("reads fill both kinds of inverse in primary-key order")
    func filledOnRead() throws {
        let store = try Store.inMemory(models: [Owner.self])
        let ada = Owner.named("Ada", 1)
        let bob = Owner.named("Bob", 2)
        try store.write { transaction in
            try transaction.add(contentsOf: [
                pet(30, owner: ada, coOwners: [bob, bob]), pet(10, owner: ada), pet(20, owner: bob, coOwners: [ada]),
            ])
        }
        let read = try #require(try store.object(Owner.self, primaryKey: 1))
        #expect(read.pets.map(\.identifier) == [10, 30])
        #expect(read.pets.map(\.name) == ["pet 10", "pet 30"])
        // The owner inside its own pets is a copy, whose inverse, met again, is empty.
        #expect(read.pets.allSatisfy { $0.owner?.identifier == 1 && $0.owner !== read && $0.owner?.pets.isEmpty == true })
        #expect(read.sharedPets.map(\.identifier) == [20])
        #expect(read.pets.property == "owner")

        let owners = try store.objects(Owner.self).all()
        #expect(owners.map { $0.pets.map(\.identifier) } == [[10, 30], [20]])
        // Bob co-owns pet 30 twice: it is listed once.
        #expect(owners.map { $0.sharedPets.map(\.identifier) } == [[20], [30]])
        // Within the objects of one inverse, links share identity as usual.
        #expect(owners[1].sharedPets[0].coOwners.count == 2 && owners[1].sharedPets[0].coOwners[0] === owners[1].sharedPets[0].coOwners[1])

        let pets = try store.objects(Pet.self)
        let first = pets[0]
        #expect(first.owner?.pets.map(\.identifier) == [10, 30])
        #expect(try pets.all().allSatisfy { pet in pet.owner?.pets.contains { $0.identifier == pet.identifier } != false })
    }

    @Test("class graphs read with their inverses form no cycle, so they are freed")
    func freed() throws {
        let store = try Store.inMemory(models: [Owner.self])
        try store.write { try $0.add(contentsOf: [pet(1, owner: Owner.named("Ada", 1), coOwners: [Owner.named("Ada", 1)])]) }
        weak var weakOwner: Owner?
        weak var weakPet: Pet?
        weak var weakRoot: Pet?
        do {
            let owner = try #require(try store.object(Owner.self, primaryKey: 1))
            weakOwner = owner
            weakPet = owner.pets.first
            #expect(weakPet?.owner?.sharedPets.isEmpty == true)
            let pets = try store.objects(Pet.self).all()
            weakRoot = pets.first
            #expect(pets.first?.owner?.pets.count == 1)
        }
        #expect(weakOwner == nil && weakPet == nil && weakRoot == nil)
    }

    @Test("queries answer predicates on inverses from the models read")
    func predicates() throws {
        let store = try Store.inMemory(models: [Owner.self])
        try store.write { transaction in
            try transaction.add(contentsOf: [Owner.named("Ada", 1), Owner.named("Bob", 2), Owner.named("Cy", 3)])
            try transaction.add(contentsOf: [pet(1, owner: Owner.named("Bob", 2)), pet(2, owner: Owner.named("Bob", 2))])
        }
        let owners = try store.objects(Owner.self)
        #expect(try owners.filter(#Predicate { !$0.pets.isEmpty }).map(\.identifier) == [2])
        #expect(try owners.filter(#Predicate { $0.pets.count == 0 }).map(\.identifier) == [1, 3])
    }

    @Test("reads beside writes see inverses of one snapshot")
    func concurrentReads() async throws {
        let store = try Store.inMemory(models: [Owner.self])
        try await store.write { transaction in
            try transaction.add(contentsOf: (0..<20).map { pet($0, owner: Owner.named("o\($0 % 4)", $0 % 4)) })
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for step in 0..<200 {
                    let owner = (step / 20 + step) % 4
                    try store.write { transaction in
                        try transaction.update(Pet.self, primaryKey: step % 20) { $0.owner = Owner.named("o\(owner)", owner) }
                    }
                }
            }
            for _ in 0..<3 {
                group.addTask {
                    for _ in 0..<50 {
                        let owners = try store.objects(Owner.self).all()
                        let listed = owners.flatMap { owner in owner.pets.map { (pet: $0.identifier, lister: owner.identifier, owner: $0.owner?.identifier) } }
                        #expect(listed.count == 20 && Set(listed.map(\.pet)).count == 20)
                        #expect(listed.allSatisfy { $0.lister == $0.owner })
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    @Test("reads inside a transaction see its own writes")
    func pendingWrites() throws {
        let store = try Store.inMemory(models: [Owner.self])
        let ada = Owner.named("Ada", 1)
        try store.write { try $0.add(contentsOf: [pet(1, owner: ada), pet(2, owner: ada)]) }
        try store.write { transaction in
            try transaction.update(Pet.self, primaryKey: 1) { $0.owner = nil }
            try transaction.add(pet(3, owner: ada))
            try transaction.delete(Pet.self, primaryKey: 2)
            #expect(try transaction.object(Owner.self, primaryKey: 1)?.pets.map(\.identifier) == [3])
            try transaction.deleteAll(Pet.self)
            #expect(try transaction.object(Owner.self, primaryKey: 1)?.pets.isEmpty == true)
            try transaction.add(pet(4, owner: ada))
            #expect(try transaction.object(Owner.self, primaryKey: 1)?.pets.map(\.identifier) == [4])
        }
        #expect(try store.object(Owner.self, primaryKey: 1)?.pets.map(\.identifier) == [4])
    }

    @Test("struct cycles end: a copy met again inside its own inverse has it empty")
    func structCycle() throws {
        let store = try Store.inMemory(models: [Walker.self])
        var walker = Walker()
        walker.identifier = 7
        try store.write { transaction in
            for identifier in [2, 1] {
                var walk = Walk()
                walk.identifier = identifier
                walk.walker = walker
                try transaction.add(walk)
            }
        }
        let read = try #require(try store.object(Walker.self, primaryKey: 7))
        #expect(read.walks.map(\.identifier) == [1, 2])
        #expect(read.walks.allSatisfy { $0.walker?.identifier == 7 && $0.walker?.walks.isEmpty == true })

        let walks = try store.objects(Walk.self).all()
        #expect(walks.map { $0.walker?.walks.map(\.identifier) } == [[1, 2], [1, 2]])
    }

    @Test("an inverse of a link to the model's own type")
    func selfReference() throws {
        let store = try Store.inMemory(models: [TreeNode.self])
        let root = TreeNode()
        root.identifier = 1
        try store.write { transaction in
            for identifier in 2...4 {
                let child = TreeNode()
                child.identifier = identifier
                child.parent = root
                try transaction.add(child)
            }
        }
        let read = try #require(try store.object(TreeNode.self, primaryKey: 1))
        #expect(read.children.map(\.identifier) == [2, 3, 4])
        #expect(read.children.allSatisfy { $0.parent?.identifier == 1 && $0.children.isEmpty })
    }

    @Test("never written: not in the schema or the record, and the stored schema does not change")
    func neverWritten() throws {
        #expect(try Owner.objectSchema().properties.map(\.name) == ["identifier", "name"])
        #expect(try Owner.objectSchema() == PlainOwner.objectSchema())
        let owner = Owner.named("Ada", 1)
        let record = try owner.managedObject()
        defer { record.releaseGraph() }
        #expect(record["pets"] == nil && record["sharedPets"] == nil)
        let copy = try Owner.modelInstance(managedObject: record)
        #expect(copy.pets.isEmpty && copy.pets.property == "owner")

        try withTemporaryDirectory { directory in
            let path = directory + "/inverse.store"
            var store = try Store(path: path, models: [Owner.self])
            try store.write { try $0.add(pet(1, owner: owner)) }
            try store.close()
            // Opened without the inverse: no schema difference, and the data is there.
            store = try Store(path: path, models: [PlainOwner.self])
            #expect(try store.object(PlainOwner.self, primaryKey: 1)?.name == "Ada")
            try store.close()
            store = try Store(path: path, models: [Owner.self])
            #expect(try store.object(Owner.self, primaryKey: 1)?.pets.map(\.identifier) == [1])
            try store.close()
        }
    }

    @Test("opening a store with the declaring model registers the source")
    func sourceRegistered() throws {
        let store = try Store.inMemory(models: [Owner.self])
        try store.write { try $0.add(pet(1, owner: nil)) }
        #expect(try store.objects(Pet.self).count == 1)
    }

    private func refusal(_ body: () throws -> Void) -> MappingError? {
        do {
            try body()
            return nil
        } catch {
            return error as? MappingError
        }
    }

    @Test("inverses that cannot apply are refused with typed errors naming type and property", arguments: [
        (Refused.keyless, MappingError.Kind.inverseWithoutPrimaryKey(sourceType: "KeylessSource", sourceProperty: "target"),
         "KeylessTarget", "sources",
         "KeylessTarget.sources is the inverse of KeylessSource.target, but KeylessTarget has no primary key for links to point at; give KeylessTarget a primary key."),
        (Refused.missing, .inverseOfMissingProperty(sourceType: "Pet", sourceProperty: "ghost"), "Ghost", "haunted",
         "Ghost.haunted is the inverse of Pet.ghost, but Pet stores no property named ghost; name a link property of Pet that points at Ghost."),
        (Refused.notLink, .inverseOfNonLink(sourceType: "Pet", sourceProperty: "name", kind: "String"), "NameFan", "pets",
         "NameFan.pets is the inverse of Pet.name, but that property is a String, not a link to NameFan (NameFan?, [NameFan] or Set<NameFan>); name a link property of Pet that points at NameFan."),
        (Refused.otherType, .inverseOfOtherLink(sourceType: "Pet", sourceProperty: "owner", linkedType: "Owner"), "Vet", "patients",
         "Vet.patients is the inverse of Pet.owner, but that property links to Owner, not to Vet; name a link property of Pet that points at Vet."),
    ])
    func refused(model: Refused, kind: MappingError.Kind, type: String, property: String, message: String) throws {
        for attempt in [{ _ = try model.type.objectSchema() }, { _ = try Store.inMemory(models: [model.type]) }] {
            let error = try #require(refusal(attempt))
            #expect(error.kind == kind)
            #expect(error.modelType == type && error.path == [property])
            #expect(error.description == message)
        }
    }

    @Test("a dictionary of links is refused, and so is a model linking to a refused one")
    func dictionaryRefused() throws {
        let error = try #require(refusal { _ = try Sponsorship.objectSchema() })
        guard case .inverseOfNonLink(let source, let property, _) = error.kind else {
            Issue.record("unexpected \(error)")
            return
        }
        #expect(source == "Sponsorship" && property == "byRole" && error.propertyPath == "Sponsor.sponsored")
        #expect(refusal { _ = try Store.inMemory(models: [Sponsor.self]) }?.kind == error.kind)
    }

    /// A resolver whose reads fail as a file read can.
    final class FailingResolver: InverseResolver {
        struct ReadFailed: Error, Equatable {}

        func linkingModels<Source: Persistable>(
            _ type: Source.Type, plan: TypePlan, property: String, target: ManagedObject, context: inout DecodingContext
        ) throws -> [Source] {
            throw ReadFailed()
        }
    }

    @Test("a failed read of an inverse ends the mapping and keeps the original error for the reader")
    func failedRead() throws {
        let record = try Owner.named("Ada", 1).managedObject()
        defer { record.releaseGraph() }
        let resolver = FailingResolver()
        var context = DecodingContext()
        context.inverseResolver = resolver
        let plan = try PlanCache.shared.plan(for: Owner.self)
        do {
            _ = try ModelMapping.model(Owner.self, from: record, plan: plan, context: &context)
            Issue.record("the mapping did not fail")
        } catch {
            #expect(error.modelType == "Owner" && error.path == ["pets"])
            #expect(context.inverses.takeFailure() as? FailingResolver.ReadFailed == FailingResolver.ReadFailed())
            #expect(context.inverses.takeFailure() == nil)
        }
    }

    enum Refused: CustomStringConvertible, CaseIterable {
        case keyless, missing, notLink, otherType

        var type: any Persistable.Type {
            switch self {
            case .keyless: KeylessTarget.self
            case .missing: Ghost.self
            case .notLink: NameFan.self
            case .otherType: Vet.self
            }
        }

        var description: String { "\(type)" }
    }
}
