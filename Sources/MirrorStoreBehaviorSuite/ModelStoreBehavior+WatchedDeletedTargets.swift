import Foundation
import MirrorStore

extension ModelStoreBehavior {
    /// Deleting the target of a watched link changes what the app reads there (`nil`, or an
    /// array without it), so every store reports a modification; deleting an object no result
    /// links to reports none.
    func checkWatchedDeletedTargets() async throws {
        let check = BehaviorCheck.watchedObservation
        let ann = BehaviorMember(id: 1, name: "Ann"), bob = BehaviorMember(id: 2, name: "Bob")
        try await withStore(check, models: [BehaviorHero.self, BehaviorPublisher.self, BehaviorTeam.self, BehaviorMember.self]) { store in
            try await store.write { transaction in
                try await transaction.add(BehaviorHero(id: 1, name: "Hulk", age: 49, publisher: BehaviorPublisher(id: 1, name: "Marvel", country: "US")))
                try await transaction.add(BehaviorPublisher(id: 3, name: "Image", country: "US"))
                try await transaction.add(BehaviorTeam(id: 1, name: "Red", members: [ann, bob]))
                try await transaction.add(BehaviorMember(id: 3, name: "Cid"))
            }
            let heroes = try await secondElement(
                of: try store.changes(ModelQuery(BehaviorHero.self), keyPaths: [\.publisher]), in: check,
                waitingFor: "the deleted target to reach the observer", after: {
                    try await store.write { transaction in _ = try await transaction.delete(BehaviorPublisher.self, primaryKey: 3) }
                    try await store.write { transaction in _ = try await transaction.delete(BehaviorPublisher.self, primaryKey: 1) }
                })
            try expect(heroes.modifications, [0], "the modifications after a watched to-one link's target was deleted", in: check)
            try expect(heroes.models.map(\.publisher?.id), [nil], "the link after its target was deleted", in: check)

            let teams = try await secondElement(
                of: try store.changes(ModelQuery(BehaviorTeam.self), keyPaths: [\.members]), in: check,
                waitingFor: "the deleted target to reach the observer", after: {
                    try await store.write { transaction in _ = try await transaction.delete(BehaviorMember.self, primaryKey: 3) }
                    try await store.write { transaction in _ = try await transaction.delete(BehaviorMember.self, primaryKey: 2) }
                })
            try expect(teams.modifications, [0], "the modifications after a target in a watched array of links was deleted", in: check)
            try expect(teams.models.map { $0.members.map(\.id) }, [[1]], "the array after one of its targets was deleted", in: check)
        }
    }
}
