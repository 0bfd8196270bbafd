import Foundation
import Testing
import TestSupport
import MirrorStore

/// A model nothing links to and that links to nothing, every value a single one: results read its
/// records where they lie in the file, and a prefix in an index's order reads that many entries.
private final class Reading: Persistable {
    var identifier = 0
    var label = ""
    var score = 0.0
    var taken = Date(timeIntervalSinceReferenceDate: 0)
    var level = 0
    var note: String?
    init() {}
    static var primaryKey: String? { "identifier" }
    static var indexedProperties: [String] { ["score", "taken", "level"] }
    static var uniqueProperties: [String] { ["label"] }

    var summary: String {
        "\(identifier) \(label) \(score) \(taken.timeIntervalSinceReferenceDate) \(level) \(note ?? "-")"
    }
}

/// Results read in place and prefixes of index orders, against plain Swift on the same models:
/// indexes in persisted runs (after a compaction) and in the in-memory part (changes since),
/// ascending and descending, with and without a filter beside the sort.
@Suite("Listed reads against a plain Swift reference")
struct ListedReadTests {
    static let seed = SeededRandom.seed(default: 0x5EED_0026)

    private static func randomReading(_ identifier: Int, _ random: inout SeededRandom) -> Reading {
        let reading = Reading()
        reading.identifier = identifier
        reading.label = random.chance(50) ? "label \(identifier)" : "a longer label, number \(identifier), café"
        // Few distinct values, so that groups of equal keys span several objects.
        reading.score = Double(Int.random(in: -20...20, using: &random)) / 4
        reading.taken = Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0..<40, using: &random)) * 3_600)
        reading.level = Int.random(in: -3...3, using: &random)
        reading.note = random.chance(30) ? nil : "note \(Int.random(in: 0..<5, using: &random))"
        return reading
    }

    /// Plain, where records are read in the file's mapping, and encrypted, where they are not.
    @Test("prefixes, reads and filtered sorts give what plain Swift gives, from runs and the in-memory part",
          arguments: [false, true])
    func listedReadsMatchTheReference(encrypted: Bool) throws {
        var random = SeededRandom(seed: Self.seed)
        var configuration = Store.Configuration()
        configuration.durability = .none
        if encrypted { configuration.encryption = .passphrase("listed reads") }
        try withTemporaryDirectory { directory in
            let path = directory + "/readings.store"
            var reference: [Int: Reading] = [:]
            var store = try Store(path: path, models: [Reading.self], configuration: configuration)
            var next = 0
            for phase in 0..<4 {
                try store.write { transaction in
                    for _ in 0..<Int.random(in: 40...120, using: &random) {
                        let identifier = random.chance(30) && next > 0 ? Int.random(in: 0..<next, using: &random) : next
                        if identifier == next { next += 1 }
                        let reading = Self.randomReading(identifier, &random)
                        try transaction.add(reading)
                        reference[identifier] = reading
                    }
                    for _ in 0..<Int.random(in: 0...10, using: &random) where next > 0 {
                        let identifier = Int.random(in: 0..<next, using: &random)
                        try transaction.delete(Reading.self, primaryKey: identifier)
                        reference[identifier] = nil
                    }
                }
                // Runs written by a compaction, then reopened from them, with changes on top next.
                if phase % 2 == 1 {
                    try store.compact()
                    try store.close()
                    store = try Store(path: path, models: [Reading.self], configuration: configuration)
                }
                try check(store, reference: reference, phase: phase, random: &random)
            }
            try store.close()
        }
    }

    private func check(_ store: Store, reference: [Int: Reading], phase: Int, random: inout SeededRandom) throws {
        // In key order: equal sort values keep it, as an index lists them.
        let byKey = reference.values.sorted { $0.identifier < $1.identifier }
        let orders: [(String, SortDescriptor<Reading>)] = [
            ("score", SortDescriptor(\.score)), ("score descending", SortDescriptor(\.score, order: .reverse)),
            ("taken", SortDescriptor(\.taken)), ("taken descending", SortDescriptor(\.taken, order: .reverse)),
            ("level", SortDescriptor(\.level)), ("level descending", SortDescriptor(\.level, order: .reverse)),
            ("label", SortDescriptor(\.label)), ("label descending", SortDescriptor(\.label, order: .reverse)),
        ]
        for (name, order) in orders {
            let expected = byKey.sorted(using: order).map(\.summary)
            let results = try store.objects(Reading.self).sorted(using: order)
            let context = "seed \(Self.seed), phase \(phase), \(name); plan: \(results.plan)"
            // Doubles are sorted on their records (an index's keys do not order -0.0, 0.0 and NaN
            // as Swift's `<` does); the others in their index's order.
            let property = name.split(separator: " ")[0]
            if property != "score" {
                #expect(results.plan.order == .index(name: "Reading.\(property)", ascending: !name.hasSuffix("descending")), "\(context)")
            }
            for _ in 0..<3 {
                let length = Int.random(in: -2...(expected.count + 3), using: &random)
                #expect(Array(results.prefix(length)).map(\.summary) == Array(expected.prefix(max(0, length))), "\(context), first \(length)")
            }
            #expect(try results.all().map(\.summary) == expected, "\(context), all")
            #expect(results.map(\.summary) == expected, "\(context), iterated")
            if !expected.isEmpty {
                let position = Int.random(in: 0..<expected.count, using: &random)
                #expect(try results.object(at: position).summary == expected[position], "\(context), position \(position)")
            }
            #expect(throws: StoreError.self) { try results.object(at: expected.count) }

            // A filter beside the sort: an indexed equality, and an unindexed test.
            let level = Int.random(in: -3...3, using: &random)
            let filtered = try store.objects(Reading.self).filter(#Predicate { $0.level == level }).sorted(using: order)
            let wanted = byKey.filter { $0.level == level }.sorted(using: order).map(\.summary)
            #expect(Array(filtered.prefix(5)).map(\.summary) == Array(wanted.prefix(5)), "\(context), level \(level), first 5")
            #expect(try filtered.all().map(\.summary) == wanted, "\(context), level \(level)")
            let note = "note \(Int.random(in: 0..<5, using: &random))"
            let noted = try store.objects(Reading.self).sorted(using: order).filter(#Predicate { $0.note == note })
            #expect(noted.map(\.summary) == byKey.filter { $0.note == note }.sorted(using: order).map(\.summary), "\(context), \(note)")
        }
        // An equality on the unique label, the whole answer from its index.
        if let some = byKey.randomElement(using: &random) {
            let label = some.label
            let found = try store.objects(Reading.self).filter(#Predicate { $0.label == label })
            #expect(try found.all().map(\.summary) == [some.summary], "seed \(Self.seed), phase \(phase), label \(label)")
            #expect(found.map(\.summary) == [some.summary], "seed \(Self.seed), phase \(phase), label \(label), iterated")
        }
    }
}
