// Links inside jsonb and unique arrays, as PostgreSQL keeps them (the behaviour suite checks
// what every store answers; these check how this one stores it).
import Foundation
import MirrorStore
import MirrorStoreBehaviorSuite
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

    @Test func linksInsideJSONBAreReadWithOneQueryPerTargetType() async throws {
        let store = try await emptyStore(models: [Shelf.self], clearing: [Shelf.self, Publisher.self])
        try await store.write { transaction in
            for id in 1...20 {
                try await transaction.add(Shelf(id: id, publishers: [
                    "a": Publisher(identifier: id % 5, name: "P\(id % 5)"), "b": Publisher(identifier: 100 + id, name: "Q"),
                ]))
            }
        }
        let mapping = store.mapping
        let (shelves, statements) = try await store.withConnection { connection in
            let reader = RowReader(connection: connection, mapping: mapping)
            let records = try await reader.records(
                table: try mapping.table(named: "Shelf"), condition: nil, parameters: SQLParameters(), orderBy: "\"id\"", limit: nil)
            let shelves = try records.map { try reader.model(Shelf.self, from: $0) }
            return (shelves.map { $0.publishers.mapValues(\.identifier) }, reader.statementCount)
        }
        #expect(shelves.count == 20)
        #expect(shelves.last == ["a": 0, "b": 120])
        // The shelves, then every publisher they link to in one `key = ANY($1)`.
        #expect(statements == 2)
        await store.close()
    }

    @Test func aQueryThroughALinkInsideJSONBIsDecidedInSwift() async throws {
        let store = try await emptyStore(models: [Route.self], clearing: [Route.self, Publisher.self])
        let ace = Publisher(identifier: 1, name: "Ace"), bee = Publisher(identifier: 2, name: "Bee")
        try await store.write { transaction in
            try await transaction.add(Route(id: 1, stop: Stop(name: "a", publisher: ace)))
            try await transaction.add(Route(id: 2, stop: Stop(name: "b", publisher: bee)))
            try await transaction.add(Route(id: 3, stop: Stop(name: "c")))
        }
        let results = try store.objects(Route.self).filter(#Predicate { $0.id > 1 && $0.stop.publisher?.name == "Bee" })
        #expect(results.plan.sqlPart == "\"id\" > $1")
        #expect(results.plan.swiftPart != nil)
        #expect(try await results.all().map(\.id) == [2])
        _ = try await store.write { try await $0.delete(Publisher.self, primaryKey: 2) }
        #expect(try await store.objects(Route.self).filter(#Predicate { $0.stop.publisher == nil }).all().map(\.id) == [2, 3])
        await store.close()
    }

    @Test func anObserverOfAModelSeesAChangeOfAModelItLinksToFromInsideJSONB() async throws {
        let observer = try await emptyStore(models: [Shelf.self], clearing: [Shelf.self, Publisher.self])
        let writer = try await PostgresStore.open(try #require(serverSettings), models: [Shelf.self])
        try await observer.write { try await $0.add(Shelf(id: 1, publishers: ["a": Publisher(identifier: 1, name: "Ace")])) }
        let sequence = try observer.changes(Shelf.self, primaryKey: 1)
        let seen = try await within(10, "the changes of a shelf") {
            var iterator = sequence.makeAsyncIterator()
            var seen: [Shelf?] = []
            seen.append(try #require(try await iterator.next()))
            try await writer.write { try await $0.add(Publisher(identifier: 1, name: "Acme")) }
            seen.append(try #require(try await iterator.next()))
            return seen
        }
        #expect(seen.map { $0?.publishers["a"]?.name } == ["Ace", "Acme"])
        await writer.close()
        await observer.close()
    }

    @Test func oneTagWrittenByTwoStoresAtOnceIsRefusedToTheSecond() async throws {
        let settings = try #require(serverSettings)
        let first = try await emptyStore(models: [UniqueTags.self], clearing: [UniqueTags.self])
        let second = try await PostgresStore.open(settings, models: [UniqueTags.self])
        // Each block holds its transaction open past the other's insert: the unique index makes
        // the later one wait for the first commit, then refuses it.
        func add(_ id: Int, on store: PostgresStore) -> Task<Bool, any Error> {
            Task {
                do {
                    try await store.write { transaction in
                        try await transaction.add(UniqueTags(id: id, tags: ["shared", "own\(id)"]))
                        try await Task.sleep(for: .milliseconds(300))
                    }
                    return true
                } catch let error as StoreError {
                    guard case .uniqueViolation("UniqueTags", "tags", "\"shared\"") = error.kind else { throw error }
                    return false
                }
            }
        }
        let results = try await [within(20, "the first writer", task: add(1, on: first)), within(20, "the second writer", task: add(2, on: second))]
        #expect(results.filter { $0 }.count == 1)
        #expect(try await first.objects(UniqueTags.self).all().count == 1)
        await first.close()
        await second.close()
    }

    /// Random blocks of adds, updates and deletes of badges whose arrays and sets are unique, on
    /// PostgreSQL and the file store's in-memory store: the same blocks are refused, the same
    /// badges remain.
    @Test func uniqueArraysMatchTheFileStoreOnRandomWrites() async throws {
        let store = try await emptyStore(models: [BehaviorBadge.self], clearing: [BehaviorBadge.self])
        let memory = try Store.inMemory(models: [BehaviorBadge.self])
        var random = SeededRandom(seed: 3031)
        let names = ["caf\u{E9}", "cafe\u{301}", "tea", "T", "t"]
        // The file store's own write, which runs the block here.
        func inMemory(_ body: (WriteTransaction) throws -> Void) throws { try memory.write(body) }
        func isViolation(_ error: any Error) -> Bool {
            if let error = error as? StoreError, case .uniqueViolation = error.kind { return true }
            return false
        }
        for step in 0..<60 {
            var operations: [(kind: Int, badge: BehaviorBadge)] = []
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let badge = BehaviorBadge(
                    id: Int.random(in: 1...6, using: &random),
                    codes: (0..<Int.random(in: 0...3, using: &random)).map { _ in Int.random(in: 0...12, using: &random) },
                    names: Set((0..<Int.random(in: 0...2, using: &random)).map { _ in random.pick(names) }),
                    slots: (0..<Int.random(in: 0...2, using: &random)).map { _ in random.chance(40) ? nil : Int.random(in: 0...9, using: &random) })
                operations.append((Int.random(in: 0..<4, using: &random), badge))
            }
            let onServer: String, inFileStore: String
            do {
                try await store.write { transaction in
                    for (kind, badge) in operations {
                        switch kind {
                        case 0: _ = try await transaction.delete(BehaviorBadge.self, primaryKey: badge.id)
                        case 1: try await transaction.update(BehaviorBadge.self, primaryKey: badge.id) { $0.codes = badge.codes }
                        default: try await transaction.add(badge)
                        }
                    }
                }
                onServer = "written"
            } catch where isViolation(error) {
                onServer = "refused"
            }
            do {
                try inMemory { transaction in
                    for (kind, badge) in operations {
                        switch kind {
                        case 0: _ = try transaction.delete(BehaviorBadge.self, primaryKey: badge.id)
                        case 1: try transaction.update(BehaviorBadge.self, primaryKey: badge.id) { $0.codes = badge.codes }
                        default: try transaction.add(badge)
                        }
                    }
                }
                inFileStore = "written"
            } catch where isViolation(error) {
                inFileStore = "refused"
            }
            #expect(onServer == inFileStore, "step \(step): \(operations.map { "\($0.kind) \($0.badge)" })")
            #expect(try await store.objects(BehaviorBadge.self).all() == memory.objects(BehaviorBadge.self).all(), "badges after step \(step)")
        }
        await store.close()
    }

    @Test func storedDuplicatesRefuseAUniqueArrayAtOpen() async throws {
        let settings = try #require(serverSettings)
        let plain = try await emptyStore(models: [PlainTags.self], clearing: [PlainTags.self])
        try await plain.write { transaction in
            try await transaction.add(PlainTags(id: 1, tags: ["x"]))
            try await transaction.add(PlainTags(id: 2, tags: ["x"]))
        }
        await plain.close()
        await #expect {
            _ = try await PostgresStore.open(settings, models: [UniqueTags.self])
        } throws: { error in
            guard let error = error as? StoreError, case .uniqueViolation("UniqueTags", "tags", "\"x\"") = error.kind else { return false }
            return true
        }
        let cleared = try await emptyStore(models: [PlainTags.self], clearing: [PlainTags.self])
        await cleared.close()
        // Once the duplicates are gone, the side table is made and filled from the rows.
        let unique = try await emptyStore(models: [UniqueTags.self], clearing: [])
        try await unique.write { try await $0.add(UniqueTags(id: 1, tags: ["y"])) }
        await #expect(throws: StoreError.self) {
            try await unique.write { try await $0.add(UniqueTags(id: 2, tags: ["y"])) }
        }
        await unique.close()
    }
}
}

/// `UniqueTags`' table without the uniqueness.
struct PlainTags: Persistable, Equatable {
    var id = 0
    var tags: [String] = []
    static var primaryKey: String? { "id" }
    static var persistedTypeName: String { "UniqueTags" }
}
