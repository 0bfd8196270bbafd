import Foundation
import MirrorStore

extension ModelStoreBehavior {
    func checkQueries() async throws {
        let check = BehaviorCheck.queries
        let marvel = BehaviorPublisher(id: 1, name: "Marvel")
        let dc = BehaviorPublisher(id: 2, name: "DC")
        let heroes = [
            BehaviorHero(id: 1, name: "Hulk", age: 49, isActive: true, tags: ["green"], publisher: marvel),
            BehaviorHero(id: 2, name: "Storm", age: 31, nickname: "Ororo", publisher: marvel),
            BehaviorHero(id: 3, name: "Batman", age: 45, isActive: true, nickname: "Bats", tags: ["gotham", "rich"], publisher: dc),
            BehaviorHero(id: 4, name: "Superman", age: 35, publisher: dc),
            BehaviorHero(id: 5, name: "Sandman", age: 60),
        ]
        try await withStore(check) { store in
            try await store.write { transaction in
                for hero in heroes { try await transaction.add(hero) }
            }
            let byID = ModelQuery(BehaviorHero.self).sorted(using: SortDescriptor(\.id))
            func ids(_ query: ModelQuery<BehaviorHero>) async throws -> [Int] { try await store.fetch(query).map(\.id) }

            try expect(try await ids(byID.filter(#Predicate { $0.name == "Storm" })), [2], "name == Storm", in: check)
            try expect(try await ids(byID.filter(#Predicate { $0.age >= 45 })), [1, 3, 5], "age >= 45", in: check)
            try expect(try await ids(byID.filter(#Predicate { $0.age > 31 && $0.age < 49 })), [3, 4], "31 < age < 49", in: check)
            try expect(try await ids(byID.filter(#Predicate { $0.name.starts(with: "S") })), [2, 4, 5], "names starting with S", in: check)
            try expect(try await ids(byID.filter(#Predicate { $0.nickname == nil })), [1, 4, 5], "no nickname", in: check)
            try expect(try await ids(byID.filter(#Predicate { $0.publisher?.name == "DC" })), [3, 4], "publisher's name == DC", in: check)
            try expect(try await ids(byID.filter(#Predicate { $0.publisher == nil || !$0.isActive })), [2, 4, 5], "no publisher or not active",
                       in: check)
            try expect(try await ids(byID.filter(#Predicate { $0.tags.contains("gotham") })), [3], "tags containing gotham", in: check)
            try expect(try await ids(byID.filter(#Predicate { $0.isActive }).filter(#Predicate { $0.age < 48 })), [3], "two filters",
                       in: check)
            try expect(try await ids(ModelQuery(BehaviorHero.self).sorted(using: SortDescriptor(\.age, order: .reverse))), [5, 1, 3, 4, 2],
                       "sorted by age, oldest first", in: check)
            try expect(try await ids(ModelQuery(BehaviorHero.self).sorted(byProperty: "age")), [2, 4, 3, 1, 5], "sorted by the property age",
                       in: check)
            try expect(try await ids(ModelQuery(BehaviorHero.self).sorted(byProperty: "id", ascending: false).prefix(2)), [5, 4],
                       "the two highest keys", in: check)
            try expect(try await ids(byID.filter(#Predicate { $0.age > 40 }).prefix(2)), [1, 3], "the first two older than 40", in: check)
            try expect(try await store.fetchCount(ModelQuery(BehaviorHero.self).filter(#Predicate { $0.age > 40 })), 3, "count older than 40",
                       in: check)
            try expect(try await store.fetchCount(ModelQuery(BehaviorHero.self).prefix(2)), 2, "count of a prefix", in: check)
            try expect(try await ids(byID.filter(#Predicate { $0.name == "Nobody" })), [], "a filter no hero meets", in: check)
        }
    }
}
