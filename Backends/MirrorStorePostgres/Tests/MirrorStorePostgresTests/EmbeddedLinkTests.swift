// Links inside jsonb, as PostgreSQL keeps them (the behaviour suite checks
// what every store answers; these check how this one stores it).
import Foundation
import MirrorStore
@testable import MirrorStorePostgres
import PostgresNIO
import Testing

extension ServerTests {
@Suite("Links inside jsonb, unique arrays")
struct EmbeddedLinkTests {
    @Test func aDictionaryOfLinksKeepsTheTargetsKeysInItsJSONB() async throws {
        let store = try await emptyStore(models: [Shelf.self], clearing: [Shelf.self, Publisher.self])
        let shelf = Shelf(id: 1, publishers: ["a": Publisher(identifier: 1, name: "Ace"), "b": Publisher(identifier: 2, name: "Bee")])
        try await store.write { try await $0.add(shelf) }
        let text = try await store.withConnection { connection in
            try await connection.query("SELECT publishers::text FROM \"Shelf\" WHERE id = 1", logger: PostgresStore.logger)
                .collect().first?.decode(String.self)
        }
        #expect(text == #"{"a": "1", "b": "2"}"#)
        #expect(try await store.object(Shelf.self, primaryKey: 1) == shelf)
        #expect(try await store.object(Publisher.self, primaryKey: 2)?.name == "Bee")
        await store.close()
    }
}
}
