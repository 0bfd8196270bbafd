import Foundation
import Testing
import TestSupport
import MirrorStore

/// A member without indexes.
struct PlainMember: Persistable {
    var identifier = 0
    var email = ""
    var city = ""
    static var primaryKey: String? { "identifier" }
    static var persistedTypeName: String { "Member" }
}

/// The same member in an app version that indexes the city.
struct IndexedMember: Persistable {
    var identifier = 0
    var email = ""
    var city = ""
    static var primaryKey: String? { "identifier" }
    static var indexedProperties: [String] { ["city"] }
    static var persistedTypeName: String { "Member" }
}

/// The same member in an app version where no two members share an email.
struct UniqueMember: Persistable {
    var identifier = 0
    var email: String? = nil
    var city = ""
    static var primaryKey: String? { "identifier" }
    static var uniqueProperties: [String] { ["email"] }
    static var persistedTypeName: String { "Member" }
}

/// The member without indexes, in an app version where the email becomes unique.
struct UniqueEmailMember: Persistable {
    var identifier = 0
    var email = ""
    var city = ""
    static var primaryKey: String? { "identifier" }
    static var uniqueProperties: [String] { ["email"] }
    static var persistedTypeName: String { "Member" }
}

@Suite("Index lifecycle and unique properties")
struct IndexLifecycleTests {
    static let cities = ["Paris", "Lyon", "Nantes"]

    @Test("An index added to an existing store is built on open and used; removing it is no schema change")
    func indexAddedToExistingStore() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/members.store"
            let plain = try Store(path: path, models: [PlainMember.self])
            try plain.write { transaction in
                for identifier in 1...90 {
                    try transaction.add(PlainMember(identifier: identifier, email: "m\(identifier)@x", city: Self.cities[identifier % 3]))
                }
            }
            let scanned = try plain.objects(PlainMember.self).filter(#Predicate { $0.city == "Lyon" })
            #expect(scanned.plan.access == .scan(typeName: "Member"))
            try plain.close()

            let indexed = try Store(path: path, models: [IndexedMember.self])
            let lyon = try indexed.objects(IndexedMember.self).filter(#Predicate { $0.city == "Lyon" })
            #expect(lyon.plan.indexName == "Member.city")
            #expect(lyon.map(\.identifier) == (1...90).filter { $0 % 3 == 1 })
            // Kept in step by later writes, and again after compaction and reopening.
            try indexed.write { try $0.add(IndexedMember(identifier: 1, email: "m1@x", city: "Paris")) }
            try indexed.compact()
            try indexed.close()
            let reopened = try Store(path: path, models: [IndexedMember.self])
            let lyonAgain = try reopened.objects(IndexedMember.self).filter(#Predicate { $0.city == "Lyon" })
            #expect(lyonAgain.plan.indexName == "Member.city")
            #expect(lyonAgain.map(\.identifier) == (2...90).filter { $0 % 3 == 1 })
            try reopened.close()

            let plainAgain = try Store(path: path, models: [PlainMember.self])
            #expect(try plainAgain.objects(PlainMember.self).filter(#Predicate { $0.city == "Lyon" }).count == 29)
            try plainAgain.close()
        }
    }

    @Test("A transaction that repeats a unique value throws, names it, and writes nothing")
    func uniqueViolationWritesNothing() throws {
        let store = try Store.inMemory(models: [UniqueMember.self])
        try store.write { transaction in
            try transaction.add(UniqueMember(identifier: 1, email: "a@x", city: "Paris"))
            try transaction.add(UniqueMember(identifier: 2, email: nil, city: "Lyon"))
            // Any number of objects may lack the value.
            try transaction.add(UniqueMember(identifier: 3, email: nil, city: "Lyon"))
        }
        // Against a stored object.
        let stored = #expect(throws: StoreError.self) {
            try store.write { transaction in
                try transaction.add(UniqueMember(identifier: 4, email: "b@x", city: "Nantes"))
                try transaction.add(UniqueMember(identifier: 5, email: "a@x", city: "Nantes"))
            }
        }
        #expect(stored?.kind == .uniqueViolation(typeName: "Member", property: "email", value: "\"a@x\""))
        #expect(stored?.description.contains("Member") == true)
        #expect(try store.objects(UniqueMember.self).count == 3, "the whole transaction was refused")
        #expect(try store.object(UniqueMember.self, primaryKey: 4) == nil)

        // Within one transaction.
        let within = #expect(throws: StoreError.self) {
            try store.write { transaction in
                try transaction.add(UniqueMember(identifier: 6, email: "c@x", city: "Nantes"))
                try transaction.add(UniqueMember(identifier: 7, email: "c@x", city: "Nantes"))
            }
        }
        #expect(within?.kind == .uniqueViolation(typeName: "Member", property: "email", value: "\"c@x\""))
        #expect(try store.objects(UniqueMember.self).count == 3)

        // Updating an object with its own value, and moving a value from one object to another
        // in one transaction, are allowed.
        try store.write { transaction in
            try transaction.add(UniqueMember(identifier: 1, email: "a@x", city: "Lyon"))
        }
        try store.write { transaction in
            try transaction.add(UniqueMember(identifier: 1, email: "z@x", city: "Lyon"))
            try transaction.add(UniqueMember(identifier: 2, email: "a@x", city: "Lyon"))
        }
        let byEmail = try store.objects(UniqueMember.self).filter(#Predicate { $0.email == "a@x" })
        #expect(byEmail.map(\.identifier) == [2])
        #expect(byEmail.plan.indexName == "Member.email")
    }

    @Test("Making a property unique on a store that repeats it refuses to open, and changes nothing")
    func uniqueAddedToStoreWithDuplicates() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/members.store"
            let plain = try Store(path: path, models: [PlainMember.self])
            try plain.write { transaction in
                try transaction.add(PlainMember(identifier: 1, email: "same@x", city: "Paris"))
                try transaction.add(PlainMember(identifier: 2, email: "same@x", city: "Lyon"))
            }
            try plain.close()
            let before = try Data(contentsOf: URL(fileURLWithPath: path))

            let refused = #expect(throws: StoreError.self) { try Store(path: path, models: [UniqueEmailMember.self]) }
            #expect(refused?.kind == .uniqueViolation(typeName: "Member", property: "email", value: "\"same@x\""))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)

            let again = try Store(path: path, models: [PlainMember.self])
            #expect(try again.objects(PlainMember.self).count == 2)
            try again.close()
        }
    }
}
