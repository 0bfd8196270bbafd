import Foundation
import MirrorStore

extension ModelStoreBehavior {
    func checkReads() async throws {
        let check = BehaviorCheck.reads
        try await withStore(check) { store in
            try expect(try await store.fetch(ModelQuery(BehaviorHero.self)), [], "an empty store's heroes", in: check)
            try expect(try await store.object(BehaviorHero.self, primaryKey: 1), nil, "a key an empty store does not hold", in: check)
            let dc = BehaviorPublisher(id: 2, name: "DC")
            let heroes = [
                BehaviorHero(id: 3, name: "Batman", age: 45, isActive: true, nickname: "Bats", tags: ["gotham"], publisher: dc),
                BehaviorHero(id: 1, name: "Superman", age: 35, tags: [], publisher: dc),
                BehaviorHero(id: 2, name: "Nobody", age: 0),
            ]
            try await store.write { transaction in
                for hero in heroes { try await transaction.add(hero) }
            }
            for hero in heroes {
                try expect(try await store.object(BehaviorHero.self, primaryKey: hero.id), hero, "hero \(hero.id) by key", in: check)
            }
            try expect(try await store.object(BehaviorPublisher.self, primaryKey: 2), dc, "a publisher by key", in: check)
            try expect(Set(try await store.fetch(ModelQuery(BehaviorHero.self)).map(\.id)), [1, 2, 3], "every hero's key", in: check)
            try expect(try await store.fetchCount(ModelQuery(BehaviorHero.self)), 3, "the count of heroes", in: check)
            try expect(try await store.fetch(ModelQuery(BehaviorHero.self).sorted(using: SortDescriptor(\.id))), heroes.sorted { $0.id < $1.id },
                       "every hero, sorted by key", in: check)
        }
    }
}
