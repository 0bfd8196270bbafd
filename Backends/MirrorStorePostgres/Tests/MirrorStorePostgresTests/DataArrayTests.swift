import Foundation
import MirrorStore
@testable import MirrorStorePostgres
import PostgresNIO
import Testing

/// Arrays and sets of `Data`: `blobs` indexed (GIN), `keys` unique (a side table), `maybe`
/// with `nil` elements, which stays `jsonb`.
struct DataBag: Persistable, Equatable {
    var id = 0
    var blobs: [Data] = []
    var keys: Set<Data> = []
    var maybe: [Data?] = []
    static var primaryKey: String? { "id" }
    static var indexedProperties: [String] { ["blobs"] }
    static var uniqueProperties: [String] { ["keys"] }
}

/// `Blobs` at version 1: `[Data]` in `bytea[]`; at version 2 `[Data?]`, in `jsonb`.
private struct BlobsOne: Persistable, Equatable {
    var id = 0
    var parts: [Data] = []
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "Blobs" }
}

private struct BlobsTwo: Persistable, Equatable {
    var id = 0
    var parts: [Data?] = []
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "Blobs" }
}

extension ServerTests {
@Suite("Arrays of Data")
struct DataArrayTests {
    /// Longer than the 57 bytes `encode(…, 'base64')` puts on one line.
    private static let long = Data((0..<200).map { UInt8($0 % 251) })

    private static let bags = [
        DataBag(id: 1, blobs: [Data(), Data([0, 255, 1]), long, Data([0, 255, 1])], keys: [Data([1]), Data([2])], maybe: [Data([9]), nil]),
        DataBag(id: 2, blobs: [], keys: [Data([3]), long], maybe: []),
        DataBag(id: 3, blobs: [Data([7])], keys: [], maybe: [nil]),
    ]

    /// The SQL types of `DataBag`'s columns and of the element column of `keys`' side table.
    private func types(in store: PostgresStore) async throws -> [String: String] {
        let table = try store.mapping.table(for: DataBag.self)
        let side = try #require(table.uniqueElements.first { $0.property == "keys" }).sideTable
        return try await store.withConnection { connection in
            var types: [String: String] = [:]
            let rows = try await connection.query(PostgresQuery(unsafeSQL: """
                SELECT attname::text, format_type(atttypid, atttypmod) FROM pg_attribute
                WHERE attrelid = to_regclass('"DataBag"') AND attnum > 0 AND NOT attisdropped
                UNION ALL
                SELECT 'side ' || attname::text, format_type(atttypid, atttypmod) FROM pg_attribute
                WHERE attrelid = to_regclass('\(side)') AND attname = 'element'
                """), logger: PostgresStore.logger).collect()
            for row in rows {
                let (name, type) = try row.decode((String, String).self)
                types[name] = type
            }
            return types
        }
    }

    /// Stored natively, read back as written, `contains` in SQL, `keys` unique across objects.
    @Test func arraysOfDataAreNativeAndKeepTheirAnswers() async throws {
        let store = try await emptyStore(models: [DataBag.self], clearing: [DataBag.self])
        try await store.write { transaction in
            for bag in Self.bags { try await transaction.add(bag) }
        }
        let types = try await types(in: store)
        #expect(types["blobs"] == "bytea[]")
        #expect(types["keys"] == "bytea[]")
        #expect(types["maybe"] == "jsonb")
        #expect(types["side element"] == "bytea")
        try await expectAnswers(of: store)
        await store.close()
    }

    /// A table an earlier version wrote, with `[Data]` and `Set<Data>` as `jsonb` arrays of
    /// base64 text and the unique side table keeping that text, is converted when it opens and
    /// reads back the same; a later open finds nothing to convert.
    @Test func aTableWrittenWithJSONArraysIsConvertedWhenItOpens() async throws {
        let store = try await emptyStore(models: [DataBag.self], clearing: [DataBag.self])
        try await store.write { transaction in
            for bag in Self.bags { try await transaction.add(bag) }
        }
        // Back to the old mapping: the columns as jsonb, no GIN index, the side table of base64 text.
        let table = try store.mapping.table(for: DataBag.self)
        try await store.withConnection { connection in
            var statements = DataArrayConversion.functionStatements
            for index in table.indexes where index.property == "blobs" || index.property == "keys" {
                statements.append("DROP INDEX IF EXISTS \(SQL.identifier(index.name))")
            }
            for unique in table.uniqueElements {
                statements += UniqueElements.dropStatements(trigger: unique.triggerName, table: table.table)
            }
            for name in ["blobs", "keys"] {
                let column = SQL.identifier(name)
                statements.append("ALTER TABLE \(table.table) ALTER COLUMN \(column) TYPE jsonb USING \(DataArrayConversion.usingJSON(column))")
            }
            let keys = try #require(table.column(named: "keys"))
            let old = ColumnMapping(property: "keys", position: keys.position, kind: keys.kind, storage: .json, isNullable: false, isPrimaryKey: false)
            let unique = try #require(UniqueElements(column: old, typeName: "DataBag", table: table.table, primaryKey: table.primaryKey))
            statements += unique.createStatements + unique.triggerStatements
            for statement in statements {
                _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: PostgresStore.logger)
            }
            // As the jsonb encoding spells them.
            let rows = try await connection.query(#"SELECT blobs::text FROM "DataBag" WHERE id = 1"#, logger: PostgresStore.logger).collect()
            let text = try #require(try rows.first?.decode(String.self))
            #expect(text == "[\"\", \"AP8B\", \"\(Self.long.base64EncodedString())\", \"AP8B\"]")
        }
        var types = try await types(in: store)
        #expect(types["blobs"] == "jsonb")
        #expect(types["side element"] == "text")
        await store.close()

        let settings = try #require(serverSettings)
        let reopened = try await PostgresStore.open(settings, models: [DataBag.self])
        types = try await self.types(in: reopened)
        #expect(types["blobs"] == "bytea[]")
        #expect(types["keys"] == "bytea[]")
        #expect(types["maybe"] == "jsonb")
        #expect(types["side element"] == "bytea")
        try await expectAnswers(of: reopened)
        await reopened.close()

        let again = try await PostgresStore.open(settings, models: [DataBag.self])
        try await expectAnswers(of: again)
        await again.close()
    }

    /// A migration moves `[Data]` to `[Data?]` (`bytea[]` to `jsonb`) and back, without a
    /// block, as the file store converts it; a `nil` element refuses the way back, naming it.
    @Test func aMigrationMovesArraysOfDataBetweenByteaAndJSON() async throws {
        let settings = try #require(serverSettings)
        try await dropTables(["Blobs"])
        let long = Self.long
        let one = try await PostgresStore.open(settings, models: [BlobsOne.self], schemaVersion: 1)
        try await one.write { transaction in
            try await transaction.add(BlobsOne(id: 1, parts: [Data(), long, Data([1])]))
            try await transaction.add(BlobsOne(id: 2, parts: []))
        }
        await one.close()
        let two = try await PostgresStore.open(settings, models: [BlobsTwo.self], schemaVersion: 2)
        #expect(try await two.objects(BlobsTwo.self).all() == [BlobsTwo(id: 1, parts: [Data(), long, Data([1])]), BlobsTwo(id: 2, parts: [])])
        try await two.write { try await $0.add(BlobsTwo(id: 3, parts: [nil])) }
        await two.close()
        await #expect(throws: PostgresStoreError.self) {
            _ = try await PostgresStore.open(settings, models: [BlobsOne.self], schemaVersion: 3)
        }
        let still = try await PostgresStore.open(settings, models: [BlobsTwo.self], schemaVersion: 2)
        try await still.write { try await $0.delete(BlobsTwo.self, primaryKey: 3) }
        await still.close()
        let three = try await PostgresStore.open(settings, models: [BlobsOne.self], schemaVersion: 3)
        #expect(try await three.objects(BlobsOne.self).all() == [BlobsOne(id: 1, parts: [Data(), long, Data([1])]), BlobsOne(id: 2, parts: [])])
        let wanted = Data([1])
        #expect(try await three.objects(BlobsOne.self).filter(#Predicate { $0.parts.contains(wanted) }).all().map(\.id) == [1])
        await three.close()
    }

    /// What every check of the mapping reads: the bags as written, `contains` decided in SQL,
    /// and a key shared by two bags refused, naming it as the file store does.
    private func expectAnswers(of store: PostgresStore) async throws {
        let all = try await store.objects(DataBag.self).all()
        #expect(all == Self.bags)
        let wanted = Data([0, 255, 1])
        let containing = try store.objects(DataBag.self).filter(#Predicate { $0.blobs.contains(wanted) })
        #expect(containing.plan.swiftPart == nil)
        #expect(try await containing.all().map(\.id) == [1])
        let long = Self.long
        let keyed = try store.objects(DataBag.self).filter(#Predicate { $0.keys.contains(long) })
        #expect(keyed.plan.swiftPart == nil)
        #expect(try await keyed.all().map(\.id) == [2])
        let empty = try store.objects(DataBag.self).filter(#Predicate { $0.blobs.isEmpty })
        #expect(try await empty.all().map(\.id) == [2])
        await #expect(throws: StoreError.self) {
            try await store.write { try await $0.add(DataBag(id: 4, keys: [Data([2])])) }
        }
        #expect(try await store.object(DataBag.self, primaryKey: 4) == nil)
        // The key is free once its owner lets it go.
        try await store.write { transaction in
            try await transaction.add(DataBag(id: 1, blobs: Self.bags[0].blobs, keys: [Data([1])], maybe: Self.bags[0].maybe))
            try await transaction.add(DataBag(id: 4, keys: [Data([2])]))
        }
        try await store.write { transaction in
            try await transaction.delete(DataBag.self, primaryKey: 4)
            try await transaction.add(Self.bags[0])
        }
        #expect(try await store.objects(DataBag.self).all() == Self.bags)
    }
}
}
