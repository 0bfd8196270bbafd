import Foundation
import Testing
import TestSupport
import MirrorStore

/// A mood with a case the next version of the app drops.
enum MoodBefore: String { case calm, furious }
/// The same mood without the dropped case.
enum MoodAfter: String { case calm }

/// A model stored with every mood.
struct MoodyBefore: Persistable {
    var identifier = 0
    var mood = MoodBefore.calm
    static var primaryKey: String? { "identifier" }
    static var persistedTypeName: String { "Moody" }
}

/// The same model in a version that can no longer hold one of the stored moods.
struct MoodyAfter: Persistable {
    var identifier = 0
    var mood = MoodAfter.calm
    static var primaryKey: String? { "identifier" }
    static var persistedTypeName: String { "Moody" }
}

@Suite("Reading results")
struct ResultsReadingTests {
    @Test("A stored raw value the model's enum lost is reported when the store opens, not by a read")
    func lostEnumCaseIsReportedOnOpen() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/moods.store"
            let store = try Store(path: path, models: [MoodyBefore.self])
            try store.write { transaction in
                try transaction.add(MoodyBefore(identifier: 1, mood: .calm))
                try transaction.add(MoodyBefore(identifier: 2, mood: .furious))
            }
            try store.close()

            let error = #expect(throws: StoreError.self) { try Store(path: path, models: [MoodyAfter.self]) }
            #expect(error?.kind == .unknownEnumValue(property: "Moody.mood", enumType: "MoodAfter", rawValue: "\"furious\""))
            // The app that wrote it still opens it, and a migration that maps the value opens it
            // with the new enum.
            try Store(path: path, models: [MoodyBefore.self]).close()
            var configuration = Store.Configuration()
            configuration.schemaVersion = 2
            configuration.migration = { migration, _ in
                try migration.enumerateObjects(ofType: "Moody") { _, new in
                    if new["mood"] == .string("furious") { try new.setValue(.string("calm"), forProperty: "mood") }
                }
            }
            let migrated = try Store(path: path, models: [MoodyAfter.self], configuration: configuration)
            #expect(try migrated.objects(MoodyAfter.self).map(\.mood) == [.calm, .calm])
            try migrated.close()
        }
    }

    @Test("A position outside the results is a typed error from the throwing accessor")
    func positionOutsideResultsThrows() throws {
        let store = try Store.inMemory(models: [MoodyBefore.self])
        try store.write { try $0.add(MoodyBefore(identifier: 1)) }
        let results = try store.objects(MoodyBefore.self)
        #expect(try results.object(at: 0).identifier == 1)
        #expect(throws: StoreError.self) { try results.object(at: 1) }
        #expect(throws: StoreError.self) { try results.object(at: -1) }
    }

    @Test("A position outside the results traps, as an array's does, rather than make up a model")
    func subscriptOutsideResultsTraps() async {
        await #expect(processExitsWith: .failure) {
            let store = try Store.inMemory(models: [MoodyBefore.self])
            let results = try store.objects(MoodyBefore.self)
            _ = results[5]
        }
        await #expect(processExitsWith: .failure) {
            let store = try Store.inMemory(models: [MoodyBefore.self])
            try store.write { try $0.add(MoodyBefore(identifier: 1)) }
            _ = try store.objects(MoodyBefore.self)[1]
        }
    }
}
