import Foundation
import Testing
import TestSupport
@testable import MirrorStore

/// A `String` key in random order and four indexes, with many ties: a skewed string, an integer
/// with a few objects per value, an optional integer (`nil` for a third), a date with repeats.
private final class Outing: Persistable {
    var code = ""
    var category = ""
    var level = 0
    var score: Int?
    var startsAt = Date(timeIntervalSinceReferenceDate: 0)
    var note = ""
    init() {}
    static var primaryKey: String? { "code" }
    static var indexedProperties: [String] { ["category", "level", "score", "startsAt"] }

    var summary: String {
        "\(code) \(category) \(level) \(score.map(String.init) ?? "nil") \(startsAt.timeIntervalSinceReferenceDate)"
    }
}

/// Filters an index range answers (equality, ranges and `contains` on a closed range of one
/// indexed property), sorted by another indexed property or by the same one, in either direction:
/// the walk of the sort index (``QueryPlan/Order/indexWalk(name:ascending:)``, testing records or
/// listing the range's keys), the range read
/// in index order, and the range read and sorted on records, against plain Swift on the same
/// models. Each query is read as a prefix, whole, and position by position, so that the walk,
/// the sort it falls back to and their mixes all answer; across commits, checkpoints and run
/// merges, reopenings and compactions; and on damaged copies, where each answers as plain Swift
/// does or throws.
@Suite("Sorted index ranges walked against a plain Swift reference")
struct IndexSortWalkDifferentialTests {
    static let seed = SeededRandom.seed(default: 0x5EED_5047)
    static let categories = ["a", "b", "c", "d", "e", "f", "g"]

    private static func randomOuting(_ code: String, _ random: inout SeededRandom) -> Outing {
        let outing = Outing()
        outing.code = code
        // Skewed: "a" about 55%, "b" 20%, "c" 10%, the rest shared by the others.
        let draw = Int.random(in: 0..<100, using: &random)
        outing.category = draw < 55 ? "a" : draw < 75 ? "b" : draw < 85 ? "c" : random.pick(Array(categories.dropFirst(3)))
        outing.level = Int.random(in: 0..<60, using: &random)
        outing.score = random.chance(33) ? nil : Int.random(in: -20..<20, using: &random)
        outing.startsAt = Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0..<400, using: &random)) * 3_600)
        outing.note = "note \(Int.random(in: 0..<1000, using: &random))"
        return outing
    }

    private static func randomCode(_ random: inout SeededRandom) -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<Int.random(in: 1...6, using: &random)).map { _ in random.pick(letters) })
    }

    /// A filter as a predicate and as plain Swift, named.
    private struct Filter {
        let name: String
        let property: String
        let predicate: Predicate<Outing>
        let matches: (Outing) -> Bool
    }

    private static func randomFilter(_ random: inout SeededRandom) -> Filter {
        let category = random.pick(categories)
        let a = Int.random(in: -5..<65, using: &random), b = Int.random(in: -5..<65, using: &random)
        let (low, high) = (min(a, b), max(a, b))
        let hours = Int.random(in: 0..<400, using: &random), span = Int.random(in: 1..<400, using: &random)
        let from = Date(timeIntervalSinceReferenceDate: Double(hours) * 3_600)
        let to = Date(timeIntervalSinceReferenceDate: Double(hours + span) * 3_600)
        switch Int.random(in: 0..<7, using: &random) {
        case 0: return Filter(name: "category == \(category)", property: "category",
                              predicate: #Predicate { $0.category == category }, matches: { $0.category == category })
        case 1: return Filter(name: "level == \(low)", property: "level", predicate: #Predicate { $0.level == low }, matches: { $0.level == low })
        case 2: return Filter(name: "level in [\(low), \(high))", property: "level",
                              predicate: #Predicate { $0.level >= low && $0.level < high }, matches: { $0.level >= low && $0.level < high })
        case 3: return Filter(name: "level in \(low)...\(high)", property: "level",
                              predicate: #Predicate { (low...high).contains($0.level) }, matches: { (low...high).contains($0.level) })
        case 4: return Filter(name: "startsAt in [\(hours), +\(span)) hours", property: "startsAt",
                              predicate: #Predicate { $0.startsAt >= from && $0.startsAt < to }, matches: { $0.startsAt >= from && $0.startsAt < to })
        case 5: return Filter(name: "score == nil", property: "score", predicate: #Predicate { $0.score == nil }, matches: { $0.score == nil })
        default: return Filter(name: "level > \(low)", property: "level", predicate: #Predicate { $0.level > low }, matches: { $0.level > low })
        }
    }

    /// A sort by one indexed property as a descriptor and as plain Swift's order of two models:
    /// `nil` first, ties in key order.
    private struct Sort {
        let name: String
        let property: String
        let ascending: Bool
        let descriptor: SortDescriptor<Outing>
        let precedes: (Outing, Outing) -> Bool
    }

    private static func order<Value: Comparable>(_ lhs: Value?, _ rhs: Value?) -> Int {
        switch (lhs, rhs) {
        case (nil, nil): 0
        case (nil, _): -1
        case (_, nil): 1
        case (let l?, let r?): l < r ? -1 : (r < l ? 1 : 0)
        }
    }

    private static func randomSort(_ random: inout SeededRandom) -> Sort {
        let ascending = random.chance(50)
        let direction: SortOrder = ascending ? .forward : .reverse
        func sort(_ property: String, _ descriptor: SortDescriptor<Outing>, _ compare: @escaping (Outing, Outing) -> Int) -> Sort {
            Sort(name: "\(property) \(ascending ? "ascending" : "descending")", property: property, ascending: ascending, descriptor: descriptor) {
                let order = compare($0, $1)
                return order != 0 ? (ascending ? order < 0 : order > 0) : $0.code < $1.code
            }
        }
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return sort("startsAt", SortDescriptor(\.startsAt, order: direction)) { order($0.startsAt, $1.startsAt) }
        case 1: return sort("level", SortDescriptor(\.level, order: direction)) { order($0.level, $1.level) }
        case 2: return sort("category", SortDescriptor(\.category, order: direction)) { order($0.category, $1.category) }
        default: return sort("score", SortDescriptor(\.score, order: direction)) { order($0.score, $1.score) }
        }
    }

    /// How plans were chosen across a run.
    private struct Plans {
        /// Walks testing records, and walks listing the range's keys.
        var walkedTesting = 0
        var walkedListing = 0
        var rangeInOrder = 0
        var sorted = 0
        var answered = 0
    }

    @Test("walks, ranges in order and sorts give plain Swift's order, across commits, checkpoints, merges and compactions")
    func sortedRangesMatchTheReference() throws {
        var random = SeededRandom(seed: Self.seed)
        var configuration = Store.Configuration()
        configuration.durability = .none
        // Checkpoints every few commits, so that indexes are read from runs, merged runs and memory.
        configuration.checkpointInterval = 6_000
        var plans = Plans()
        try withTemporaryDirectory { directory in
            let path = directory + "/outings.store"
            var reference: [String: Outing] = [:]
            var store = try Store(path: path, models: [Outing.self], configuration: configuration)
            for phase in 0..<8 {
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    try store.write { transaction in
                        for _ in 0..<Int.random(in: 20...200, using: &random) {
                            let code = !reference.isEmpty && random.chance(20) ? reference.keys.sorted()[Int.random(in: 0..<reference.count, using: &random)]
                                : Self.randomCode(&random)
                            let outing = Self.randomOuting(code, &random)
                            try transaction.add(outing)
                            reference[code] = outing
                        }
                        for _ in 0..<Int.random(in: 0...20, using: &random) where !reference.isEmpty {
                            let code = reference.keys.sorted()[Int.random(in: 0..<reference.count, using: &random)]
                            try transaction.delete(Outing.self, primaryKey: code)
                            reference[code] = nil
                        }
                    }
                }
                switch phase % 4 {
                case 1:
                    try store.close()
                    store = try Store(path: path, models: [Outing.self], configuration: configuration)
                case 3:
                    try store.compact()
                default: break
                }
                try Self.check(store, reference: reference, queries: 30, random: &random, plans: &plans) { "seed \(Self.seed), phase \(phase), \($0)" }
            }
            try store.close()
        }
        #expect(plans.walkedTesting > 0 && plans.walkedListing > 0 && plans.rangeInOrder > 0 && plans.sorted > 0, "seed \(Self.seed): plans \(plans)")
    }

    @Test("damaged copies of a store with runs answer sorted ranges as the reference or throw")
    func damagedStoresNeverAnswerOtherwise() throws {
        var random = SeededRandom(seed: Self.seed ^ 0xDA)
        var configuration = Store.Configuration()
        configuration.durability = .none
        try withTemporaryDirectory { directory in
            let path = directory + "/outings.store"
            var reference: [String: Outing] = [:]
            let store = try Store(path: path, models: [Outing.self], configuration: configuration)
            try store.write { transaction in
                for _ in 0..<600 {
                    let outing = Self.randomOuting(Self.randomCode(&random), &random)
                    try transaction.add(outing)
                    reference[outing.code] = outing
                }
            }
            try store.compact()
            try store.close()
            let intact = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let damagedPath = directory + "/damaged.store"
            var plans = Plans()
            for round in 0..<40 {
                var bytes = intact
                bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
                try? FileManager.default.removeItem(atPath: damagedPath)
                try? FileManager.default.removeItem(atPath: damagedPath + ".lock")
                try Data(bytes).write(to: URL(fileURLWithPath: damagedPath))
                guard let damaged = try? Store(path: damagedPath, models: [Outing.self], configuration: configuration) else { continue }
                try Self.check(damaged, reference: reference, queries: 8, random: &random, plans: &plans, throwsAllowed: true) {
                    "seed \(Self.seed), damage round \(round), \($0)"
                }
                try? damaged.close()
            }
            #expect(plans.answered > 0, "seed \(Self.seed): no damaged copy answered a query")
        }
    }

    /// Runs `queries` random sorted filters, each read three ways, against `reference`; with
    /// `throwsAllowed`, a read may throw instead (a typed error: anything else fails the test).
    private static func check(
        _ store: Store, reference: [String: Outing], queries: Int, random: inout SeededRandom, plans: inout Plans,
        throwsAllowed: Bool = false, _ context: (String) -> String
    ) throws {
        let all = Array(reference.values)
        for _ in 0..<queries {
            let filter = randomFilter(&random)
            let sort = randomSort(&random)
            let expected = all.filter(filter.matches).sorted(by: sort.precedes).map(\.summary)
            let name = context("\(filter.name) sorted by \(sort.name)")
            let limit = random.pick([0, 1, 5, 20, Int.random(in: 0...(expected.count + 2), using: &random)])
            func results() throws -> Results<Outing> {
                try store.objects(Outing.self).filter(filter.predicate).sorted(using: sort.descriptor)
            }
            do {
                let plan = try results().plan
                switch plan.order {
                case .indexWalk(let index, let ascending):
                    if plan.filter == .storedBytes { plans.walkedTesting += 1 } else { plans.walkedListing += 1 }
                    #expect(index == "Outing.\(sort.property)" && ascending == sort.ascending && filter.property != sort.property, "\(name): \(plan)")
                case .index(let index, let ascending):
                    plans.rangeInOrder += 1
                    #expect(index == "Outing.\(sort.property)" && ascending == sort.ascending, "\(name): \(plan)")
                default:
                    plans.sorted += 1
                }
                // A prefix, then the rest by position: the walk, then on (or the sort it falls back to).
                let first = try results()
                let prefix = first.prefix(limit)
                var read = try prefix.indices.map { try first.object(at: $0).summary }
                #expect(read == Array(expected.prefix(limit)), "\(name): first \(limit)")
                #expect(first.count == expected.count, "\(name): count")
                read += try (prefix.endIndex..<first.count).map { try first.object(at: $0).summary }
                #expect(read == expected, "\(name): by position after a prefix of \(limit)")
                // Every result at once, then the first ones again.
                let whole = try results()
                #expect(try whole.all().map(\.summary) == expected, "\(name): all")
                #expect(try (0..<min(limit, whole.count)).map { try whole.object(at: $0).summary } == Array(expected.prefix(limit)), "\(name): prefix after all")
                plans.answered += 1
            } catch where throwsAllowed {
                // A damaged copy may refuse to answer, with an error (a trap would end the test).
            }
        }
    }
}
