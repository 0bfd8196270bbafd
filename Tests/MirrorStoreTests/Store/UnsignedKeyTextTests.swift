import Foundation
@testable import MirrorStoreEngine
import Testing
import TestSupport
@testable import MirrorStore

/// Errors name the object of a `UInt64` primary key past `Int64.max` by its value
/// (`18446744073709551615`), not by the negative number its bits read as signed, on every route
/// that names one: queries that trap or meet damage, aggregates and projections, the stored enum
/// values, and a migration's missing link or duplicate key.
@Suite struct UnsignedKeyTextTests {
    static let top = "18446744073709551615"

    struct Gauge: Persistable, Equatable {
        var id: UInt64 = 0
        var reading = 0
        init() {}
        init(id: UInt64, reading: Int) {
            self.id = id
            self.reading = reading
        }
        static var primaryKey: String? { "id" }
    }

    /// A container before the property read: its conditions are tested on projected records,
    /// not on the bytes in place.
    struct TaggedGauge: Persistable, Equatable {
        var id: UInt64 = 0
        var tags: [String] = []
        var reading = 0
        init() {}
        static var primaryKey: String? { "id" }
    }

    enum Mode: String { case on, off }

    struct Dial: Persistable, Equatable {
        var id: UInt64 = 0
        var mode = Mode.on
        init() {}
        static var primaryKey: String? { "id" }
    }

    struct Target: Persistable, Equatable {
        var id: UInt64 = 0
        var name = ""
        init() {}
        init(id: UInt64) { self.id = id }
        static var primaryKey: String? { "id" }
    }

    struct Source: Persistable, Equatable {
        var id = 0
        var target: Target?
        init() {}
        init(id: Int, target: Target?) {
            self.id = id
            self.target = target
        }
        static var primaryKey: String? { "id" }
    }

    /// The key a `corruptedRecord` names, if that is what `error` is.
    static func corruptedKey(_ error: StoreError?) -> String? {
        guard case .corruptedRecord(_, let key, _)? = error?.kind else { return nil }
        return key
    }

    /// A `Gauge` record under `UInt64.max` whose reading is a string.
    static func craftGauge(at path: String) throws {
        try Store(path: path, models: [Gauge.self]).close()
        var writer = ByteWriter()
        writer.varint(2)
        writer.byte(3)
        writer.varint(ByteWriter.zigzag(-1))
        writer.byte(7)
        writer.lengthPrefixed("twelve")
        let engine = try StorageEngine(path: path)
        var batch = WriteBatch()
        batch.put(type: "Gauge", key: .integer(-1), value: writer.bytes)
        try engine.commit(batch)
        try engine.close()
    }

    @Test func aQueryThatTrapsNamesTheKeyAsItsValue() throws {
        try withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/traps.store", models: [Gauge.self, TaggedGauge.self])
            var tagged = TaggedGauge()
            tagged.id = .max
            tagged.tags = ["a"]
            tagged.reading = .max
            try store.write { transaction in
                try transaction.add(Gauge(id: .max, reading: .max))
                try transaction.add(tagged)
            }
            let inPlace = #expect(throws: QueryError.self) { try store.objects(Gauge.self).filter(#Predicate { $0.reading + 1 > 0 }).all() }
            let projected = #expect(throws: QueryError.self) { try store.objects(TaggedGauge.self).filter(#Predicate { $0.reading + 1 > 0 }).all() }
            for error in [inPlace, projected] {
                guard case .arithmeticTrap(_, let key, _, _)? = error?.kind else {
                    Issue.record("not an arithmetic trap: \(String(describing: error))")
                    continue
                }
                #expect(key == Self.top)
            }
            try store.close()
        }
    }

    @Test func damageMetByQueriesAggregatesAndProjectionsNamesTheKeyAsItsValue() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/gauges.store"
            try Self.craftGauge(at: path)
            let store = try Store(path: path, models: [Gauge.self])
            let gauges = try store.objects(Gauge.self)
            let errors = [
                #expect(throws: StoreError.self) { try gauges.filter(#Predicate { $0.reading > 0 }).all() },
                #expect(throws: StoreError.self) { try gauges.sum(\.reading) },
                #expect(throws: StoreError.self) { try gauges.max(\.reading) },
                #expect(throws: StoreError.self) { try gauges.values(\.reading) },
            ]
            for error in errors {
                #expect(Self.corruptedKey(error) == Self.top, "\(String(describing: error))")
            }
            try store.close()
        }
    }

    @Test func damageMetWhileRecordingEnumValuesNamesTheKeyAsItsValue() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/dials.store"
            let engine = try StorageEngine(path: path)
            var batch = WriteBatch()
            batch.put(type: "Dial", key: .integer(-1), value: [2, 0xFF])
            try engine.commit(batch)
            try engine.close()
            let error = #expect(throws: StoreError.self) { try Store(path: path, models: [Dial.self]) }
            #expect(Self.corruptedKey(error) == Self.top, "\(String(describing: error))")
        }
    }

    /// Version 1: a `Source` linking to the `Target` under `UInt64.max`, and a `Target` under 1.
    static func linkedStore(at path: String) throws {
        var configuration = Store.Configuration()
        configuration.schemaVersion = 1
        let store = try Store(path: path, models: [Source.self, Target.self], configuration: configuration)
        try store.write { transaction in
            try transaction.add(Source(id: 1, target: Target(id: .max)))
            try transaction.add(Target(id: 1))
        }
        try store.close()
    }

    static func versionTwo(_ migration: @escaping Store.Configuration.MigrationBlock) -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.schemaVersion = 2
        configuration.migration = migration
        return configuration
    }

    @Test func aMigrationsMissingLinkAndDuplicateKeyNameTheKeyAsItsValue() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/linked.store"
            try Self.linkedStore(at: path)
            // The linked target's key changes: the link finds nothing.
            let missing = #expect(throws: MigrationError.self) {
                try Store(path: path, models: [Source.self, Target.self], configuration: Self.versionTwo { migration, _ in
                    try migration.enumerateObjects(ofType: "Target") { old, new in
                        if old["id"] == .uint(.max) { try new.setValue(UInt64(5), forProperty: "id") }
                    }
                })
            }
            #expect(missing?.kind == .missingLinkTarget(typeName: "Target", key: Self.top, linkedFrom: "Source"))
            // Both targets take the key `UInt64.max`.
            let duplicate = #expect(throws: MigrationError.self) {
                try Store(path: path, models: [Source.self, Target.self], configuration: Self.versionTwo { migration, _ in
                    try migration.enumerateObjects(ofType: "Target") { _, new in try new.setValue(UInt64.max, forProperty: "id") }
                })
            }
            #expect(duplicate?.kind == .duplicatePrimaryKey(typeName: "Target", key: Self.top))
        }
    }
}
