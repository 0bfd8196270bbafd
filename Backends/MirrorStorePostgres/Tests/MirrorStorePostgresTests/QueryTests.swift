import Foundation
import MirrorStore
import MirrorStorePostgres
import Testing

extension ServerTests {
@Suite("Queries")
struct QueryTests {
    static func items(_ random: inout SeededRandom) -> [Item] {
        (1...150).map { id in
            Item(
                id: id,
                n: Int.random(in: -5...5, using: &random),
                x: random.pick([-1.5, 0, -0.0, 2.25, .infinity, .nan, 1e-300]),
                s: random.string(),
                opt: random.chance(40) ? nil : Int.random(in: -3...3, using: &random),
                optS: random.chance(40) ? nil : random.string(),
                flag: random.chance(50),
                tags: (0..<Int.random(in: 0...3, using: &random)).map { _ in random.pick(["a", "b", "Élodie", "E\u{301}lodie", ""]) },
                mood: random.pick([.happy, .sad, .calm]),
                big: random.pick([0, 1, UInt64.max, UInt64(Int64.max) + 1]),
                d: random.pick([Decimal(0), Decimal(string: "1.50") ?? 0, Decimal(string: "1.5") ?? 0, Decimal(-7), Decimal(string: "0.000000000000000000001") ?? 0]),
                nums: (0..<Int.random(in: 0...4, using: &random)).map { _ in Int.random(in: -3...3, using: &random) })
        }
    }

    /// Predicates over every shape the SQL translation handles, and some it leaves to Swift,
    /// with constants drawn from `random`.
    static func predicates(_ random: inout SeededRandom) -> [(String, Predicate<Item>)] {
        let n = Int.random(in: -5...5, using: &random)
        let m = Int.random(in: -5...5, using: &random)
        let low = min(n, m), high = max(n, m)
        let x: Double = random.pick([-1.5, 0, 2.25, 1e-300, -.infinity])
        let s = random.string()
        let t = random.string()
        let tag = random.pick(["a", "b", "Élodie", "E\u{301}lodie", ""])
        let mood = random.pick([Mood.happy, .sad, .calm])
        let big = random.pick([0, UInt64.max, UInt64(Int64.max)])
        let decimal = random.pick([Decimal(0), Decimal(string: "1.5") ?? 0, Decimal(-7), Decimal(1)])
        return [
            ("n == c", #Predicate { $0.n == n }),
            ("n != c", #Predicate { $0.n != n }),
            ("n < c", #Predicate { $0.n < n }),
            ("c <= n", #Predicate { n <= $0.n }),
            ("n > c", #Predicate { $0.n > n }),
            ("n >= c && n <= d", #Predicate { $0.n >= low && $0.n <= high }),
            ("range", #Predicate { (low...high).contains($0.n) }),
            ("half-open range", #Predicate { (low..<high).contains($0.n) }),
            ("x > c", #Predicate { $0.x > x }),
            ("x >= c", #Predicate { $0.x >= x }),
            ("x < c", #Predicate { $0.x < x }),
            ("x == c", #Predicate { $0.x == x }),
            ("!(x > c)", #Predicate { !($0.x > x) }),
            ("s == c", #Predicate { $0.s == s }),
            ("s != c", #Predicate { $0.s != s }),
            ("s < c", #Predicate { $0.s < s }),
            ("s >= c", #Predicate { $0.s >= s }),
            ("s prefix", #Predicate { $0.s.starts(with: t) }),
            ("s contains", #Predicate { $0.s.contains(t) }),
            ("!s contains", #Predicate { !$0.s.contains(t) }),
            ("s isEmpty", #Predicate { $0.s.isEmpty }),
            ("opt == nil", #Predicate { $0.opt == nil }),
            ("opt != nil", #Predicate { $0.opt != nil }),
            ("opt == c", #Predicate { $0.opt == n }),
            ("!(opt == c)", #Predicate { !($0.opt == n) }),
            ("opt ?? 0 > c", #Predicate { ($0.opt ?? 0) > n }),
            ("optS == c", #Predicate { $0.optS == s }),
            ("optS == nil || flag", #Predicate { $0.optS == nil || $0.flag }),
            ("flag", #Predicate { $0.flag }),
            ("!flag && n > c", #Predicate { !$0.flag && $0.n > n }),
            ("tags contains", #Predicate { $0.tags.contains(tag) }),
            ("tags isEmpty", #Predicate { $0.tags.isEmpty }),
            ("nums contains", #Predicate { $0.nums.contains(n) }),
            ("!nums contains || nums isEmpty", #Predicate { !$0.nums.contains(m) || $0.nums.isEmpty }),
            ("tags count", #Predicate { $0.tags.count >= 2 }),
            ("mood", #Predicate { $0.mood == mood }),
            ("mood raw", #Predicate { $0.mood.rawValue == "calm" }),
            ("big >= c", #Predicate { $0.big >= big }),
            ("big == c", #Predicate { $0.big == big }),
            ("d == c", #Predicate { $0.d == decimal }),
            ("d < c", #Predicate { $0.d < decimal }),
            ("!(d >= c)", #Predicate { !($0.d >= decimal) }),
            ("tags count == c", #Predicate { $0.tags.count == low + 5 }),
            ("opt ?? c == d", #Predicate { ($0.opt ?? n) == m }),
            ("optS ?? c < d", #Predicate { ($0.optS ?? s) < t }),
            ("or of and", #Predicate { ($0.n > n && $0.flag) || ($0.s == s && !$0.flag) }),
            ("not of or", #Predicate { !($0.n == n || $0.opt == nil) }),
            ("closure", #Predicate { $0.tags.contains { $0.count > 1 } }),
            ("arithmetic", #Predicate { $0.n + 1 > n }),
            ("and with a Swift part", #Predicate { $0.n > n && $0.s.count > 2 }),
        ]
    }

    @Test func filterAnswersAsSwiftAndTheFileStoreDo() async throws {
        let store = try await emptyStore(models: [Item.self], clearing: [Item.self])
        let memory = try Store.inMemory(models: [Item.self])
        var random = SeededRandom(seed: 3030)
        let items = Self.items(&random)
        try await store.write { try await $0.add(contentsOf: items) }
        try await memory.write { try $0.add(contentsOf: items) }
        for round in 0..<4 {
            for (name, predicate) in Self.predicates(&random) {
                let expected = try items.filter { try predicate.evaluate($0) }.map(\.id)
                let results = try store.objects(Item.self).filter(predicate)
                let found = try await results.all().map(\.id)
                #expect(found == expected, "round \(round), \(name): \(results.plan)")
                #expect(try await results.count() == expected.count, "round \(round), \(name) count")
                let inMemory = try memory.objects(Item.self).filter(predicate).all().map(\.id)
                #expect(found == inMemory, "round \(round), \(name) against Store.inMemory")
            }
        }
        await store.close()
    }

    @Test func conditionsThroughLinksAnswerAsSwiftAndTheFileStoreDo() async throws {
        let store = try await emptyStore(models: [Sample.self], clearing: [Sample.self, Publisher.self])
        let memory = try Store.inMemory(models: [Sample.self])
        var random = SeededRandom(seed: 1455)
        let publishers = [Publisher(identifier: 1, name: "Marvel"), Publisher(identifier: 2, name: "DC"), Publisher(identifier: 3, name: "E\u{301}lodie")]
        let samples = (1...60).map { id in
            var sample = Sample()
            sample.id = id
            sample.flag = random.chance(50)
            sample.publisher = random.chance(25) ? nil : random.pick(publishers)
            return sample
        }
        try await store.write { try await $0.add(contentsOf: samples) }
        try await memory.write { try $0.add(contentsOf: samples) }
        for _ in 0..<3 {
            let name = random.pick(["Marvel", "DC", "\u{C9}lodie", "Image"])
            let low = Int.random(in: 0...3, using: &random)
            let predicates: [(String, Predicate<Sample>)] = [
                ("publisher?.name == c", #Predicate { $0.publisher?.name == name }),
                ("publisher?.name != c", #Predicate { $0.publisher?.name != name }),
                ("!(publisher?.name == c)", #Predicate { !($0.publisher?.name == name) }),
                ("publisher == nil", #Predicate { $0.publisher == nil }),
                ("publisher != nil && flag", #Predicate { $0.publisher != nil && $0.flag }),
                ("publisher?.identifier == nil", #Predicate { $0.publisher?.identifier == nil }),
                ("publisher?.name == c || id > c", #Predicate { $0.publisher?.name == name || $0.id > low * 15 }),
            ]
            for (label, predicate) in predicates {
                let expected = try samples.filter { try predicate.evaluate($0) }.map(\.id)
                let results = try store.objects(Sample.self).filter(predicate)
                #expect(try await results.all().map(\.id) == expected, "\(label): \(results.plan)")
                #expect(try memory.objects(Sample.self).filter(predicate).all().map(\.id) == expected, "\(label) in memory")
                #expect(results.plan.swiftPart == nil, "\(label) runs in SQL")
            }
        }
        await store.close()
    }

    @Test func planSaysWhichPartRanWhere() async throws {
        let store = try await emptyStore(models: [Item.self], clearing: [Item.self])
        let exact = try store.objects(Item.self).filter(#Predicate { $0.n > 3 && $0.opt == nil })
        #expect(exact.plan.sqlPart == "(\"n\" > $1 AND \"opt\" IS NULL)")
        #expect(exact.plan.swiftPart == nil)
        let text = "an"
        let mixed = try store.objects(Item.self).filter(#Predicate { $0.n > 3 && $0.s.contains(text) })
        #expect(mixed.plan.sqlPart == "(\"n\" > $1 AND strpos(normalize(\"s\", NFC), normalize($2, NFC)) > 0)")
        #expect(mixed.plan.swiftPart == "(n > 3 && s.contains(\"an\"))")
        let counted = try store.objects(Item.self).filter(#Predicate { ($0.opt ?? 0) > 3 || $0.tags.count >= 2 })
        #expect(counted.plan.sqlPart == "(COALESCE(\"opt\", $1) > $2 OR cardinality(\"tags\") >= $3)")
        #expect(counted.plan.swiftPart == nil)
        let swiftOnly = try store.objects(Item.self).filter(#Predicate { $0.tags.contains { $0.isEmpty } })
        #expect(swiftOnly.plan.sqlPart == nil)
        #expect(swiftOnly.plan.swiftPart == "<evaluated on the model>")
        await store.close()
    }

    @Test func sortsAndLimitsAsSwiftDoes() async throws {
        let store = try await emptyStore(models: [Item.self], clearing: [Item.self])
        var random = SeededRandom(seed: 77)
        let items = Self.items(&random)
        try await store.write { try await $0.add(contentsOf: items) }
        // Swift's sort is stable: equal values keep primary-key order.
        let byN = items.sorted { $0.n > $1.n }.map(\.id)
        #expect(try await store.objects(Item.self).sorted(byProperty: "n", ascending: false).all().map(\.id) == byN)
        let byS = items.sorted { $0.s < $1.s }.map(\.id)
        #expect(try await store.objects(Item.self).sorted(byProperty: "s").all().map(\.id) == byS)
        let firstTen = try store.objects(Item.self).filter(#Predicate { $0.flag }).sorted(byProperty: "n").prefix(10)
        #expect(firstTen.plan.limit == "10 in SQL")
        #expect(try await firstTen.all().map(\.id) == Array(items.filter(\.flag).sorted { $0.n < $1.n }.map(\.id).prefix(10)))
        let descriptors = try store.objects(Item.self).sorted(using: SortDescriptor(\Item.n)).prefix(5)
        #expect(descriptors.plan.limit == "5 in SQL")
        #expect(try await descriptors.all().map(\.id) == Array(items.sorted(using: SortDescriptor(\Item.n)).map(\.id).prefix(5)))
        let two = [SortDescriptor(\Item.n, order: .reverse), SortDescriptor(\Item.big)]
        let twoKeys = try store.objects(Item.self).sorted(using: two)
        #expect(twoKeys.plan.swiftSort == nil)
        let twoFound = try await twoKeys.all().map(\.id)
        #expect(twoFound == items.sorted(using: two).map(\.id))
        // UInt64 past Int64.max, read as text: ORDER BY must name the column, not the text.
        let byBig = try await store.objects(Item.self).sorted(byProperty: "big", ascending: false).all().map(\.id)
        #expect(byBig == items.sorted { $0.big > $1.big }.map(\.id))
        let decimals = try store.objects(Item.self).sorted(using: SortDescriptor(\Item.d, order: .reverse))
        #expect(try await decimals.all().map(\.id) == items.sorted(using: SortDescriptor(\Item.d, order: .reverse)).map(\.id))
        // Strings sort with Foundation's comparator, in Swift; so does everything after them.
        let byName = try store.objects(Item.self).sorted(using: SortDescriptor(\Item.s)).prefix(7)
        #expect(byName.plan.limit == "7 in Swift")
        #expect(try await byName.all().map(\.id) == Array(items.sorted(using: SortDescriptor(\Item.s)).map(\.id).prefix(7)))
        let thenN = try store.objects(Item.self).sorted(using: SortDescriptor(\Item.s)).sorted(using: SortDescriptor(\Item.n))
        #expect(thenN.plan.swiftSort != nil)
        #expect(try await thenN.all().map(\.id) == items.sorted(using: SortDescriptor(\Item.s)).sorted(using: SortDescriptor(\Item.n)).map(\.id))
        await #expect(throws: QueryError(.unsortableProperty(typeName: "Item", property: "tags", kind: "[String]"))) {
            _ = try store.objects(Item.self).sorted(byProperty: "tags")
        }
        await store.close()
    }
}
}

@Suite("The query tree")
struct QueryTreeTests {
    @Test func aPredicateBecomesItsPublicTree() throws {
        let models = try BackendModels(models: [Sample.self])
        #expect(models.types.map(\.schema.typeName) == ["Address", "Geo", "Publisher", "Sample"])
        let low = 3
        let tree = try models.queryTree(for: #Predicate<Sample> { $0.id >= low && $0.publisher?.name == "Marvel" && !$0.flag })
        #expect(tree.conjuncts == [
            .compare(.property(["id"]), .greaterThanOrEqual, .constant(.int(3))),
            .equal(.property(["publisher", "name"]), .constant(.string("Marvel"))),
            .not(.property(["flag"])),
        ])
        #expect(tree.isComplete)
        let partial = try models.queryTree(for: #Predicate<Sample> { $0.numbers.contains { $0 > 2 } })
        #expect(partial.condition == .other)
        #expect(!partial.isComplete)
    }
}
