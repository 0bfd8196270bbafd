import Foundation
import MirrorStore

extension ModelStoreBehavior {
    func checkDeleteRules() async throws {
        let check = BehaviorCheck.deleteRules
        let ann = BehaviorMember(id: 1, name: "Ann"), bob = BehaviorMember(id: 2, name: "Bob"), cid = BehaviorMember(id: 3, name: "Cid")
        let marvel = BehaviorPublisher(id: 1, name: "Marvel"), dc = BehaviorPublisher(id: 2, name: "DC")
        try await withStore(check, models: Self.teamModels) { store in
            try await store.write { transaction in
                try await transaction.add(BehaviorTeam(id: 1, name: "Red", members: [ann, bob], reserves: [cid], sponsors: [marvel]))
                try await transaction.add(BehaviorTeam(id: 2, name: "Blue", members: [bob], sponsors: [dc]))
            }
            func isDenied(_ error: any Error) -> Bool {
                guard let error = error as? StoreError,
                      case .deleteDenied(let typeName, _, let linkedFrom, _, let property) = error.kind else { return false }
                return typeName == "BehaviorPublisher" && linkedFrom == "BehaviorTeam" && property == "sponsors"
            }
            try await expectError("deleting a sponsor a team links to", in: check, matches: isDenied) {
                try await store.write { transaction in _ = try await transaction.delete(BehaviorPublisher.self, primaryKey: 1) }
            }
            try await expectError("deleting every sponsor", in: check, matches: isDenied) {
                try await store.write { transaction in try await transaction.deleteAll(BehaviorPublisher.self) }
            }
            try expect(try await store.fetchCount(ModelQuery(BehaviorPublisher.self)), 2, "sponsors after refused deletes", in: check)

            // Deleting a team deletes its members (`.cascade`), not its reserves (no rule).
            let deleted = try await store.write { transaction in try await transaction.delete(BehaviorTeam.self, primaryKey: 1) }
            try expect(deleted, true, "deleting a team", in: check)
            try expect(try await store.fetch(ModelQuery(BehaviorMember.self).sorted(using: SortDescriptor(\.id))).map(\.id), [3],
                       "members after their team was deleted", in: check)
            try expect(try await store.object(BehaviorTeam.self, primaryKey: 2)?.members, [], "another team's member the cascade deleted",
                       in: check)

            // Nothing links to the first sponsor any more; the second goes with its team in one block.
            let sponsorsDeleted = try await store.write { transaction in
                let first = try await transaction.delete(BehaviorPublisher.self, primaryKey: 1)
                _ = try await transaction.delete(BehaviorTeam.self, primaryKey: 2)
                let second = try await transaction.delete(BehaviorPublisher.self, primaryKey: 2)
                return [first, second]
            }
            try expect(sponsorsDeleted, [true, true], "deleting sponsors no team links to", in: check)
            try expect(try await store.fetchCount(ModelQuery(BehaviorPublisher.self)), 0, "sponsors after they were deleted", in: check)
        }
    }
}
