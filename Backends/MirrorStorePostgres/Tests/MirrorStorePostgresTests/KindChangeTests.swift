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

extension ServerTests {
@Suite("Automatic kind changes")
struct KindChangeTests {
    private static let people = [
        KindsOne(id: 1, count: 100, score: 5, small: 200, nums: [1, 2, 2, -300], tags: ["a", "b"]),
        KindsOne(id: 2, count: -4, score: nil, small: 0, nums: [], tags: []),
    ]

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
