import Foundation
import MirrorStore

/// What an observer of a query saw: the keys of each element, and the insertions of the second.
private struct Observed: Sendable, Equatable {
    var keys: [[Int]] = []
    var insertions: [Int] = []
}

extension ModelStoreBehavior {
    func checkObservation() async throws {
        let check = BehaviorCheck.observation
        try await withStore(check) { store in
            try await store.write { transaction in
                try await transaction.add(BehaviorHero(id: 1, name: "Hulk", age: 49))
                try await transaction.add(BehaviorHero(id: 2, name: "Storm", age: 31))
            }
            let query = ModelQuery(BehaviorHero.self).filter(#Predicate { $0.age >= 40 }).sorted(using: SortDescriptor(\.id))
            let (queryStarted, queryStart) = AsyncStream<Void>.makeStream()
            let (objectStarted, objectStart) = AsyncStream<Void>.makeStream()
            let (objectUpdated, objectUpdate) = AsyncStream<Void>.makeStream()
            let queryObserver = Task {
                defer { queryStart.finish() }
                var observed = Observed()
                for try await change in try store.changes(query) {
                    observed.keys.append(change.models.map(\.id))
                    if observed.keys.count == 1 { queryStart.yield() }
                    if observed.keys.count == 2 {
                        observed.insertions = Array(change.insertions)
                        break
                    }
                }
                return observed
            }
            let objectObserver = Task {
                defer {
                    objectStart.finish()
                    objectUpdate.finish()
                }
                var ages: [Int?] = []
                for try await hero in try store.changes(of: BehaviorHero.self, primaryKey: 2) {
                    ages.append(hero?.age)
                    if ages.count == 1 { objectStart.yield() }
                    if ages.count == 2 { objectUpdate.yield() }
                    if ages.count == 3 { break }
                }
                return ages
            }
            defer {
                queryObserver.cancel()
                objectObserver.cancel()
            }
            // Each observer holds the state before the writes once it has yielded its first element.
            let started = Task { () async throws in
                for await _ in queryStarted { break }
                for await _ in objectStarted { break }
            }
            try await value(of: started, within: 10, waitingFor: "the observers' first elements", in: check)

            try await store.write { transaction in
                try await transaction.update(BehaviorHero.self, primaryKey: 2) { $0.age = 45 }
            }
            let observed = try await value(of: queryObserver, within: 10, waitingFor: "a commit to reach the query's observer", in: check)
            try expect(observed, Observed(keys: [[1], [1, 2]], insertions: [1]), "what the query's observer saw", in: check)
            // The object's observer has seen the update before the delete commits, which would
            // otherwise coalesce with it.
            let updateSeen = Task { () async throws in
                for await _ in objectUpdated { break }
            }
            try await value(of: updateSeen, within: 10, waitingFor: "the update to reach the object's observer", in: check)

            try await store.write { transaction in
                try await transaction.delete(BehaviorHero.self, primaryKey: 2)
            }
            let ages = try await value(of: objectObserver, within: 10, waitingFor: "commits to reach the object's observer", in: check)
            try expect(ages, [31, 45, nil], "the ages the object's observer saw, then its deletion", in: check)
        }
    }
}
