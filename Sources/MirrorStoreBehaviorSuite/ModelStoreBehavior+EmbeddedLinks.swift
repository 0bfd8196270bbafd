import Foundation
import MirrorStore

extension ModelStoreBehavior {
    func checkEmbeddedLinks() async throws {
        let check = BehaviorCheck.embeddedLinks
        let oslo = BehaviorCity(id: 1, name: "Oslo"), rome = BehaviorCity(id: 2, name: "Rome"), lima = BehaviorCity(id: 3, name: "Lima")
        let ann = BehaviorCustomer(
            id: 1, name: "Ann", home: BehaviorAddress(street: "Main", city: oslo, nearby: [rome, lima]),
            former: [BehaviorAddress(street: "Old", city: rome)], offices: ["hq": rome, "lab": lima], branches: ["north": oslo, "south": nil],
            routes: [[oslo, rome], [lima]])
        let bob = BehaviorCustomer(id: 2, name: "Bob", home: BehaviorAddress(street: "Side", city: rome))
        try await withStore(check, models: [BehaviorCustomer.self]) { store in
            try await store.write { transaction in
                try await transaction.add(ann)
                try await transaction.add(bob)
            }
            try expect(try await store.object(BehaviorCustomer.self, primaryKey: 1), ann, "a customer read back with its links", in: check)
            try expect(try await store.fetch(ModelQuery(BehaviorCity.self).sorted(using: SortDescriptor(\.id))), [oslo, rome, lima],
                       "the cities saved with the customers that link to them", in: check)

            let byID = ModelQuery(BehaviorCustomer.self).sorted(using: SortDescriptor(\.id))
            func ids(_ query: ModelQuery<BehaviorCustomer>) async throws -> [Int] { try await store.fetch(query).map(\.id) }
            try expect(try await ids(byID.filter(#Predicate { $0.home.city?.name == "Rome" })), [2], "customers living in Rome", in: check)
            try expect(try await ids(byID.filter(#Predicate { $0.home.nearby.contains { $0.name == "Lima" } })), [1],
                       "customers living near Lima", in: check)

            // Linked objects change where they are stored; the customers read them from there.
            let updated = try await store.write { transaction in
                try await transaction.add(BehaviorCity(id: 2, name: "Roma"))
                return try await transaction.update(BehaviorCustomer.self, primaryKey: 2) { $0.home.city = BehaviorCity(id: 4, name: "Kyiv") }
            }
            try expect(updated?.home.city, BehaviorCity(id: 4, name: "Kyiv"), "a customer's city after an update", in: check)
            try expect(try await store.object(BehaviorCity.self, primaryKey: 4)?.name, "Kyiv", "a city saved by an update", in: check)
            try expect(try await store.object(BehaviorCustomer.self, primaryKey: 1)?.offices["hq"]?.name, "Roma",
                       "an office in a city renamed since", in: check)

            // A deleted city reads as `nil` where a link may be `nil`, and is left out of arrays.
            _ = try await store.write { try await $0.delete(BehaviorCity.self, primaryKey: 3) }
            let after = try await store.object(BehaviorCustomer.self, primaryKey: 1)
            let roma = BehaviorCity(id: 2, name: "Roma")
            try expect(after?.home.nearby, [roma], "cities nearby after one was deleted", in: check)
            try expect(after?.routes, [[oslo, roma], []], "routes after a city was deleted", in: check)
            try expect(after?.offices, ["hq": roma], "offices after a city was deleted", in: check)
            try expect(after?.branches, ["north": oslo, "south": nil], "branches, whose nil stays", in: check)
            _ = try await store.write { try await $0.delete(BehaviorCity.self, primaryKey: 1) }
            try expect(try await store.object(BehaviorCustomer.self, primaryKey: 1)?.home.city, nil, "a home city deleted", in: check)
            try expect(try await store.object(BehaviorCustomer.self, primaryKey: 1)?.branches, ["north": nil, "south": nil],
                       "a branch's city deleted", in: check)
            try expect(try await ids(byID.filter(#Predicate { $0.home.city == nil })), [1], "customers whose city is gone", in: check)
            try expect(try await store.fetchCount(ModelQuery(BehaviorCustomer.self).filter(#Predicate { $0.home.nearby.isEmpty })), 1,
                       "customers with no city nearby left", in: check)
        }

        // Delete rules and inverses name a model's own links, never one inside an embedded model.
        try await expectError("a delete rule on an embedded model", in: check, matches: { error in
            guard let error = error as? StoreError, case .invalidDeleteRule("BehaviorRuledCustomer", "home", _) = error.kind else { return false }
            return true
        }) {
            try await withStore(check, models: [BehaviorRuledCustomer.self]) { _ in }
        }
        try await expectError("an inverse of an embedded model", in: check, matches: { $0 is MappingError }) {
            try await withStore(check, models: [BehaviorListedCity.self, BehaviorCustomer.self]) { _ in }
        }
    }
}
