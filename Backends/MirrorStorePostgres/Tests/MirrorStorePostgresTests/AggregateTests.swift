import Foundation
import MirrorStore
import MirrorStorePostgres
import Testing

extension ServerTests {
@Suite("Aggregates")
struct AggregateTests {
    /// How an answer reads, to compare two stores': strings by their scalars (canonically
    /// equivalent spellings differ), doubles by their description (`-0.0`, `nan`), errors by theirs.
    private static func outcome<T>(_ body: () async throws -> T) async -> String {
        do {
            let value = try await body()
            if let strings = value as? [String] { return "\(strings.map { Array($0.unicodeScalars) })" }
            if let string = value as? String? { return "\(string.map { Array($0.unicodeScalars) } as Any)" }
            return "\(value)"
        } catch {
            return "error: \(error)"
        }
    }

    /// Every aggregate of `results` against the same of `oracle`, the file store's results.
    private static func compare(_ results: PostgresResults<Item>, _ oracle: Results<Item>, _ what: String) async {
        func check<T>(_ name: String, _ found: () async throws -> T, _ expected: () throws -> T) async {
            let answer = await outcome(found), wanted = await outcome(expected)
            #expect(answer == wanted, "\(what): \(name)")
        }
        await check("values n", { try await results.values(\.n) }, { try oracle.values(\.n) })
        await check("distinct n", { try await results.distinct(\.n) }, { try oracle.distinct(\.n) })
        await check("min n", { try await results.min(\.n) }, { try oracle.min(\.n) })
        await check("max n", { try await results.max(\.n) }, { try oracle.max(\.n) })
        await check("sum n", { try await results.sum(\.n) }, { try oracle.sum(\.n) })
        await check("average n", { try await results.average(\.n) }, { try oracle.average(\.n) })
        await check("values x", { try await results.values(\.x) }, { try oracle.values(\.x) })
        await check("min x", { try await results.min(\.x) }, { try oracle.min(\.x) })
        await check("max x", { try await results.max(\.x) }, { try oracle.max(\.x) })
        await check("sum x", { try await results.sum(\.x) }, { try oracle.sum(\.x) })
        await check("average x", { try await results.average(\.x) }, { try oracle.average(\.x) })
        await check("values s", { try await results.values(\.s) }, { try oracle.values(\.s) })
        await check("distinct s", { try await results.distinct(\.s) }, { try oracle.distinct(\.s) })
        await check("min s", { try await results.min(\.s) }, { try oracle.min(\.s) })
        await check("max s", { try await results.max(\.s) }, { try oracle.max(\.s) })
        await check("values opt", { try await results.values(\.opt) }, { try oracle.values(\.opt) })
        await check("min opt", { try await results.min(\.opt) }, { try oracle.min(\.opt) })
        await check("max opt", { try await results.max(\.opt) }, { try oracle.max(\.opt) })
        await check("sum opt", { try await results.sum(\.opt) }, { try oracle.sum(\.opt) })
        await check("average opt", { try await results.average(\.opt) }, { try oracle.average(\.opt) })
        await check("min optS", { try await results.min(\.optS) }, { try oracle.min(\.optS) })
        await check("max optS", { try await results.max(\.optS) }, { try oracle.max(\.optS) })
        await check("values big", { try await results.values(\.big) }, { try oracle.values(\.big) })
        await check("min big", { try await results.min(\.big) }, { try oracle.min(\.big) })
        await check("max big", { try await results.max(\.big) }, { try oracle.max(\.big) })
        await check("sum big", { try await results.sum(\.big) }, { try oracle.sum(\.big) })
        await check("average big", { try await results.average(\.big) }, { try oracle.average(\.big) })
        await check("min d", { try await results.min(\.d) }, { try oracle.min(\.d) })
        await check("max d", { try await results.max(\.d) }, { try oracle.max(\.d) })
        await check("sum d", { try await results.sum(\.d) }, { try oracle.sum(\.d) })
    }

    /// Random items and the query test's predicates, exact in SQL or not, sorted and limited:
    /// every aggregate answers as the file store's `Results` (in memory) does, errors included.
    @Test func aggregatesAnswerAsTheFileStoreDoes() async throws {
        let store = try await emptyStore(models: [Item.self], clearing: [Item.self])
        let memory = try Store.inMemory(models: [Item.self])
        var random = SeededRandom(seed: 3031)
        let items = QueryTests.items(&random)
        try await store.write { try await $0.add(contentsOf: items) }
        try await memory.write { try $0.add(contentsOf: items) }
        await Self.compare(try store.objects(Item.self), try memory.objects(Item.self), "every item")
        for (name, predicate) in QueryTests.predicates(&random) {
            await Self.compare(try store.objects(Item.self).filter(predicate), try memory.objects(Item.self).filter(predicate), name)
            await Self.compare(try store.objects(Item.self).filter(predicate).sorted(byProperty: "s", ascending: false),
                               try memory.objects(Item.self).filter(predicate).sorted(byProperty: "s", ascending: false), "\(name), sorted by s")
            await Self.compare(try store.objects(Item.self).filter(predicate).sorted(using: SortDescriptor(\Item.optS)),
                               try memory.objects(Item.self).filter(predicate).sorted(using: SortDescriptor(\Item.optS)), "\(name), sorted in Swift")
        }
        await store.close()
    }

    /// An integer sum whose positive values alone overflow goes back to Swift's order: it throws
    /// where a partial sum overflows in that order, and answers where none does.
    @Test func integerSumsOverflowAsInTheResultsOrder() async throws {
        let store = try await emptyStore(models: [Item.self], clearing: [Item.self])
        try await store.write { transaction in
            try await transaction.add(Item(id: 1, n: -5))
            try await transaction.add(Item(id: 2, n: Int.max))
            try await transaction.add(Item(id: 3, n: 1))
        }
        let all = try store.objects(Item.self)
        #expect(try await all.sum(\.n) == Int.max - 4)
        #expect(try await all.average(\.n) == Double(Int.max - 4) / 3)
        await #expect(throws: QueryError(.aggregateOverflow(typeName: "Item", property: "n", type: "Int"))) {
            _ = try await all.sorted(byProperty: "n", ascending: false).sum(\.n)
        }
        try await store.write { try await $0.delete(Item.self, primaryKey: 1) }
        await #expect(throws: QueryError(.aggregateOverflow(typeName: "Item", property: "n", type: "Int"))) {
            _ = try await all.sum(\.n)
        }
        await store.close()
    }

    @Test func aggregatePlansSayWhereTheyRan() async throws {
        let store = try await emptyStore(models: [Item.self], clearing: [Item.self])
        let exact = try store.objects(Item.self).filter(#Predicate { $0.n > 3 })
        let sum = try exact.plan(of: .sum, \.n)
        #expect(sum.sql.hasPrefix("SELECT coalesce(sum(\"Item\".\"n\"), 0)::text"))
        #expect(sum.sql.hasSuffix("WHERE \"n\" > $1"))
        #expect(sum.swiftPart?.hasPrefix("nothing, unless") == true)
        let least = try exact.plan(of: .min, \.n)
        #expect(least.sql == "SELECT min(\"Item\".\"n\"), min(\"Item\".\"n\") FILTER (WHERE \"Item\".\"n\" < -9223372036854775808 OR \"Item\".\"n\" > 9223372036854775807) FROM \"Item\" WHERE \"n\" > $1")
        #expect(least.swiftPart == nil)
        #expect(try exact.plan(of: .max, \.s).sql.contains("ORDER BY normalize(\"Item\".\"s\", NFC) COLLATE \"C\" DESC, \"Item\".\"id\" LIMIT 1"))
        #expect(try exact.plan(of: .min, \.x).sql.contains("\"Item\".\"x\" <> 'NaN'"))
        #expect(try exact.plan(of: .sum, \.x).swiftPart == "sum of the values read, in the results' order")
        #expect(try exact.prefix(5).plan(of: .min, \.n).swiftPart == "min of the values read, in the results' order")
        let text = "an"
        let mixed = try store.objects(Item.self).filter(#Predicate { $0.n > 3 && $0.s.contains(text) })
        #expect(try mixed.plan(of: .sum, \.n).swiftPart?.hasSuffix("then sum of n on the models read") == true)
        #expect(throws: QueryError.self) { try exact.plan(of: .sum, \.doubled) }
        await store.close()
    }
}
}

/// Some of `Item`'s properties.
private struct ItemCard: Persistable, Equatable {
    var n = 0
    var s = ""
    var opt: Int?
}

/// `Item.n` as another kind: not a projection of `Item`.
private struct MistypedCard: Persistable, Equatable {
    var n = ""
}

/// Some of `Watched`'s properties, its link among them.
private struct WatchedCard: Persistable, Equatable {
    var label = ""
    var owner: WatchOwner?
}

extension ServerTests.AggregateTests {
    /// A stored value its property's type cannot hold (damage): every aggregate of it, in SQL or
    /// on the models, is a corrupted row naming the property, never a value.
    @Test func aDamagedValueIsAnErrorOnEveryRoute() async throws {
        let store = try await emptyStore(models: [Sample.self], clearing: [Sample.self, Publisher.self])
        var first = Sample(), second = Sample()
        first.id = 1
        second.id = 2
        second.int8 = 5
        try await store.write { try await $0.add(contentsOf: [first, second]) }
        try await ServerTests.RowReadingTests.damage(store, column: "int8", value: "300")
        try await ServerTests.RowReadingTests.damage(store, column: "uint8", value: "-1")
        let all = try store.objects(Sample.self)
        let inSwift = try all.filter(#Predicate { $0.int8 + 1 > -100 })
        for (route, results) in [("in SQL", all), ("in Swift", inSwift), ("limited", all.prefix(5))] {
            let attempts: [(String, () async throws -> Void)] = [
                ("min int8", { _ = try await results.min(\.int8) }), ("max int8", { _ = try await results.max(\.int8) }),
                ("sum int8", { _ = try await results.sum(\.int8) }), ("average int8", { _ = try await results.average(\.int8) }),
                ("values int8", { _ = try await results.values(\.int8) }), ("distinct int8", { _ = try await results.distinct(\.int8) }),
                ("sum uint8", { _ = try await results.sum(\.uint8) }), ("max uint8", { _ = try await results.max(\.uint8) }),
            ]
            for (name, attempt) in attempts {
                let kind = await ServerTests.RowReadingTests.failure(attempt)
                guard case .corruptedRow("Sample", _, let reason) = kind else {
                    Issue.record("\(route), \(name): expected a corrupted Sample row, got \(String(describing: kind))")
                    continue
                }
                // Reading the models names the first damaged property: int8.
                #expect(reason.contains("int8"), "\(route), \(name): \(reason)")
            }
        }
        await store.close()
    }

    @Test func projectionsAnswerAsTheFileStoreDoes() async throws {
        let store = try await emptyStore(models: [Item.self, Watched.self], clearing: [Item.self, Watched.self, WatchOwner.self])
        let memory = try Store.inMemory(models: [Item.self, Watched.self])
        var random = SeededRandom(seed: 3032)
        let items = ServerTests.QueryTests.items(&random)
        let watched = [
            Watched(id: 1, n: 1, label: "one", owner: WatchOwner(id: 10, name: "Stan")), Watched(id: 2, n: 2, label: "two"),
            Watched(id: 3, n: 3, label: "three", owner: WatchOwner(id: 10, name: "Stan")),
        ]
        try await store.write { transaction in
            try await transaction.add(contentsOf: items)
            try await transaction.add(contentsOf: watched)
        }
        try await memory.write { transaction in
            try transaction.add(contentsOf: items)
            try transaction.add(contentsOf: watched)
        }
        for (name, predicate) in ServerTests.QueryTests.predicates(&random) {
            let found = try await store.objects(Item.self).filter(predicate).sorted(byProperty: "n").projected(as: ItemCard.self)
            #expect(found == (try memory.objects(Item.self).filter(predicate).sorted(byProperty: "n").projected(as: ItemCard.self)), "\(name)")
        }
        let cards = try await store.objects(Watched.self).projected(as: WatchedCard.self)
        #expect(cards.map(\.owner?.name) == ["Stan", nil, "Stan"])
        #expect(cards.map(\.label) == ["one", "two", "three"])
        #expect(cards == (try memory.objects(Watched.self).projected(as: WatchedCard.self)))
        let refusal = try #require(#expect(throws: QueryError.self) { try memory.objects(Item.self).projected(as: MistypedCard.self) })
        await #expect(throws: refusal) { _ = try await store.objects(Item.self).projected(as: MistypedCard.self) }
        await store.close()
    }
}

extension Item {
    /// A computed property, which no aggregate can read.
    var doubled: Int { n * 2 }
}
