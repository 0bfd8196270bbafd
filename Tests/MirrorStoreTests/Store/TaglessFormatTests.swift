import Foundation
@testable import MirrorStoreEngine
import Testing
import TestSupport
@testable import MirrorStore

/// The format step of tagless records (format 5): a new file writes them; a file of format 4
/// keeps its tagged records and goes on writing tagged ones, all read as before; its compaction
/// makes it format 5 with the records copied as they are, after which new records are tagless;
/// a migration rewrites every record tagless.
@Suite struct TaglessFormatTests {
    struct Meter: Persistable, Equatable {
        var id = 0
        var name = ""
        var reading: Int16 = 0
        var valid = false
        var level = 0.0
        static var primaryKey: String? { "id" }
    }

    static func meter(_ id: Int) -> Meter {
        Meter(id: id, name: "meter \(id)", reading: Int16(id % 300 - 150), valid: id % 3 == 0, level: Double(id) / 4)
    }

    static func configuration(version: Int) -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.schemaVersion = version
        configuration.migration = { _, _ in }
        return configuration
    }

    /// Per stored key, whether its record is tagless.
    static func forms(_ store: Store) throws -> [Int64: Bool] {
        let snapshot = store.observation.engine.snapshot()
        var forms: [Int64: Bool] = [:]
        for key in try snapshot.keys(type: "Meter") {
            guard case .integer(let number) = key else { continue }
            let bytes = try #require(try snapshot.value(type: "Meter", key: key))
            forms[number] = bytes.first == TaglessLayout.marker
        }
        return forms
    }

    static func checkAll(_ store: Store, _ ids: ClosedRange<Int>) throws {
        #expect(try store.objects(Meter.self).sorted(using: SortDescriptor(\.id)).map { $0 } == ids.map(Self.meter))
        for id in [ids.lowerBound, ids.upperBound] { #expect(try store.object(Meter.self, primaryKey: id) == Self.meter(id)) }
        #expect(try store.objects(Meter.self).filter(#Predicate { $0.valid && $0.reading > 0 }).count
            == ids.filter { Self.meter($0).valid && Self.meter($0).reading > 0 }.count)
        #expect(try store.objects(Meter.self).sum(\.level) == ids.map { Self.meter($0).level }.reduce(0, +))
    }

    @Test("a new file holds tagless records; a format-4 file keeps tagged ones until compaction and migration rewrite it")
    func formatSteps() throws {
        try withTemporaryDirectory { directory in
            let fresh = directory + "/fresh.store"
            let store = try Store(path: fresh, models: [Meter.self])
            try store.write { try $0.add(contentsOf: (1...50).map(Self.meter)) }
            #expect(store.statistics.formatVersion == LogHeader.currentVersion)
            #expect(try Self.forms(store).values.allSatisfy { $0 })
            try store.close()
            let reopened = try Store(path: fresh, models: [Meter.self])
            try Self.checkAll(reopened, 1...50)
            try reopened.close()

            // A file of format 4 (its creation interrupted after the header, as format 4 wrote it).
            let older = directory + "/older.store"
            try Data(LogHeader(version: 4).encoded()).write(to: URL(fileURLWithPath: older))
            var four = try Store(path: older, models: [Meter.self], configuration: Self.configuration(version: 1))
            try four.write { try $0.add(contentsOf: (1...40).map(Self.meter)) }
            #expect(four.statistics.formatVersion == 4)
            #expect(try Self.forms(four).values.allSatisfy { !$0 })
            try Self.checkAll(four, 1...40)
            try four.close()
            four = try Store(path: older, models: [Meter.self], configuration: Self.configuration(version: 1))
            try four.write { try $0.add(contentsOf: (41...60).map(Self.meter)) }
            #expect(four.statistics.formatVersion == 4)
            #expect(try Self.forms(four).values.allSatisfy { !$0 })
            try Self.checkAll(four, 1...60)

            // Compaction makes it of the current format, copying the tagged records; new ones are tagless.
            try four.compact()
            #expect(four.statistics.formatVersion == LogHeader.currentVersion)
            try four.close()
            var five = try Store(path: older, models: [Meter.self], configuration: Self.configuration(version: 1))
            try five.write { try $0.add(contentsOf: (61...80).map(Self.meter)) }
            let forms = try Self.forms(five)
            #expect((1...60).allSatisfy { forms[Int64($0)] == false } && (61...80).allSatisfy { forms[Int64($0)] == true })
            try Self.checkAll(five, 1...80)
            try five.close()

            // A migration rewrites every record tagless.
            five = try Store(path: older, models: [Meter.self], configuration: Self.configuration(version: 2))
            #expect(try Self.forms(five).count == 80 && Self.forms(five).values.allSatisfy { $0 })
            try Self.checkAll(five, 1...80)
            try five.close()
        }
    }
}
