import Foundation
import Testing
import TestSupport
@testable import MirrorStore
import MirrorStoreEngine

/// `values(_:)` read from an index alone (`StoredColumn.valuesFromIndex`) against the models'
/// properties: results sorted by an indexed property and filtered by a range of it, on random
/// data with nil, extreme and repeated values, fresh (the index in memory) and reopened after a
/// compaction (in persisted runs). Also that the index way is taken exactly where it can be.
@Suite struct IndexOnlyValuesTests {
    struct Gauge: Persistable {
        var id = 0
        var count = 0
        var tiny: Int8?
        var big: UInt64 = 0
        var on = false
        var when: Date?
        var name = ""
        var level = 0.0
        static var primaryKey: String? { "id" }
        static var indexedProperties: [String] { ["count", "tiny", "big", "on", "when", "name", "level"] }
    }

    static let seed = SeededRandom.seed(default: 0x290_0011)

    static func gauges(count: Int) -> [Gauge] {
        var random = SeededRandom(seed: seed)
        return (1...count).map { id in
            Gauge(
                id: id,
                count: random.chance(70) ? Int.random(in: -20...20, using: &random) : random.integer(Int.self),
                tiny: random.chance(30) ? nil : random.integer(Int8.self),
                big: random.chance(50) ? UInt64.random(in: 0...5, using: &random) : random.integer(UInt64.self),
                on: random.chance(50),
                when: random.chance(30) ? nil : Date(timeIntervalSinceReferenceDate: Double(Int.random(in: -5...5, using: &random)) / 4),
                name: random.pick(["b", "a", "É", "E\u{301}", ""]),
                level: random.pick([0.0, -0.0, 1.5]))
        }
    }

    @Test("values read from an index equal the models' properties, sorted by it and filtered by a range of it")
    func equalsTheModels() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("gauges.store")
        let all = Self.gauges(count: 400)
        do {
            let store = try Store(path: path, models: [Gauge.self])
            try store.write { transaction in for gauge in all { try transaction.add(gauge) } }
            try check(store, context: "fresh")
            try store.compact()
            try store.close()
        }
        let store = try Store(path: path, models: [Gauge.self])
        try check(store, context: "reopened")
        try store.close()
    }

    private func check(_ store: Store, context: String) throws {
        let every = try store.objects(Gauge.self)
        func expectEqual<Value: RecordPrimitive & Equatable>(
            _ results: Results<Gauge>, _ property: KeyPath<Gauge, Value>, fromIndex: Bool, _ label: String
        ) throws {
            let models = try results.all()
            #expect(try results.values(property) == models.map { $0[keyPath: property] }, "\(context), \(label)")
            let column = try StoredColumn(property, of: results)
            let read: [(Value?, StorageKey)]? = try column.valuesFromIndex(of: results)
            #expect((read != nil) == fromIndex, "\(context), \(label): read from the index \(read != nil), expected \(fromIndex)")
        }
        for ascending in [true, false] {
            let order: SortOrder = ascending ? .forward : .reverse
            try expectEqual(try every.sorted(using: SortDescriptor(\.count, order: order)), \.count, fromIndex: true, "sorted by count, \(order)")
            try expectEqual(try every.sorted(using: SortDescriptor(\.big, order: order)), \.big, fromIndex: true, "sorted by big, \(order)")
            try expectEqual(try every.sorted(byProperty: "on", ascending: ascending), \.on, fromIndex: true, "sorted by on, \(order)")
            try expectEqual(try every.sorted(using: SortDescriptor(\.tiny, order: order)), \.tiny, fromIndex: true, "sorted by tiny, \(order)")
            try expectEqual(try every.sorted(using: SortDescriptor(\.when, order: order)), \.when, fromIndex: true, "sorted by when, \(order)")
            // Read from the records: an NFC key is not the string as written, nor -0.0 a 0.0.
            try expectEqual(try every.sorted(using: SortDescriptor(\.name, order: order)), \.name, fromIndex: false, "sorted by name, \(order)")
            try expectEqual(try every.sorted(using: SortDescriptor(\.level, order: order)), \.level, fromIndex: false, "sorted by level, \(order)")
        }
        try expectEqual(try every.filter(#Predicate { $0.count >= -5 && $0.count < 7 }), \.count, fromIndex: true, "count in a range")
        try expectEqual(try every.filter(#Predicate { $0.count == 3 }), \.count, fromIndex: true, "count equal to 3")
        try expectEqual(try every.filter(#Predicate { $0.big > 2 }), \.big, fromIndex: true, "big above 2")
        try expectEqual(try every.filter(#Predicate { $0.on == true }), \.on, fromIndex: true, "on equal to true")
        try expectEqual(try every.filter(#Predicate { $0.on }), \.on, fromIndex: true, "on, on its own")
        try expectEqual(try every.filter(#Predicate { !$0.on }), \.on, fromIndex: true, "not on")
        // Another property's range, or every object in key order: read from the records.
        try expectEqual(try every.filter(#Predicate { $0.count > 0 }), \.big, fromIndex: false, "big where count is positive")
        try expectEqual(every, \.count, fromIndex: false, "every object")
        try expectEqual(try every.filter(#Predicate { $0.id > 100 }), \.count, fromIndex: false, "a primary-key range")
    }
}
