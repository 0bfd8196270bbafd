import Foundation
import Testing
@_spi(Testing) import MirrorStore

/// A raw-value enum whose cases Swift lists: `.rawValue` on it is recognised.
enum GaugeLevel: String, CaseIterable, Codable, Sendable {
    case low, high, elan = "e\u{301}lan"

    /// Not the raw value: read from the enum made from the stored raw value.
    var title: String { rawValue.uppercased() }
}

/// An `Int` raw-value enum without a list of cases.
enum GaugeSize: Int, Codable, Sendable {
    case small = 1, medium = 2, large = 30

    var isBig: Bool { self == .large }
}

final class Gauge: Persistable {
    var identifier = 0
    var level = GaugeLevel.low
    var indexedLevel = GaugeLevel.low
    var maybe: GaugeLevel?
    var size = GaugeSize.small
    init() {}
    static var primaryKey: String? { "identifier" }
    static var indexedProperties: [String] { ["indexedLevel"] }
}

/// `.rawValue` of an enum property is answered from the stored raw value: on the stored bytes
/// and indexes when the enum lists its cases, on records otherwise; other properties of an enum
/// on records, from the enum made from the stored raw value.
@Suite("Enum raw values in predicates")
struct EnumRawValueTests {
    static func world() throws -> (Store, [Gauge]) {
        let levels = GaugeLevel.allCases, sizes: [GaugeSize] = [.small, .medium, .large]
        let gauges = (1...120).map { identifier in
            let gauge = Gauge()
            gauge.identifier = identifier
            gauge.level = levels[identifier % levels.count]
            gauge.indexedLevel = levels[(identifier / 3) % levels.count]
            gauge.maybe = identifier % 4 == 0 ? nil : levels[(identifier / 2) % levels.count]
            gauge.size = sizes[(identifier / 5) % sizes.count]
            return gauge
        }
        let store = try Store.inMemory(models: [Gauge.self])
        try store.write { try $0.add(contentsOf: gauges) }
        return (store, gauges)
    }

    static func check(
        _ store: Store, _ gauges: [Gauge], _ predicate: Predicate<Gauge>, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> QueryPlan {
        let results = try store.objects(Gauge.self).filter(predicate)
        let expected = try gauges.filter { try predicate.evaluate($0) }.map(\.identifier)
        #expect(results.map(\.identifier) == expected, "plan: \(results.plan)", sourceLocation: sourceLocation)
        #expect(!expected.isEmpty, sourceLocation: sourceLocation)
        return results.plan
    }

    @Test("`.rawValue` of a CaseIterable enum is the stored value: byte tests and indexes read it")
    func listedCases() throws {
        let (store, gauges) = try Self.world()
        let high = try Self.check(store, gauges, #Predicate { $0.level.rawValue == "high" })
        #expect(high.filter == .storedBytes)
        let decomposed = try Self.check(store, gauges, #Predicate { $0.level.rawValue == "\u{E9}lan" })
        #expect(decomposed.filter == .storedBytes)
        let ordered = try Self.check(store, gauges, #Predicate { $0.level.rawValue < "i" && $0.level.rawValue != "" })
        #expect(ordered.filter == .storedBytes)
        let indexed = try Self.check(store, gauges, #Predicate { $0.indexedLevel.rawValue == "low" })
        #expect(indexed.access == .index(name: "Gauge.indexedLevel", range: "== \"low\""))
        #expect(indexed.filter == .none)
        let optional = try Self.check(store, gauges, #Predicate { $0.maybe?.rawValue == "high" })
        #expect(optional.filter == .records)
        let prefixed = try Self.check(store, gauges, #Predicate { $0.indexedLevel.rawValue.starts(with: "h") })
        #expect(prefixed.indexName == "Gauge.indexedLevel")
    }

    @Test("Other key paths on an enum, and `.rawValue` of one without a list of cases, are read on records")
    func otherKeyPaths() throws {
        let (store, gauges) = try Self.world()
        let title = try Self.check(store, gauges, #Predicate { $0.level.title == "HIGH" })
        #expect(title.filter == .records)
        let size = try Self.check(store, gauges, #Predicate { $0.size.rawValue > 1 })
        #expect(size.filter == .records)
        let big = try Self.check(store, gauges, #Predicate { $0.size.isBig || $0.maybe?.title == "LOW" })
        #expect(big.filter == .records)
    }
}
