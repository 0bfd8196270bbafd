import Foundation
import MirrorStore

extension ModelStoreBehavior {
    func checkUniqueArrays() async throws {
        let check = BehaviorCheck.uniqueArrays
        func violation(of property: String, _ value: String) -> StoreError.Kind {
            .uniqueViolation(typeName: "BehaviorBadge", property: property, value: value)
        }
        let oslo = BehaviorCity(id: 1, name: "Oslo"), rome = BehaviorCity(id: 2, name: "Rome")
        try await withStore(check, models: [BehaviorBadge.self]) { store in
            // Repeats within one object, and `nil` elements in several, are no violation.
            try await store.write { transaction in
                try await transaction.add(BehaviorBadge(id: 1, codes: [1, 2, 2], names: ["caf\u{E9}"], slots: [nil, 1], cities: [oslo, oslo]))
                try await transaction.add(BehaviorBadge(id: 2, codes: [3], names: ["tea"], slots: [nil, 2], cities: [rome]))
            }
            for (what, kind, badge) in [
                ("a code another badge holds", violation(of: "codes", "2"), BehaviorBadge(id: 3, codes: [4, 2])),
                ("a name another badge holds, canonically equivalent", violation(of: "names", "\"caf\u{E9}\""),
                 BehaviorBadge(id: 3, names: ["cafe\u{301}"])),
                ("a slot another badge holds", violation(of: "slots", "2"), BehaviorBadge(id: 3, slots: [nil, 2])),
                ("a city another badge links to", violation(of: "cities", "2"), BehaviorBadge(id: 3, cities: [rome])),
            ] {
                try await expectStoreError(what, in: check, kind) {
                    try await store.write { try await $0.add(badge) }
                }
            }
            try await expectStoreError("two new badges with one code in a block", in: check, violation(of: "codes", "7")) {
                try await store.write { transaction in
                    try await transaction.add(BehaviorBadge(id: 4, codes: [7]))
                    try await transaction.add(BehaviorBadge(id: 5, codes: [8, 7]))
                }
            }
            try expect(try await store.fetch(ModelQuery(BehaviorBadge.self).sorted(using: SortDescriptor(\.id))).map(\.id), [1, 2],
                       "the badges after the refused blocks", in: check)

            // A badge may keep its own elements when it is replaced, and an element freed by an
            // update or a delete may be taken.
            try await store.write { transaction in
                try await transaction.add(BehaviorBadge(id: 1, codes: [2, 1], names: ["caf\u{E9}"], cities: [oslo]))
                try await transaction.update(BehaviorBadge.self, primaryKey: 2) { $0.codes = [] }
                try await transaction.add(BehaviorBadge(id: 6, codes: [3]))
                _ = try await transaction.delete(BehaviorBadge.self, primaryKey: 1)
                try await transaction.add(BehaviorBadge(id: 7, codes: [1, 2], names: ["cafe\u{301}"], cities: [oslo]))
            }
            try expect(try await store.fetch(ModelQuery(BehaviorBadge.self).sorted(using: SortDescriptor(\.id))).map(\.codes), [[], [3], [1, 2]],
                       "the codes after elements moved", in: check)

            // What a block leaves counts: an element taken before it is freed in the same block.
            try await store.write { transaction in
                try await transaction.add(BehaviorBadge(id: 8, codes: [3]))
                try await transaction.update(BehaviorBadge.self, primaryKey: 6) { $0.codes = [] }
            }
            try expect(try await store.object(BehaviorBadge.self, primaryKey: 8)?.codes, [3], "a code taken before it was freed", in: check)
        }
    }
}
