import Foundation
import MirrorStore

extension ModelStoreBehavior {
    /// The models the link checks open a store with.
    static var teamModels: [any Persistable.Type] { [BehaviorTeam.self, BehaviorMember.self, BehaviorPublisher.self] }

    func checkToManyLinks() async throws {
        let check = BehaviorCheck.toManyLinks
        let ann = BehaviorMember(id: 1, name: "Ann"), bob = BehaviorMember(id: 2, name: "Bob"), cid = BehaviorMember(id: 3, name: "Cid")
        let marvel = BehaviorPublisher(id: 1, name: "Marvel"), dc = BehaviorPublisher(id: 2, name: "DC")
        let red = BehaviorTeam(id: 1, name: "Red", members: [bob, ann], reserves: [cid, nil], sponsors: [marvel, dc])
        let blue = BehaviorTeam(id: 2, name: "Blue", members: [bob], formerMembers: [ann])
        let empty = BehaviorTeam(id: 3, name: "Empty", formerMembers: [])
        try await withStore(check, models: Self.teamModels) { store in
            try await store.write { transaction in
                for team in [red, blue, empty] { try await transaction.add(team) }
            }
            try expect(try await store.object(BehaviorTeam.self, primaryKey: 1), red, "a team read back, its links in order", in: check)
            try expect(try await store.object(BehaviorTeam.self, primaryKey: 2), blue, "a team with an optional array of links", in: check)
            try expect(try await store.object(BehaviorTeam.self, primaryKey: 3), empty, "a team with empty arrays of links", in: check)
            try expect(try await store.object(BehaviorMember.self, primaryKey: 3), cid, "a member saved with its team", in: check)
            try expect(try await store.fetch(ModelQuery(BehaviorPublisher.self).sorted(using: SortDescriptor(\.id))), [marvel, dc],
                       "the sponsors saved from a set", in: check)

            let byID = ModelQuery(BehaviorTeam.self).sorted(using: SortDescriptor(\.id))
            func ids(_ query: ModelQuery<BehaviorTeam>) async throws -> [Int] { try await store.fetch(query).map(\.id) }
            try expect(try await ids(byID.filter(#Predicate { $0.members.isEmpty })), [3], "teams without members", in: check)
            try expect(try await ids(byID.filter(#Predicate { $0.members.count == 2 })), [1], "teams of two", in: check)
            try expect(try await ids(byID.filter(#Predicate { $0.members.contains { $0.name == "Ann" } })), [1], "teams with Ann", in: check)
            try expect(try await ids(byID.filter(#Predicate { $0.formerMembers == nil })), [1], "teams without former members", in: check)
            try expect(try await ids(byID.filter(#Predicate { $0.sponsors.contains { $0.name == "DC" } && $0.name != "Blue" })), [1],
                       "teams DC sponsors", in: check)
            try expect(try await store.fetchCount(ModelQuery(BehaviorTeam.self).filter(#Predicate { $0.reserves.count > 0 })), 1,
                       "the count of teams with reserves", in: check)

            // A deleted target leaves arrays of links (no rule is on the member side): dropped
            // from `[T]`, `nil` in `[T?]`; queries see the same.
            try await store.write { transaction in
                _ = try await transaction.delete(BehaviorMember.self, primaryKey: 2)
                _ = try await transaction.delete(BehaviorMember.self, primaryKey: 3)
            }
            try expect(try await store.object(BehaviorTeam.self, primaryKey: 1)?.members, [ann], "members after one was deleted", in: check)
            try expect(try await store.object(BehaviorTeam.self, primaryKey: 1)?.reserves, [nil, nil], "reserves after one was deleted",
                       in: check)
            try expect(try await ids(byID.filter(#Predicate { $0.members.isEmpty })), [2, 3], "teams without members after deletes",
                       in: check)
            try expect(try await store.fetchCount(ModelQuery(BehaviorTeam.self).filter(#Predicate { $0.members.count == 1 })), 1,
                       "the count of teams of one after deletes", in: check)

            let updated = try await store.write { transaction in
                try await transaction.update(BehaviorTeam.self, primaryKey: 2) { $0.members.append(BehaviorMember(id: 4, name: "Dee")) }
            }
            try expect(updated?.members.map(\.id), [4], "members after an update appended one", in: check)
            try expect(try await store.object(BehaviorMember.self, primaryKey: 4)?.name, "Dee", "a member saved by an update", in: check)
        }
    }
}
