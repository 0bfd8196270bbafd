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
    @Test("A stored object the model cannot hold is reported when results are made, not by a read")
    func undecodableRecordIsReportedWhenResultsAreMade() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/moods.store"
            let store = try Store(path: path, models: [MoodyBefore.self])
            try store.write { transaction in
                try transaction.add(MoodyBefore(identifier: 1, mood: .calm))
                try transaction.add(MoodyBefore(identifier: 2, mood: .furious))
            }
            try store.close()

            let reopened = try Store(path: path, models: [MoodyAfter.self])
            #expect(throws: (any Error).self) { try reopened.objects(MoodyAfter.self) }
            #expect(throws: (any Error).self) { try reopened.object(MoodyAfter.self, primaryKey: 2) }
            #expect(try reopened.object(MoodyAfter.self, primaryKey: 1)?.mood == .calm)

            // Once the record the model cannot hold is gone, results are made and read normally.
            try reopened.write { try $0.delete(MoodyAfter.self, primaryKey: 2) }
            let results = try reopened.objects(MoodyAfter.self)
            #expect(results.map(\.identifier) == [1])
            try reopened.close()
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
