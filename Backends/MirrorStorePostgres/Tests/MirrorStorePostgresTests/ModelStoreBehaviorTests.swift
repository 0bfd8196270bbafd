// The behaviour suite every `ModelStore` shares (MirrorStore's Sources/MirrorStoreBehaviorSuite),
// on PostgreSQL; MirrorStore's tests run it on the file and in-memory stores.
import Foundation
import MirrorStore
import MirrorStoreBehaviorSuite
@testable import MirrorStorePostgres
import PostgresNIO
import Testing

/// Drops the tables and metadata of `models` and the models they link to, so that a store
/// opened with them starts from nothing.
private func dropTables(of models: [any Persistable.Type], on settings: PostgresSettings) async throws {
    let typeNames = try BackendModels(models: models).types.map(\.schema.typeName)
    let store = try await PostgresStore.open(settings, models: [Item.self])
    do {
        try await store.withConnection { connection in
            for name in typeNames {
                try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE IF EXISTS \(SQL.identifier(name)) CASCADE"), logger: PostgresStore.logger)
                try await connection.query("DELETE FROM mirrorstore_metadata WHERE type_name = \(name)", logger: PostgresStore.logger)
            }
        }
    } catch {
        await store.close()
        throw error
    }
    await store.close()
}

extension ServerTests {
@Suite("ModelStore behaviour")
struct ModelStoreBehaviorTests {
    /// Every place is the test database: a store that starts empty drops its models' tables first.
    @Test(arguments: BehaviorCheck.cases(reopens: true))
    func postgres(_ check: BehaviorCheck) async throws {
        let settings = try #require(serverSettings)
        try await ModelStoreBehavior(reopens: true) { opening in
            if opening.startsEmpty { try await dropTables(of: opening.models + opening.alsoEmptied, on: settings) }
            let migration = opening.migration.map { block -> PostgresMigrationBlock in { try block($0, $1) } }
            return try await PostgresStore.open(settings, models: opening.models, schemaVersion: opening.schemaVersion, migration: migration)
        }.run(check)
    }
}
}
