import Foundation
import Testing
import TestSupport
import MirrorStore

/// `min`, `max`, `sum`, `average` and `distinct` on results against the same operations on the
/// array of models, on random data with edge values, unfiltered (where an index may answer),
/// filtered and sorted, fresh and reopened.
@Suite struct AggregateTests {
    struct Reading: Persistable {
        var id = 0
        var small: Int8 = 0
        var count = 0
        var level: Double = 0
        var label = ""
        var when = Date(timeIntervalSinceReferenceDate: 0)
        var maybe: Int?
        var ignored = 0
        static var primaryKey: String? { "id" }
        /// Some indexed, some not: unfiltered results read an index's end for the first, every
        /// record for the others.
        static var indexedProperties: [String] { ["count", "label", "when", "maybe"] }
        static var ignoredProperties: [String] { ["ignored"] }
        var computed: Int { count * 2 }
    }

    static let labels = ["", "b", "a", "Élodie", "E\u{301}lodie", "zz", "🙂", "M"]

    static func readings(seed: UInt64, count: Int) -> [Reading] {
        var random = SeededRandom(seed: seed)
        return (1...count).map { id in
            Reading(
                id: id, small: random.chance(50) ? Int8.random(in: -3...3, using: &random) : random.integer(Int8.self),
                count: random.chance(70) ? Int.random(in: -50...50, using: &random) : random.integer(Int.self),
                level: random.chance(60) ? Double(Int.random(in: -5...5, using: &random)) : random.double(),
                label: random.pick(labels),
                when: Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...9, using: &random))),
                maybe: random.chance(40) ? nil : Int.random(in: -9...9, using: &random))
        }
    }

    /// Swift's answers with the documented choices: NaN and nil skipped by min and max, the first
    /// of equal values kept; an integer sum that overflows is nil (the store throws).
    static func least<Value: Comparable>(_ values: [Value]) -> Value? { values.filter { $0 == $0 }.min() }
    static func greatest<Value: Comparable>(_ values: [Value]) -> Value? { values.filter { $0 == $0 }.max() }
    static func checkedSum<Value: FixedWidthInteger>(_ values: [Value]) -> Value? {
        var sum = Value.zero
        for value in values {
            let (partial, overflow) = sum.addingReportingOverflow(value)
            if overflow { return nil }
            sum = partial
        }
        return sum
    }
    static func firstOccurrences<Value: Hashable>(_ values: [Value]) -> [Value] {
        var seen = Set<Value>()
        return values.filter { seen.insert($0).inserted }
    }

    /// Equal and made of the same bits or bytes: the store returns the first of equal values, as
    /// Swift does, not another equal one (-0.0 for 0.0, a decomposed string for a composed one).
    static func same<Value>(_ a: Value?, _ b: Value?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        // NaN's payload is not part of Swift's answer.
        case (let a as Double, let b as Double): return a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN)
        case (let a as String, let b as String): return a.utf8.elementsEqual(b.utf8)
        case (let a as Int, let b as Int): return a == b
        case (let a as Int8, let b as Int8): return a == b
        case (let a as Date, let b as Date): return a == b
        default: return false
        }
    }

    static func check(_ results: Results<Reading>, _ context: String) throws {
        let models = try results.all()
        #expect(same(try results.min(\.count), least(models.map(\.count))), "\(context) min count")
        #expect(same(try results.max(\.count), greatest(models.map(\.count))), "\(context) max count")
        #expect(same(try results.min(\.level), least(models.map(\.level))), "\(context) min level")
        #expect(same(try results.max(\.level), greatest(models.map(\.level))), "\(context) max level")
        #expect(same(try results.min(\.label), least(models.map(\.label))), "\(context) min label")
        #expect(same(try results.max(\.label), greatest(models.map(\.label))), "\(context) max label")
        #expect(same(try results.max(\.when), greatest(models.map(\.when))), "\(context) max when")
        #expect(same(try results.min(\.maybe), least(models.compactMap(\.maybe))), "\(context) min maybe")
        #expect(same(try results.max(\.maybe), greatest(models.compactMap(\.maybe))), "\(context) max maybe")
        for (sum, values) in [(try? results.sum(\.count), models.map(\.count))] {
            #expect(sum == checkedSum(values), "\(context) sum count")
        }
        #expect((try? results.sum(\.small)) == checkedSum(models.map(\.small)), "\(context) sum small")
        #expect(try results.sum(\.maybe) == models.compactMap(\.maybe).reduce(0, +), "\(context) sum maybe")
        let levels = models.map(\.level)
        #expect(same(try results.sum(\.level), levels.reduce(0, +)), "\(context) sum level")
        #expect(same(try results.average(\.level), levels.isEmpty ? nil : levels.reduce(0, +) / Double(levels.count)), "\(context) average level")
        let maybes = models.compactMap(\.maybe)
        #expect(try results.average(\.maybe) == (maybes.isEmpty ? nil : Double(maybes.reduce(0, +)) / Double(maybes.count)), "\(context) average maybe")
        let distinct = try results.distinct(\.label)
        let expected = firstOccurrences(models.map(\.label))
        #expect(distinct.count == expected.count && zip(distinct, expected).allSatisfy { same($0, $1) }, "\(context) distinct label")
        #expect(try results.distinct(\.maybe) == firstOccurrences(models.map(\.maybe)), "\(context) distinct maybe")
    }

    @Test("every aggregate equals the array's, unfiltered, filtered, sorted, fresh and reopened", arguments: [0, 1, 2])
    func aggregatesMatchArrays(offset: UInt64) throws {
        let seed = SeededRandom.seed(default: 0x29_0002) &+ offset
        try withTemporaryDirectory { directory in
            let path = directory + "/readings.store"
            let store = try Store(path: path, models: [Reading.self])
            try store.write { transaction in
                for reading in Self.readings(seed: seed, count: 300) { try transaction.add(reading) }
            }
            try store.close()
            for phase in ["fresh", "reopened"] {
                let store = try Store(path: path, models: [Reading.self])
                defer { try? store.close() }
                if phase == "reopened" { try store.write { try $0.delete(Reading.self, primaryKey: 7) } }
                let all = try store.objects(Reading.self)
                try Self.check(all, "seed \(seed), \(phase), all")
                try Self.check(try all.filter(#Predicate { $0.count > 0 }), "seed \(seed), \(phase), filtered")
                try Self.check(try all.sorted(using: SortDescriptor(\.label)), "seed \(seed), \(phase), sorted")
                try Self.check(try all.filter(#Predicate { $0.id > 1_000 }), "seed \(seed), \(phase), empty")
            }
        }
    }

    @Test("an aggregate of a property that is not stored names it in a typed error")
    func notStoredPropertyIsNamed() throws {
        let store = try Store.inMemory(models: [Reading.self])
        try store.write { try $0.add(Reading(id: 1, count: 3)) }
        let results = try store.objects(Reading.self)
        let ignored = #expect(throws: QueryError.self) { try results.sum(\.ignored) }
        #expect(ignored?.kind == .ignoredProperty(typeName: "Reading", property: "ignored"))
        let error = #expect(throws: QueryError.self) { try results.max(\.computed) }
        #expect(error?.kind == .unknownProperty(typeName: "Reading", property: "a computed property"))
    }

    @Test("an integer sum that would trap in Swift throws, naming the property and its type")
    func overflowingSumThrows() throws {
        let store = try Store.inMemory(models: [Reading.self])
        try store.write { transaction in
            try transaction.add(Reading(id: 1, small: 100))
            try transaction.add(Reading(id: 2, small: 100))
        }
        let error = #expect(throws: QueryError.self) { try store.objects(Reading.self).sum(\.small) }
        #expect(error?.kind == .aggregateOverflow(typeName: "Reading", property: "small", type: "Int8"))
    }
}
