import Foundation
import MirrorStore
import MirrorStorePostgres
import Testing

/// Version 1 of `Kinds`: integers of one width and sign.
private struct KindsOne: Persistable, Equatable {
    var id = 0
    var count = 0
    var score: Int?
    var small: UInt8 = 0
    var nums: [Int] = []
    var tags: [String] = []
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "Kinds" }
}

/// Version 2: other widths and signs, arrays become sets; every stored value fits.
private struct KindsTwo: Persistable, Equatable {
    var id = 0
    var count: Int8 = 0
    var score: UInt?
    var small = 0
    var nums: Set<Int16> = []
    var tags: Set<String> = []
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "Kinds" }
}

/// Version 3: `count` unsigned, which -4 does not fit.
private struct KindsThree: Persistable, Equatable {
    var id = 0
    var count: UInt8 = 0
    var score: UInt?
    var small = 0
    var nums: Set<Int16> = []
    var tags: Set<String> = []
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "Kinds" }
}

/// Version 3 otherwise: `small` a string, which no automatic rule converts.
private struct KindsText: Persistable, Equatable {
    var id = 0
    var count: Int8 = 0
    var score: UInt?
    var small = ""
    var nums: Set<Int16> = []
    var tags: Set<String> = []
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "Kinds" }
}

/// Version 1 of `Bags`: integers inside `jsonb` (a dictionary, an array of unsigned integers,
/// an array of optionals).
private struct BagsOne: Persistable, Equatable {
    var id = 0
    var counts: [String: Int32] = [:]
    var smalls: [UInt16] = []
    var maybe: [Int?] = []
    var labels: [String: Int] = [:]
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "Bags" }
}

/// Version 2: other widths and signs inside the `jsonb`, an array become a set; every value fits.
private struct BagsTwo: Persistable, Equatable {
    var id = 0
    var counts: [String: Int8] = [:]
    var smalls: Set<UInt8> = []
    var maybe: [Int16?] = []
    var labels: [String: Int] = [:]
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "Bags" }
}

/// Version 2 otherwise: `counts` unsigned, which -5 does not fit.
private struct BagsUnsigned: Persistable, Equatable {
    var id = 0
    var counts: [String: UInt8] = [:]
    var smalls: Set<UInt8> = []
    var maybe: [Int16?] = []
    var labels: [String: Int] = [:]
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "Bags" }
}

/// Version 2 otherwise: `counts` of strings, which no automatic rule converts.
private struct BagsText: Persistable, Equatable {
    var id = 0
    var counts: [String: String] = [:]
    var smalls: Set<UInt8> = []
    var maybe: [Int16?] = []
    var labels: [String: Int] = [:]
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "Bags" }
}

/// Version 1 of `Rows`: a native array of signed integers, jsonb arrays of unsigned ones.
private struct RowsOne: Persistable, Equatable {
    var id = 0
    var nums: [Int] = []
    var wide: [UInt8] = []
    var opt: [Int] = []
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "Rows" }
}

/// Version 2: each array moves between a native array and jsonb (`[Int]` to `[UInt]`, `[UInt8]`
/// to `Set<Int16>`, `[Int]` to `[Int32?]`).
private struct RowsTwo: Persistable, Equatable {
    var id = 0
    var nums: [UInt] = []
    var wide: Set<Int16> = []
    var opt: [Int32?] = []
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "Rows" }
}

extension ServerTests {
@Suite("Automatic kind changes")
struct KindChangeTests {
    @Test func arraysMoveBetweenNativeArraysAndJSONBAsInTheFileStore() async throws {
        let settings = try #require(serverSettings)
        try await dropTables(["Rows"])
        let rows = [RowsOne(id: 1, nums: [1, 2], wide: [3, 250], opt: [7]), RowsOne(id: 2), RowsOne(id: 3, nums: [-1])]
        let one = try await PostgresStore.open(settings, models: [RowsOne.self], schemaVersion: 1)
        try await one.write { try await $0.add(contentsOf: rows) }
        await one.close()
        let directory = try Self.fileStore(models: [RowsOne.self], rows)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/rows.store"

        // -1 is no UInt: refused in both stores, naming it.
        await #expect(throws: PostgresStoreError(.migrationFailed(
            typeName: "Rows",
            reason: "nums holds -1 in the object with key 3, which [UInt] cannot hold; convert it in migration.enumerateObjects(ofType: \"Rows\")"))) {
            _ = try await PostgresStore.open(settings, models: [RowsTwo.self], schemaVersion: 2)
        }
        #expect {
            _ = try Self.openFile(path, [RowsTwo.self], version: 2)
        } throws: { error in
            guard case .valueDoesNotFit("Rows", "nums", _, "[UInt]")? = (error as? MigrationError)?.kind else { return false }
            return true
        }
        let again = try await PostgresStore.open(settings, models: [RowsOne.self], schemaVersion: 1)
        try await again.write { _ = try await $0.delete(RowsOne.self, primaryKey: 3) }
        await again.close()
        try Self.deleteInFile(path, RowsOne.self, primaryKey: 3)

        let two = try await PostgresStore.open(settings, models: [RowsTwo.self], schemaVersion: 2)
        let migrated = try await two.objects(RowsTwo.self).all()
        // The columns take new rows of the new kinds.
        try await two.write { try await $0.add(RowsTwo(id: 4, nums: [UInt.max], wide: [-3], opt: [nil, 5])) }
        #expect(try await two.object(RowsTwo.self, primaryKey: 4) == RowsTwo(id: 4, nums: [UInt.max], wide: [-3], opt: [nil, 5]))
        await two.close()
        let file = try Self.openFile(path, [RowsTwo.self], version: 2)
        let inFile = try file.objects(RowsTwo.self).all()
        try file.close()
        #expect(migrated == [RowsTwo(id: 1, nums: [1, 2], wide: [3, 250], opt: [7]), RowsTwo(id: 2)])
        #expect(migrated == inFile)
    }

    /// A file store in a new directory holding `rows` at version 1; returns the directory.
    private static func fileStore<Model: Persistable>(models: [any Persistable.Type], _ rows: [Model]) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rows-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = try openFile(directory.path + "/rows.store", models, version: 1)
        try store.write { try $0.add(contentsOf: rows) }
        try store.close()
        return directory.path
    }

    private static func deleteInFile<Model: Persistable>(_ path: String, _ type: Model.Type, primaryKey: Int) throws {
        let store = try openFile(path, [type], version: 1)
        try store.write { _ = try $0.delete(type, primaryKey: primaryKey) }
        try store.close()
    }

    private static let bags = [
        BagsOne(id: 1, counts: ["a": 100, "b": -5], smalls: [1, 200, 200], maybe: [1, nil, 300], labels: ["x": 1]),
        BagsOne(id: 2),
    ]

    /// The enumeration that converts `counts` to strings, in either store.
    private static func countsAsText(_ migration: any ModelMigration, _ oldSchemaVersion: Int) throws {
        try migration.enumerateObjects(ofType: "Bags") { old, new in
            guard case .dictionary(let counts)? = old["counts"] else { return }
            try new.setValue(.dictionary(counts.mapValues { value -> RecordValue in
                guard case .int(let number) = value else { return .string("not an integer: \(value)") }
                return .string("#\(number)")
            }), forProperty: "counts")
        }
    }

    @Test func integersInsideJSONBConvertWithoutABlockAsInTheFileStore() async throws {
        let settings = try #require(serverSettings)
        try await dropTables(["Bags"])
        let one = try await PostgresStore.open(settings, models: [BagsOne.self], schemaVersion: 1)
        try await one.write { try await $0.add(contentsOf: Self.bags) }
        await one.close()
        let path = try Self.fileStore(with: Self.bags)
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }

        // A value that does not fit refuses the migration, naming it, in both stores.
        await #expect(throws: PostgresStoreError(.migrationFailed(
            typeName: "Bags",
            reason: "counts holds -5 in the object with key 1, which [String: UInt8] cannot hold; convert it in migration.enumerateObjects(ofType: \"Bags\")"))) {
            _ = try await PostgresStore.open(settings, models: [BagsUnsigned.self], schemaVersion: 2)
        }
        #expect {
            _ = try Self.openFile(path, [BagsUnsigned.self], version: 2)
        } throws: { error in
            guard case .valueDoesNotFit("Bags", "counts", _, "[String: UInt8]")? = (error as? MigrationError)?.kind else { return false }
            return true
        }
        // A change no rule converts is refused without a block, in both stores.
        await #expect(throws: PostgresStoreError(.migrationFailed(
            typeName: "Bags",
            reason: "counts is stored as [String: Int32] and the model needs [String: String]; convert it in migration.enumerateObjects(ofType: \"Bags\")"))) {
            _ = try await PostgresStore.open(settings, models: [BagsText.self], schemaVersion: 2)
        }
        #expect {
            _ = try Self.openFile(path, [BagsText.self], version: 2)
        } throws: { error in
            (error as? MigrationError)?.kind == .needsConversion(typeName: "Bags", property: "counts", from: "[String: Int32]", to: "[String: String]")
        }
        let unchanged = try await PostgresStore.open(settings, models: [BagsOne.self], schemaVersion: 1)
        #expect(try await unchanged.objects(BagsOne.self).all() == Self.bags)
        await unchanged.close()

        let two = try await PostgresStore.open(settings, models: [BagsTwo.self], schemaVersion: 2)
        let migrated = try await two.objects(BagsTwo.self).all()
        await two.close()
        let fileTwo = try Self.openFile(path, [BagsTwo.self], version: 2)
        let inFile = try fileTwo.objects(BagsTwo.self).all()
        try fileTwo.close()
        #expect(migrated == [
            BagsTwo(id: 1, counts: ["a": 100, "b": -5], smalls: [1, 200], maybe: [1, nil, 300], labels: ["x": 1]),
            BagsTwo(id: 2),
        ])
        #expect(migrated == inFile)

        // With an enumeration, a change no rule makes is converted from `old`, which reads the
        // jsonb with its stored kind, in both stores alike.
        let three = try await PostgresStore.open(settings, models: [BagsText.self], schemaVersion: 3) { migration, version in
            try Self.countsAsText(migration, version)
        }
        let converted = try await three.objects(BagsText.self).all()
        await three.close()
        var configuration = Store.Configuration()
        configuration.schemaVersion = 3
        configuration.migration = { migration, version in try Self.countsAsText(migration, version) }
        let fileThree = try Store(path: path, models: [BagsText.self], configuration: configuration)
        let convertedInFile = try fileThree.objects(BagsText.self).all()
        try fileThree.close()
        #expect(converted.first?.counts == ["a": "#100", "b": "#-5"])
        #expect(converted == convertedInFile)
    }

    private static let people = [
        KindsOne(id: 1, count: 100, score: 5, small: 200, nums: [1, 2, 2, -300], tags: ["a", "b"]),
        KindsOne(id: 2, count: -4, score: nil, small: 0, nums: [], tags: []),
    ]

    /// A file store in a new directory holding `bags`, to compare with.
    private static func fileStore(with bags: [BagsOne]) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bags-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("bags.store").path
        let store = try openFile(path, [BagsOne.self], version: 1)
        try store.write { try $0.add(contentsOf: bags) }
        try store.close()
        return path
    }

    /// A file store in a new directory, with the same objects, to compare with.
    private static func fileStore() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kinds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("kinds.store").path
        var configuration = Store.Configuration()
        configuration.schemaVersion = 1
        let store = try Store(path: path, models: [KindsOne.self], configuration: configuration)
        try store.write { try $0.add(contentsOf: people) }
        try store.close()
        return path
    }

    private static func openFile(_ path: String, _ models: [any Persistable.Type], version: Int) throws -> Store {
        var configuration = Store.Configuration()
        configuration.schemaVersion = version
        return try Store(path: path, models: models, configuration: configuration)
    }

    @Test func integerWidthsSignsAndSetsConvertWithoutABlockAsInTheFileStore() async throws {
        let settings = try #require(serverSettings)
        try await dropTables(["Kinds"])
        let one = try await PostgresStore.open(settings, models: [KindsOne.self], schemaVersion: 1)
        try await one.write { try await $0.add(contentsOf: Self.people) }
        await one.close()
        let path = try Self.fileStore()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }

        // A value that does not fit refuses the migration, naming it, in both stores; nothing changes.
        await #expect(throws: PostgresStoreError(.migrationFailed(
            typeName: "Kinds",
            reason: "count holds -4 in the object with key 2, which UInt8 cannot hold; convert it in migration.enumerateObjects(ofType: \"Kinds\")"))) {
            _ = try await PostgresStore.open(settings, models: [KindsThree.self], schemaVersion: 2)
        }
        #expect(throws: MigrationError.self) { _ = try Self.openFile(path, [KindsThree.self], version: 2) }
        // A change no rule converts is refused without a block.
        await #expect(throws: PostgresStoreError.self) { _ = try await PostgresStore.open(settings, models: [KindsText.self], schemaVersion: 2) }
        #expect(throws: MigrationError.self) { _ = try Self.openFile(path, [KindsText.self], version: 2) }

        let two = try await PostgresStore.open(settings, models: [KindsTwo.self], schemaVersion: 2)
        let migrated = try await two.objects(KindsTwo.self).all()
        await two.close()
        let file = try Self.openFile(path, [KindsTwo.self], version: 2)
        let inFile = try file.objects(KindsTwo.self).all()
        try file.close()
        #expect(migrated == [
            KindsTwo(id: 1, count: 100, score: 5, small: 200, nums: [1, 2, -300], tags: ["a", "b"]),
            KindsTwo(id: 2, count: -4, score: nil, small: 0, nums: [], tags: []),
        ])
        #expect(migrated == inFile)

        // The converted columns take the new kinds' values, and queries read them.
        let again = try await PostgresStore.open(settings, models: [KindsTwo.self], schemaVersion: 2)
        try await again.write { try await $0.add(KindsTwo(id: 3, count: 7, score: UInt.max, small: -1, nums: [Int16.max], tags: ["c"])) }
        let greatest: UInt? = UInt.max
        #expect(try await again.objects(KindsTwo.self).filter(#Predicate { $0.score == greatest }).all().map(\.id) == [3])
        #expect(try await again.objects(KindsTwo.self).filter(#Predicate { $0.small < 0 }).all().map(\.id) == [3])
        await again.close()
    }

    @Test func anArrayElementThatDoesNotFitRefusesTheMigration() async throws {
        let settings = try #require(serverSettings)
        try await dropTables(["Kinds"])
        let one = try await PostgresStore.open(settings, models: [KindsOne.self], schemaVersion: 1)
        try await one.write { try await $0.add(KindsOne(id: 1, nums: [1, 40_000])) }
        await one.close()
        await #expect(throws: PostgresStoreError(.migrationFailed(
            typeName: "Kinds",
            reason: "nums holds 40000 in the object with key 1, which Set<Int16> cannot hold; convert it in migration.enumerateObjects(ofType: \"Kinds\")"))) {
            _ = try await PostgresStore.open(settings, models: [KindsTwo.self], schemaVersion: 2)
        }
        let unchanged = try await PostgresStore.open(settings, models: [KindsOne.self], schemaVersion: 1)
        #expect(try await unchanged.object(KindsOne.self, primaryKey: 1)?.nums == [1, 40_000])
        await unchanged.close()
    }
}
}
