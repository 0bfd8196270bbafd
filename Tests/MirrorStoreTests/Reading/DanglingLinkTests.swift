import Foundation
import MirrorStore
import TestSupport
import Testing

/// Links whose target was deleted, inside dictionaries: `[String: T]` cannot hold `nil`, so the
/// entry is left out, as an array of links leaves the element out; reading it as null made the
/// whole model unreadable (a `MappingError`), found while giving PostgreSQL the same answers.
@Suite struct DanglingLinkTests {
    struct Town: Persistable, Equatable {
        var id = 0
        var name = ""
        static var primaryKey: String? { "id" }
    }

    struct Directory: Persistable {
        var id = 0
        var towns: [String: Town] = [:]
        var maybe: [String: Town?] = [:]
        var nested: [String: [String: Town]] = [:]
        static var primaryKey: String? { "id" }
    }

    @Test("a dictionary entry whose link target was deleted is left out", arguments: [false, true])
    func dictionaryEntryLeftOut(inMemory: Bool) throws {
        let directory = TemporaryDirectory()
        let store = inMemory ? try Store.inMemory(models: [Directory.self]) : try Store(path: directory.path + "/store", models: [Directory.self])
        let oslo = Town(id: 1, name: "Oslo"), rome = Town(id: 2, name: "Rome")
        try store.write { transaction in
            try transaction.add(Directory(id: 1, towns: ["a": oslo, "b": rome], maybe: ["a": oslo, "b": rome], nested: ["x": ["a": oslo, "b": rome]]))
            _ = try transaction.delete(Town.self, primaryKey: 2)
        }
        let read = try #require(try store.object(Directory.self, primaryKey: 1))
        #expect(read.towns == ["a": oslo])
        #expect(read.maybe == ["a": oslo, "b": nil])
        #expect(read.nested == ["x": ["a": oslo]])
        #expect(try store.objects(Directory.self).all().map(\.towns) == [["a": oslo]])
    }

    @Test("queries count a dictionary of links as its model reads it", arguments: [false, true])
    func dictionaryCountedAsRead(inMemory: Bool) throws {
        let directory = TemporaryDirectory()
        let store = inMemory ? try Store.inMemory(models: [Directory.self]) : try Store(path: directory.path + "/store", models: [Directory.self])
        let oslo = Town(id: 1, name: "Oslo"), rome = Town(id: 2, name: "Rome")
        try store.write { transaction in
            try transaction.add(Directory(id: 1, towns: ["a": oslo, "b": rome], maybe: ["a": oslo, "b": rome]))
            _ = try transaction.delete(Town.self, primaryKey: 2)
        }
        #expect(try store.objects(Directory.self).filter(#Predicate { $0.towns.count == 1 }).count == 1)
        #expect(try store.objects(Directory.self).filter(#Predicate { $0.maybe.count == 2 }).count == 1)
    }
}
