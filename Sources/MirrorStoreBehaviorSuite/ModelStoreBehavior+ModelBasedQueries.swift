import Foundation
import MirrorStore
import TestSupport

extension ModelStoreBehavior {
    /// Random heroes and random queries from a seed (`MIRRORSTORE_SEED` replays another), each
    /// compared with the same filter, sort and limit run by `Array` on the heroes written.
    func checkModelBasedQueries() async throws {
        let check = BehaviorCheck.modelBasedQueries
        let seed = SeededRandom.seed(default: 30)
        var random = SeededRandom(seed: seed)
        let names = ["Ada", "Bo", "Cy", "ada", "Émile", "Zed", "", "Bob", "Al"]
        let publishers = [BehaviorPublisher(id: 1, name: "Marvel"), BehaviorPublisher(id: 2, name: "DC")]
        try await withStore(check) { store in
            for round in 0..<4 {
                let heroes = (0..<30).map { id in
                    BehaviorHero(id: id, name: random.pick(names), age: Int.random(in: -3...80, using: &random),
                                 isActive: random.chance(50), nickname: random.chance(40) ? random.pick(names) : nil,
                                 tags: (0..<Int.random(in: 0...2, using: &random)).map { _ in random.pick(["a", "b", "c"]) },
                                 publisher: random.chance(70) ? random.pick(publishers) : nil)
                }
                try await store.write { transaction in
                    try await transaction.deleteAll(BehaviorHero.self)
                    for hero in heroes { try await transaction.add(hero) }
                }
                for index in 0..<40 {
                    let (query, reference, text) = Self.randomQuery(&random)
                    let expected = reference(heroes)
                    let found = try await store.fetch(query).map(\.id)
                    guard found == expected else {
                        throw BehaviorMismatch(check: check, detail: "seed \(seed), round \(round), query \(index) (\(text)): expected \(expected), got \(found)")
                    }
                    try expect(try await store.fetchCount(query), expected.count, "seed \(seed), round \(round), the count of \(text)", in: check)
                }
            }
        }
    }

    /// A random query on heroes, what `Array` gives for it (the keys in order), and its text.
    static func randomQuery(_ random: inout SeededRandom) -> (ModelQuery<BehaviorHero>, ([BehaviorHero]) -> [Int], String) {
        let age = Int.random(in: -5...85, using: &random)
        let other = Int.random(in: -5...85, using: &random)
        let name = random.pick(["Ada", "Bo", "ada", "Émile", "", "Zed", "Al"])
        let prefix = random.pick(["A", "B", "É", "a", ""])
        let tag = random.pick(["a", "b", "c", "d"])
        let publisher = random.pick(["Marvel", "DC", "Image"])
        let conditions: [(Predicate<BehaviorHero>, (BehaviorHero) -> Bool, String)] = [
            (#Predicate { $0.age >= age }, { $0.age >= age }, "age >= \(age)"),
            (#Predicate { $0.age < age || $0.age > other }, { $0.age < age || $0.age > other }, "age < \(age) || age > \(other)"),
            (#Predicate { $0.name == name }, { $0.name == name }, "name == \"\(name)\""),
            (#Predicate { $0.name != name && $0.isActive }, { $0.name != name && $0.isActive }, "name != \"\(name)\" && isActive"),
            (#Predicate { $0.name.starts(with: prefix) }, { $0.name.starts(with: prefix) }, "name starts with \"\(prefix)\""),
            (#Predicate { $0.nickname == name }, { $0.nickname == name }, "nickname == \"\(name)\""),
            (#Predicate { $0.nickname != nil }, { $0.nickname != nil }, "nickname != nil"),
            (#Predicate { $0.tags.contains(tag) }, { $0.tags.contains(tag) }, "tags contain \"\(tag)\""),
            (#Predicate { $0.tags.isEmpty }, { $0.tags.isEmpty }, "tags are empty"),
            (#Predicate { $0.publisher?.name == publisher }, { $0.publisher?.name == publisher }, "publisher's name == \(publisher)"),
            (#Predicate { !($0.age > age) }, { !($0.age > age) }, "!(age > \(age))"),
            (#Predicate { ($0.nickname ?? "") == name }, { ($0.nickname ?? "") == name }, "(nickname ?? \"\") == \"\(name)\""),
        ]
        var query = ModelQuery(BehaviorHero.self)
        var filters: [(BehaviorHero) -> Bool] = []
        var text: [String] = []
        for _ in 0..<Int.random(in: 0...2, using: &random) {
            let (predicate, reference, spelling) = random.pick(conditions)
            query = query.filter(predicate)
            filters.append(reference)
            text.append(spelling)
        }
        // Sorts that end on the key, so every store has one order to give.
        let sorts: [(ModelQuery<BehaviorHero>, ([BehaviorHero]) -> [BehaviorHero], String)] = [
            (query.sorted(using: SortDescriptor(\.id)), { $0.sorted { $0.id < $1.id } }, "by id"),
            (query.sorted(using: [SortDescriptor(\.age, order: .reverse), SortDescriptor(\.id)]),
             { $0.sorted { ($1.age, $0.id) < ($0.age, $1.id) } }, "by age descending, then id"),
            (query.sorted(byProperty: "id", ascending: false), { $0.sorted { $0.id > $1.id } }, "by the property id, descending"),
        ]
        let (sorted, referenceSort, sortText) = random.pick(sorts)
        query = sorted
        text.append(sortText)
        let limit: Int? = random.chance(40) ? Int.random(in: 0...12, using: &random) : nil
        if let limit {
            query = query.prefix(limit)
            text.append("prefix \(limit)")
        }
        let reference: ([BehaviorHero]) -> [Int] = { heroes in
            let kept = referenceSort(heroes.filter { hero in filters.allSatisfy { $0(hero) } }).map(\.id)
            return limit.map { Array(kept.prefix($0)) } ?? kept
        }
        return (query, reference, text.joined(separator: ", "))
    }
}
