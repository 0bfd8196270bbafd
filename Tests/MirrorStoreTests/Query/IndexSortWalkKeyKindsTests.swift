import Foundation
import Testing
import TestSupport
@testable import MirrorStore

/// Keyed by an `Int`, which index entries store as a varint.
private final class NumberedOuting: Persistable {
    var number = 0
    var category = ""
    var level = 0
    var startsAt = Date(timeIntervalSinceReferenceDate: 0)
    init() {}
    static var primaryKey: String? { "number" }
    static var indexedProperties: [String] { ["category", "level", "startsAt"] }
}

/// Keyed by a `UUID`, which index entries store as 16 bytes.
private final class IdentifiedOuting: Persistable {
    var id = UUID()
    var category = ""
    var level = 0
    var startsAt = Date(timeIntervalSinceReferenceDate: 0)
    init() {}
    static var primaryKey: String? { "id" }
    static var indexedProperties: [String] { ["category", "level", "startsAt"] }
}

/// The walk of a sort index that keeps a range's objects by the bytes the index stores for them
/// (`ObjectKeySet`, `IndexMemberWalk`), for keys other than the `String` ones of
/// `IndexSortWalkDifferentialTests`: integers (negative ones too) and UUIDs, sorted by a date and
/// by an integer with many ties, both ways, against plain Swift; across commits (changes beside
/// a run), checkpoints, compactions; and on damaged copies, which answer as plain Swift or throw.
@Suite("Sorted index ranges walked, with Int and UUID keys")
struct IndexSortWalkKeyKindsTests {
    static let seed = SeededRandom.seed(default: 0x5EED_5048)
    static let categories = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]

    /// One model's fields as plain values: a key with its order, a category, a level, a date.
    private struct Row {
        let order: (Row, Row) -> Bool
        let summary: String
        let category: String
        let level: Int
        let startsAt: Date
    }

    private static func fields(_ random: inout SeededRandom) -> (String, Int, Date) {
        // Skewed, so that ranges of every size are asked for.
        let draw = Int.random(in: 0..<100, using: &random)
        let category = draw < 40 ? "a" : draw < 60 ? "b" : random.pick(categories)
        return (category, Int.random(in: 0..<40, using: &random), Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0..<300, using: &random)) * 60))
    }

    /// Queries on `store` against `rows` (what plain Swift holds): each random category sorted by
    /// the date or the level, either way, read as a prefix, by position and whole.
    private static func check(
        _ rows: [Row], queries: Int, random: inout SeededRandom, walks: inout Int, throwsAllowed: Bool, context: String,
        results: (_ category: String, _ byDate: Bool, _ ascending: Bool) throws -> (plan: QueryPlan, first: [String], all: [String], count: Int)
    ) throws {
        for _ in 0..<queries {
            let category = random.pick(categories)
            let (byDate, ascending) = (random.chance(60), random.chance(50))
            let expected = rows.filter { $0.category == category }.sorted { a, b in
                let (x, y) = byDate ? (a.startsAt.timeIntervalSinceReferenceDate, b.startsAt.timeIntervalSinceReferenceDate) : (Double(a.level), Double(b.level))
                if x != y { return ascending ? x < y : x > y }
                return a.order(a, b)
            }.map(\.summary)
            let name = "\(context): \(category) by \(byDate ? "date" : "level") \(ascending ? "ascending" : "descending")"
            do {
                let found = try results(category, byDate, ascending)
                if case .indexWalk = found.plan.order, found.plan.filter != .storedBytes { walks += 1 }
                #expect(found.first == Array(expected.prefix(20)), "\(name): first 20")
                #expect(found.all == expected && found.count == expected.count, "\(name): all")
            } catch where throwsAllowed {
                // A damaged copy may refuse to answer, with an error (a trap would end the test).
            }
        }
    }

    private static func results<Model: Persistable>(
        _ store: Store, _ type: Model.Type, _ summary: @escaping (Model) -> String,
        filter: @escaping (String) -> Predicate<Model>, byDate: SortDescriptor<Model>, byLevel: SortDescriptor<Model>
    ) -> (String, Bool, Bool) throws -> (plan: QueryPlan, first: [String], all: [String], count: Int) {
        { category, date, ascending in
            var descriptor = date ? byDate : byLevel
            descriptor.order = ascending ? .forward : .reverse
            let first = try store.objects(Model.self).filter(filter(category)).sorted(using: descriptor)
            let prefix = try (0..<min(20, first.count)).map { try summary(first.object(at: $0)) }
            let all = try store.objects(Model.self).filter(filter(category)).sorted(using: descriptor)
            return (first.plan, prefix, try all.all().map(summary), first.count)
        }
    }

    @Test("Int and UUID keys: walks give plain Swift's order across commits, checkpoints and compactions, and on damaged copies")
    func walksWithOtherKeysMatchTheReference() throws {
        var random = SeededRandom(seed: Self.seed)
        var configuration = Store.Configuration()
        configuration.durability = .none
        configuration.checkpointInterval = 8_000
        var walks = 0
        try withTemporaryDirectory { directory in
            let path = directory + "/outings.store"
            var numbered: [Int: NumberedOuting] = [:]
            var identified: [UUID: IdentifiedOuting] = [:]
            var uuids: [UUID] = []
            let store = try Store(path: path, models: [NumberedOuting.self, IdentifiedOuting.self], configuration: configuration)
            // Numbers ordered numerically, UUIDs by their bytes: the key orders ties come in.
            func numberedRows() -> [Row] {
                numbered.values.map { model in
                    Row(order: { Int($0.summary) ?? 0 < Int($1.summary) ?? 0 }, summary: "\(model.number)", category: model.category, level: model.level,
                        startsAt: model.startsAt)
                }
            }
            func identifiedRows() -> [Row] {
                identified.values.map { model in
                    Row(order: { Self.uuidBytes($0.summary).lexicographicallyPrecedes(Self.uuidBytes($1.summary)) }, summary: model.id.uuidString,
                        category: model.category, level: model.level, startsAt: model.startsAt)
                }
            }
            let numberedResults = Self.results(store, NumberedOuting.self, { "\($0.number)" }, filter: { category in #Predicate { $0.category == category } },
                                               byDate: SortDescriptor(\.startsAt), byLevel: SortDescriptor(\.level))
            let identifiedResults = Self.results(store, IdentifiedOuting.self, { $0.id.uuidString }, filter: { category in #Predicate { $0.category == category } },
                                                 byDate: SortDescriptor(\.startsAt), byLevel: SortDescriptor(\.level))
            for phase in 0..<6 {
                try store.write { transaction in
                    for _ in 0..<Int.random(in: 100...400, using: &random) {
                        let (category, level, startsAt) = Self.fields(&random)
                        let model = NumberedOuting()
                        model.number = Int.random(in: -3_000...3_000, using: &random)
                        (model.category, model.level, model.startsAt) = (category, level, startsAt)
                        try transaction.add(model)
                        numbered[model.number] = model
                        let other = IdentifiedOuting()
                        other.id = random.chance(15) && !uuids.isEmpty ? random.pick(uuids) : Self.randomUUID(&random)
                        (other.category, other.level, other.startsAt) = (category, level, startsAt)
                        try transaction.add(other)
                        if identified.updateValue(other, forKey: other.id) == nil { uuids.append(other.id) }
                    }
                    for _ in 0..<Int.random(in: 0...30, using: &random) {
                        if let number = random.pick(from: numbered.keys, by: <) {
                            try transaction.delete(NumberedOuting.self, primaryKey: number)
                            numbered[number] = nil
                        }
                    }
                }
                if phase % 3 == 2 { try store.compact() }
                try Self.check(numberedRows(), queries: 12, random: &random, walks: &walks, throwsAllowed: false, context: "seed \(Self.seed), phase \(phase), Int keys",
                               results: numberedResults)
                try Self.check(identifiedRows(), queries: 12, random: &random, walks: &walks, throwsAllowed: false,
                               context: "seed \(Self.seed), phase \(phase), UUID keys", results: identifiedResults)
            }
            try store.compact()
            try store.close()
            // Damaged copies of the compacted store (its indexes in runs read alone).
            let intact = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let damagedPath = directory + "/damaged.store"
            let rows = numberedRows()
            let otherRows = identifiedRows()
            for round in 0..<30 {
                var bytes = intact
                bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
                try? FileManager.default.removeItem(atPath: damagedPath)
                try? FileManager.default.removeItem(atPath: damagedPath + ".lock")
                try Data(bytes).write(to: URL(fileURLWithPath: damagedPath))
                guard let damaged = try? Store(path: damagedPath, models: [NumberedOuting.self, IdentifiedOuting.self], configuration: configuration) else { continue }
                let numberedDamaged = Self.results(damaged, NumberedOuting.self, { "\($0.number)" }, filter: { category in #Predicate { $0.category == category } },
                                                   byDate: SortDescriptor(\.startsAt), byLevel: SortDescriptor(\.level))
                let identifiedDamaged = Self.results(damaged, IdentifiedOuting.self, { $0.id.uuidString }, filter: { category in #Predicate { $0.category == category } },
                                                     byDate: SortDescriptor(\.startsAt), byLevel: SortDescriptor(\.level))
                try Self.check(rows, queries: 4, random: &random, walks: &walks, throwsAllowed: true, context: "damage round \(round), Int keys", results: numberedDamaged)
                try Self.check(otherRows, queries: 4, random: &random, walks: &walks, throwsAllowed: true, context: "damage round \(round), UUID keys",
                               results: identifiedDamaged)
                try? damaged.close()
            }
        }
        #expect(walks > 20, "seed \(Self.seed): walks listing the range: \(walks)")
    }

    private static func randomUUID(_ random: inout SeededRandom) -> UUID {
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &random) }
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    private static func uuidBytes(_ text: String) -> [UInt8] {
        guard let id = UUID(uuidString: text) else { return [] }
        return withUnsafeBytes(of: id.uuid) { Array($0) }
    }
}
