import Foundation
import MirrorStore

extension ModelStoreBehavior {
    func checkInverses() async throws {
        let check = BehaviorCheck.inverses
        let ann = BehaviorCoach(id: 1, name: "Ann"), bob = BehaviorCoach(id: 2, name: "Bob"), cid = BehaviorCoach(id: 3, name: "Cid")
        try await withStore(check, models: [BehaviorCoach.self]) { store in
            try await store.write { transaction in
                try await transaction.add(BehaviorSquad(id: 2, coaches: [bob, bob]))
                try await transaction.add(BehaviorSquad(id: 1, coaches: [ann, bob], head: ann))
                try await transaction.add(BehaviorSquad(id: 3, head: bob))
                try await transaction.add(cid)
            }
            func inverses(_ id: Int) async throws -> [[Int]]? {
                try await store.object(BehaviorCoach.self, primaryKey: id).map { [$0.squads.map(\.id), $0.headed.map(\.id)] }
            }
            try expect(try await inverses(1), [[1], [1]], "Ann's squads and the squads she heads", in: check)
            try expect(try await inverses(2), [[1, 2], [3]], "Bob's squads, each once, in key order", in: check)
            try expect(try await inverses(3), [[], []], "a coach no squad links to", in: check)
            let coaches = try await store.fetch(ModelQuery(BehaviorCoach.self).sorted(using: SortDescriptor(\.id)))
            try expect(coaches.map { $0.squads.map(\.id) }, [[1], [1, 2], []], "inverses of fetched coaches", in: check)
            let ann1 = try await store.object(BehaviorCoach.self, primaryKey: 1)
            try expect(ann1?.squads.first?.coaches.map(\.id), [1, 2], "the links of an object in an inverse", in: check)
            try expect(ann1?.squads.first?.head?.name, "Ann", "the model itself, met inside its inverse", in: check)
            try expect(ann1?.squads.first?.head?.squads.isEmpty, true, "its inverse there, empty so reading ends", in: check)

            let inBlock = try await store.write { transaction in
                _ = try await transaction.delete(BehaviorSquad.self, primaryKey: 1)
                try await transaction.add(BehaviorSquad(id: 4, coaches: [cid], head: cid))
                return try await transaction.object(BehaviorCoach.self, primaryKey: 3).map { [$0.squads.map(\.id), $0.headed.map(\.id)] }
            }
            try expect(inBlock, [[4], [4]], "an inverse read in the block that wrote it", in: check)
            try expect(try await inverses(1), [[], []], "Ann's inverses after her squad was deleted", in: check)
            try expect(try await inverses(2), [[2], [3]], "Bob's inverses after a delete", in: check)
        }
    }
}
