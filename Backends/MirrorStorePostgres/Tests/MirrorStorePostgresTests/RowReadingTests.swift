import Foundation
import MirrorStore
@testable import MirrorStorePostgres
import PostgresNIO
import Testing

extension ServerTests {
/// Rows become records as they arrive, with the SQL each table spells once: every way of reading
/// gives the models the record mapping gives, and a cell that does not read back is a typed
/// error naming the row, never a placeholder value.
@Suite("Reading rows")
struct RowReadingTests {
    /// The model the record mapping makes of `model`: what every read must give.
    static func mapped(_ model: Sample) throws -> Sample {
        let record = try model.managedObject()
        defer { record.releaseGraph() }
        return try Sample.modelInstance(managedObject: record)
    }

    @Test func everyReadGivesTheModelsTheRecordMappingGives() async throws {
        let store = try await emptyStore(models: [Sample.self], clearing: [Sample.self, Publisher.self])
        var random = SeededRandom(seed: 3_030)
        let samples = (1...60).map { RoundTripTests.sample($0, &random) }
        let expected = try samples.map(Self.mapped)
        #expect(expected == samples)
        try await store.write { try await $0.add(contentsOf: samples) }

        // Lookups bind one key (`= $1`); fetch-all and queries read many rows and their links together.
        for sample in expected {
            #expect(try await store.object(Sample.self, primaryKey: sample.id) == sample)
        }
        #expect(try await store.objects(Sample.self).all() == expected)
        let low = Int16(0)
        let inSQL = try store.objects(Sample.self).filter(#Predicate { $0.int16 < low })
        #expect(inSQL.plan.swiftPart == nil)
        #expect(try await inSQL.all() == expected.filter { $0.int16 < low })
        #expect(try await inSQL.count() == expected.filter { $0.int16 < low }.count)
        // Two filters, one decided in Swift: the conditions are numbered again together.
        let both = try inSQL.filter(#Predicate { $0.address.number >= 0 && $0.flag })
        #expect(both.plan.swiftPart != nil)
        #expect(try await both.all() == expected.filter { $0.int16 < low && $0.address.number >= 0 && $0.flag })
        let published = try store.objects(Sample.self).filter(#Predicate { $0.publisher?.identifier == 2 })
        #expect(try await published.all() == expected.filter { $0.publisher?.identifier == 2 })

        let read = try await store.write { transaction in
            try await transaction.object(Sample.self, primaryKey: expected[7].id)
        }
        #expect(read == expected[7])
        await store.close()
    }

    static func gauge(_ id: Int, _ random: inout SeededRandom) -> Gauge {
        Gauge(
            id: id, level: random.integer(), reading: random.chance(50) ? random.pick([0.5, -0.0, .infinity, -1e300]) : nil,
            label: random.string(), note: random.chance(50) ? random.string() : nil,
            at: Date(timeIntervalSinceReferenceDate: Double(random.integer(Int32.self)) + 0.123_456_789),
            serial: UUID(uuid: (random.integer(), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, random.integer())),
            amount: random.pick([Decimal(0), Decimal(string: "-12345678901234567890.5")!, Decimal(string: "1e-30")!]),
            big: random.integer(), checked: random.chance(50) ? random.chance(50) : nil)
    }

    @Test func modelsOfSingleValuesAreMadeStraightFromTheirRowsAsTheRecordMappingMakesThem() async throws {
        let store = try await emptyStore(models: [Gauge.self], clearing: [Gauge.self])
        var random = SeededRandom(seed: 3_031)
        let gauges = (1...80).map { Self.gauge($0, &random) }
        let mapped = try gauges.map { try Gauge.modelInstance(managedObject: try $0.managedObject()) }
        #expect(mapped == gauges)
        try await store.write { try await $0.add(contentsOf: gauges) }
        #expect(try await store.objects(Gauge.self).all() == mapped)
        for gauge in mapped.prefix(20) {
            #expect(try await store.object(Gauge.self, primaryKey: gauge.id) == gauge)
        }
        let level = mapped[5].level
        #expect(try await store.objects(Gauge.self).filter(#Predicate { $0.level == level }).all() == mapped.filter { $0.level == level })
        let labelled = try store.objects(Gauge.self).filter(#Predicate { $0.label.count > 2 })
        #expect(try await labelled.all() == mapped.filter { $0.label.count > 2 })
        #expect(try await store.write { try await $0.object(Gauge.self, primaryKey: 3) } == mapped[2])
        #expect(try await store.object(Gauge.self, primaryKey: 1_000) == nil)

        // Values that do not fit the model: typed errors naming the row, whichever path reads them.
        try await store.withConnection { connection in
            _ = try await connection.query(#"ALTER TABLE "Gauge" ALTER COLUMN "label" DROP NOT NULL"#, logger: PostgresStore.logger)
        }
        for (key, property, value) in [(2, "level", "1000"), (4, "label", "NULL")] {
            try await store.withConnection { connection in
                _ = try await connection.query(PostgresQuery(unsafeSQL: "UPDATE \"Gauge\" SET \"\(property)\" = \(value) WHERE \"id\" = \(key)"), logger: PostgresStore.logger)
            }
            let readers: [() async throws -> Void] = [
                { _ = try await store.object(Gauge.self, primaryKey: key) },
                { _ = try await store.objects(Gauge.self).all() },
                { _ = try await store.objects(Gauge.self).filter(#Predicate { $0.id == key }).all() },
            ]
            for reader in readers {
                let kind = await Self.failure(reader)
                guard case .corruptedRow(let typeName, let named, let reason) = kind else {
                    Issue.record("\(property): expected a corrupted row, got \(String(describing: kind))")
                    continue
                }
                #expect(typeName == "Gauge" && named == "\(key)", "\(property)")
                #expect(reason.contains(property), "\(reason)")
            }
            try await store.write { try await $0.add(mapped[key - 1]) }
        }
        try await store.withConnection { connection in
            _ = try await connection.query(#"DROP TABLE "Gauge""#, logger: PostgresStore.logger)
        }
        await store.close()
    }

    @Test func aModelOfMoreThanSingleValuesWithoutLinksIsMadeThroughARecordWithTheSameErrors() async throws {
        let store = try await emptyStore(models: [Item.self], clearing: [Item.self])
        let items = [Item(id: 1, n: 5, tags: ["a", "b"], mood: .calm, big: .max, d: Decimal(string: "0.5")!, nums: [1, -2]), Item(id: 2)]
        try await store.write { try await $0.add(contentsOf: items) }
        #expect(try await store.objects(Item.self).all() == items)
        #expect(try await store.object(Item.self, primaryKey: 1) == items[0])
        try await store.withConnection { connection in
            _ = try await connection.query(#"UPDATE "Item" SET "mood" = 'angry' WHERE "id" = 2"#, logger: PostgresStore.logger)
        }
        for reader: () async throws -> Void in [
            { _ = try await store.object(Item.self, primaryKey: 2) }, { _ = try await store.objects(Item.self).all() },
        ] {
            let kind = await Self.failure(reader)
            guard case .corruptedRow("Item", "2", let reason) = kind else {
                Issue.record("expected a corrupted row naming Item 2, got \(String(describing: kind))")
                continue
            }
            #expect(reason.contains("mood"), "\(reason)")
        }
        try await store.write { try await $0.deleteAll(Item.self) }
        await store.close()
    }

    /// Replaces a cell of `Sample` 1 by `value` (SQL text of the test's own), as damage would.
    static func damage(_ store: PostgresStore, column: String, value: String) async throws {
        try await store.withConnection { connection in
            _ = try await connection.query(PostgresQuery(unsafeSQL: "UPDATE \"Sample\" SET \"\(column)\" = \(value) WHERE \"id\" = 1"), logger: PostgresStore.logger)
        }
    }

    /// The kind of the `PostgresStoreError` `body` throws, or `nil` when it throws none.
    static func failure(_ body: () async throws -> Void) async -> PostgresStoreError.Kind? {
        do {
            try await body()
            return nil
        } catch let error as PostgresStoreError {
            return error.kind
        } catch {
            Issue.record("not a PostgresStoreError: \(error)")
            return nil
        }
    }

    @Test func aCellThatDoesNotReadBackIsATypedErrorNamingTheRow() async throws {
        let store = try await emptyStore(models: [Sample.self], clearing: [Sample.self, Publisher.self])
        var first = Sample(), second = Sample()
        first.id = 1
        second.id = 2
        try await store.write { try await $0.add(contentsOf: [first, second]) }
        let damages: [(column: String, value: String, reason: String)] = [
            ("uint64", "99999999999999999999", "uint64: 99999999999999999999 is not a numeric(20,0)"),
            ("int8", "1000", "int8"),
            ("address", #"'{"street": 5}'::jsonb"#, "address"),
            ("numbers", "'{1,NULL}'::bigint[]", "numbers"),
        ]
        for damage in damages {
            try await Self.damage(store, column: damage.column, value: damage.value)
            let readers: [() async throws -> Void] = [
                { _ = try await store.object(Sample.self, primaryKey: 1) },
                { _ = try await store.objects(Sample.self).all() },
                { _ = try await store.objects(Sample.self).filter(#Predicate { $0.id == 1 }).all() },
            ]
            for reader in readers {
                let kind = await Self.failure(reader)
                guard case .corruptedRow(let typeName, let key, let reason) = kind else {
                    Issue.record("\(damage.column): expected a corrupted row, got \(String(describing: kind))")
                    continue
                }
                #expect(typeName == "Sample" && key == "1", "\(damage.column)")
                #expect(reason.contains(damage.reason), "\(reason)")
            }
            // A row that does not read back fails the read, not the transaction, which goes on.
            try await store.write { transaction in
                let kind = await Self.failure { _ = try await transaction.object(Sample.self, primaryKey: 1) }
                #expect(kind.map { if case .corruptedRow = $0 { true } else { false } } == true)
                try await transaction.add(second)
            }
            #expect(try await store.object(Sample.self, primaryKey: 2) == second)
            try await store.write { try await $0.add(first) }
        }
        await store.close()
    }
}
}
