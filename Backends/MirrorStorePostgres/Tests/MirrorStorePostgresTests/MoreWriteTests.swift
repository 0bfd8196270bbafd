import Foundation
import MirrorStore
import MirrorStorePostgres
import Testing

extension ServerTests {
@Suite("Updates, deletes by predicate, schemas and concurrency")
struct MoreWriteTests {
    @Test func updateChangesTheStoredModel() async throws {
        let store = try await emptyStore(models: [Item.self], clearing: [Item.self])
        try await store.write { try await $0.add(Item(id: 1, n: 1)) }
        let updated = try await store.write { transaction in
            try await transaction.update(Item.self, primaryKey: 1) { $0.n = 42 }
        }
        let missing = try await store.write { transaction in
            try await transaction.update(Item.self, primaryKey: 2) { $0.n = 42 }
        }
        #expect(updated?.n == 42 && missing == nil)
        #expect(try await store.object(Item.self, primaryKey: 1)?.n == 42)
        await store.close()
    }

    @Test func deleteWhereDeletesWhatThePredicateHoldsFor() async throws {
        let store = try await emptyStore(models: [Item.self], clearing: [Item.self])
        var random = SeededRandom(seed: 5)
        let items = (1...60).map { Item(id: $0, n: Int.random(in: 0...9, using: &random), s: random.string()) }
        try await store.write { try await $0.add(contentsOf: items) }
        let prefix = "E"
        // One exact (SQL alone), one that Swift decides.
        let exact = try await store.write { try await $0.delete(Item.self, where: #Predicate { $0.n < 3 }) }
        let partial = try await store.write { try await $0.delete(Item.self, where: #Predicate { $0.n > 6 && $0.s.starts(with: prefix) }) }
        let kept = items.filter { !($0.n < 3) && !($0.n > 6 && $0.s.starts(with: prefix)) }
        #expect(exact == items.filter { $0.n < 3 }.count)
        #expect(partial == items.filter { $0.n > 6 && $0.s.starts(with: prefix) }.count)
        #expect(try await store.objects(Item.self).all() == kept)
        await store.close()
    }

    @Test func aChangedModelIsRefusedUntilMigrationsExist() async throws {
        let settings = try #require(serverSettings)
        let first = try await PostgresStore.open(settings, models: [VersionedOne.self], schemaVersion: 2)
        await first.close()
        await #expect {
            _ = try await PostgresStore.open(settings, models: [VersionedTwo.self], schemaVersion: 2)
        } throws: { error in
            guard let error = error as? StoreError, case .schemaChanged(let version, let differences) = error.kind else { return false }
            return version == 2 && differences.count == 1 && differences[0].hasPrefix("Versioned is stored as Versioned(id: Int, name: String)")
        }
        await #expect(throws: StoreError(.newerSchemaVersion(stored: 2, configured: 1))) {
            _ = try await PostgresStore.open(settings, models: [VersionedOne.self], schemaVersion: 1)
        }
        let again = try await PostgresStore.open(settings, models: [VersionedOne.self], schemaVersion: 2)
        await again.close()
    }

    @Test func indexesFollowTheModelsOnEveryOpen() async throws {
        let settings = try #require(serverSettings)
        let plain = try await emptyStore(models: [Reindexed.self], clearing: [Reindexed.self])
        try await plain.write { try await $0.add(Reindexed(id: 1, name: "same")) }
        await plain.close()
        // A unique property added to a stored type: built at open, then enforced.
        let unique = try await PostgresStore.open(settings, models: [ReindexedUnique.self])
        await #expect(throws: StoreError(.uniqueViolation(typeName: "Reindexed", property: "name", value: "\"same\""))) {
            try await unique.write { try await $0.add(ReindexedUnique(id: 2, name: "same")) }
        }
        await unique.close()
        // And dropped when the model no longer asks for it.
        let again = try await PostgresStore.open(settings, models: [Reindexed.self])
        try await again.write { try await $0.add(Reindexed(id: 2, name: "same")) }
        #expect(try await again.objects(Reindexed.self).count() == 2)
        await again.close()
    }

    @Test func concurrentWritersLoseNothing() async throws {
        let store = try await emptyStore(models: [Item.self], clearing: [Item.self])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<6 {
                group.addTask {
                    for transaction in 0..<20 {
                        try await store.write { t in
                            try await t.add(Item(id: writer * 1000 + transaction, n: writer))
                            try await t.add(Item(id: writer * 1000 + transaction + 500, n: writer))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await store.objects(Item.self).count() == 6 * 20 * 2)
        await store.close()
    }

    @Test func callsAfterCloseFailWithATypedError() async throws {
        let store = try await emptyStore(models: [Item.self], clearing: [Item.self])
        await store.close()
        await #expect(throws: PostgresStoreError(.closed)) {
            _ = try await store.objects(Item.self).all()
        }
        await #expect(throws: PostgresStoreError(.closed)) {
            try await store.write { try await $0.add(Item(id: 1)) }
        }
    }

    @MainActor @Test func theAPIIsUsableFromAnActor() async throws {
        let store = try await emptyStore(models: [Sample.self], clearing: [Sample.self, Publisher.self])
        var sample = Sample()
        sample.id = 7
        sample.publisher = Publisher(identifier: 9, name: "Main")
        try await store.write { try await $0.add(sample) }
        let read = try await store.objects(Sample.self).filter(#Predicate { $0.id == 7 }).all()
        #expect(read == [sample])
        await store.close()
    }
}
}
