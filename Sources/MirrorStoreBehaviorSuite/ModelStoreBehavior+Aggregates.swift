import Foundation
import MirrorStore

extension ModelStoreBehavior {
    func checkAggregates() async throws {
        let check = BehaviorCheck.aggregates
        let composed = "\u{E9}", decomposed = "e\u{301}"
        let scores = [
            BehaviorScore(id: 1, points: 10, small: 100, rating: 2.5, label: "b", bonus: 3),
            BehaviorScore(id: 2, points: -4, small: 100, rating: -0.0, label: "a", bonus: nil),
            BehaviorScore(id: 3, points: 7, small: -100, rating: .nan, label: composed, bonus: 5),
            BehaviorScore(id: 4, points: 10, small: 27, rating: 1.5, label: decomposed, bonus: nil),
            BehaviorScore(id: 5, points: 0, small: 0, rating: 0.0, label: "Z", bonus: -2),
        ]
        try await withStore(check, models: [BehaviorScore.self]) { store in
            try await store.write { transaction in
                for score in scores { try await transaction.add(score) }
            }
            let all = ModelQuery(BehaviorScore.self)
            let queries: [(String, ModelQuery<BehaviorScore>)] = [
                ("every score", all),
                ("points > 0", all.filter(#Predicate { $0.points > 0 })),
                ("labels of one character with a bonus", all.filter(#Predicate { $0.label.count == 1 && $0.bonus != nil })),
                ("sorted by label", all.sorted(using: SortDescriptor(\.label))),
                ("the first three by points, descending", all.sorted(byProperty: "points", ascending: false).prefix(3)),
                ("the first two rated above 0", all.filter(#Predicate { $0.rating > 0 }).prefix(2)),
                ("sorted by small", all.sorted(byProperty: "small")),
                ("no score", all.filter(#Predicate { $0.points > 1_000 })),
            ]
            for (what, query) in queries {
                try await compareAggregates(of: query, in: store, what, check: check)
            }

            // Added in key order, two 100s overflow an Int8 at once; sorted by `small`, no partial sum does.
            try expect(try await store.fetchSum(all.sorted(byProperty: "small"), \.small), 127, "the sum of small sorted by small", in: check)
            try await expectError("the sum of small in key order", in: check, matches: { error in
                (error as? QueryError)?.kind == .aggregateOverflow(typeName: "BehaviorScore", property: "small", type: "Int8")
            }) {
                _ = try await store.fetchSum(all, \.small)
            }
            try expect(try await store.fetchMax(all, \.label).map { Array($0.utf8) }, Array(composed.utf8),
                       "the greatest label, the first of two equal spellings", in: check)
            try expect(try await store.fetchMin(all, \.rating).map(\.sign), .minus, "the least rating, -0.0 before 0.0", in: check)
            try await expectError("an aggregate of a computed property", in: check, matches: { error in
                if let error = error as? QueryError, case .unknownProperty = error.kind { return true }
                return false
            }) {
                _ = try await store.fetchSum(all, \.doubled)
            }
        }
    }

    /// Throws unless every aggregate of `query` is what Swift computes on the models it fetches.
    private func compareAggregates(
        of query: ModelQuery<BehaviorScore>, in store: Store, _ what: String, check: BehaviorCheck
    ) async throws {
        let models = try await store.fetch(query)
        let points = models.map(\.points)
        try expect(try await store.fetchValues(query, \.points), points, "\(what): points", in: check)
        try expect(try await store.fetchMin(query, \.points), points.min(), "\(what): least points", in: check)
        try expect(try await store.fetchMax(query, \.points), points.max(), "\(what): most points", in: check)
        try expect(try await store.fetchSum(query, \.points), points.reduce(0, +), "\(what): sum of points", in: check)
        try expect(try await store.fetchAverage(query, \.points), points.isEmpty ? nil : Double(points.reduce(0, +)) / Double(points.count),
                   "\(what): average points", in: check)
        try expect(try await store.fetchDistinct(query, \.points), Self.firstOfEach(points), "\(what): distinct points", in: check)

        let labels = models.map(\.label)
        func bytes(_ label: String?) -> [UInt8]? { label.map { Array($0.utf8) } }
        try expect(try await store.fetchValues(query, \.label).map(bytes), labels.map(bytes), "\(what): labels", in: check)
        try expect(bytes(try await store.fetchMin(query, \.label)), bytes(labels.min()), "\(what): least label", in: check)
        try expect(bytes(try await store.fetchMax(query, \.label)), bytes(labels.max()), "\(what): greatest label", in: check)
        try expect(try await store.fetchDistinct(query, \.label).map(bytes), Self.firstOfEach(labels).map(bytes), "\(what): distinct labels",
                   in: check)

        let bonuses = models.map(\.bonus)
        let present = bonuses.compactMap { $0 }
        try expect(try await store.fetchValues(query, \.bonus), bonuses, "\(what): bonuses", in: check)
        try expect(try await store.fetchMin(query, \.bonus), present.min(), "\(what): least bonus", in: check)
        try expect(try await store.fetchMax(query, \.bonus), present.max(), "\(what): greatest bonus", in: check)
        try expect(try await store.fetchSum(query, \.bonus), present.reduce(0, +), "\(what): sum of bonuses", in: check)
        try expect(try await store.fetchAverage(query, \.bonus), present.isEmpty ? nil : Double(present.reduce(0, +)) / Double(present.count),
                   "\(what): average bonus", in: check)

        // Compared bit by bit: NaN and the sign of zero count.
        let ratings = models.map(\.rating)
        let ordered = ratings.filter { !$0.isNaN }
        try expect(try await store.fetchValues(query, \.rating).map(\.bitPattern), ratings.map(\.bitPattern), "\(what): ratings", in: check)
        try expect(try await store.fetchMin(query, \.rating)?.bitPattern, ordered.min()?.bitPattern, "\(what): least rating", in: check)
        try expect(try await store.fetchMax(query, \.rating)?.bitPattern, ordered.max()?.bitPattern, "\(what): greatest rating", in: check)
        let ratingSum = ratings.reduce(0, +)
        try expect(try await store.fetchSum(query, \.rating).bitPattern, ratingSum.bitPattern, "\(what): sum of ratings", in: check)
        try expect(try await store.fetchAverage(query, \.rating)?.bitPattern, ratings.isEmpty ? nil : (ratingSum / Double(ratings.count)).bitPattern,
                   "\(what): average rating", in: check)

        // An Int8 sum throws where a partial sum in the results' order leaves Int8's range.
        var small: Int8? = 0
        for value in models.map(\.small) {
            guard let partial = small else { break }
            let (sum, overflowed) = partial.addingReportingOverflow(value)
            small = overflowed ? nil : sum
        }
        if let small {
            try expect(try await store.fetchSum(query, \.small), small, "\(what): sum of small", in: check)
        } else {
            try await expectError("\(what): sum of small", in: check, matches: { error in
                (error as? QueryError)?.kind == .aggregateOverflow(typeName: "BehaviorScore", property: "small", type: "Int8")
            }) {
                _ = try await store.fetchSum(query, \.small)
            }
        }
    }

    /// `values` without repeats (as `Set` counts them), in the order of their first occurrence.
    private static func firstOfEach<Value: Hashable>(_ values: [Value]) -> [Value] {
        var seen = Set<Value>()
        return values.filter { seen.insert($0).inserted }
    }
}
