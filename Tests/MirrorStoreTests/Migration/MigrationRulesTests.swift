import Foundation
import Testing
import MirrorStore
import MirrorStoreBehaviorSuite
import TestSupport

// Each automatic rule and each migration operation, from a version-1 file to version 2.

enum Before {
    struct Item: Persistable {
        var identifier = 0
        var title = ""
        var count: Int32 = 0
        var score: Int?
        var tags: [String] = []
        var legacy = ""
        var tag = ""
        var size = 0
        var place = Place()
        init() {}
        static var primaryKey: String? { "identifier" }
        static var persistedTypeName: String { "Item" }
    }

    struct Place: Persistable {
        var city = ""
        init() {}
        static var persistedTypeName: String { "Place" }
    }

    struct Client: Persistable {
        var identifier = 0
        var name = ""
        init() {}
        static var primaryKey: String? { "identifier" }
        static var persistedTypeName: String { "Client" }
    }

    struct Order: Persistable {
        var identifier = 0
        var customer: Client?
        init() {}
        static var primaryKey: String? { "identifier" }
        static var persistedTypeName: String { "Order" }
    }

    struct Log: Persistable {
        var line = ""
        init() {}
        static var persistedTypeName: String { "Log" }
    }
}

enum After {
    /// Every automatic rule at once: `title` made optional, `count` widened, `score` no longer
    /// optional (its default is 7), `tags` an array become a set, `legacy` removed, `added`
    /// added, the embedded `place` gaining a property. `tag` and `size` change kind.
    struct Item: Persistable {
        var identifier = 0
        var title: String?
        var count: Int64 = 0
        var score = 7
        var tags: Set<String> = []
        var added = "fresh"
        var tag: [String] = []
        var size = ""
        var place = Place()
        init() {}
        static var primaryKey: String? { "identifier" }
        static var persistedTypeName: String { "Item" }
    }

    struct Place: Persistable {
        var city = ""
        var country = "unknown"
        init() {}
        static var persistedTypeName: String { "Place" }
    }

    /// `Client`, renamed.
    struct Customer: Persistable {
        var identifier = 0
        var name = ""
        init() {}
        static var primaryKey: String? { "identifier" }
        static var persistedTypeName: String { "Customer" }
    }

    struct Order: Persistable {
        var identifier = 0
        var customer: Customer?
        init() {}
        static var primaryKey: String? { "identifier" }
        static var persistedTypeName: String { "Order" }
    }

    struct Log: Persistable {
        var line = ""
        init() {}
        static var persistedTypeName: String { "Log" }
    }

    /// The same item, narrowed: a stored count of 300 does not fit.
    struct NarrowItem: Persistable {
        var identifier = 0
        var count: Int8 = 0
        init() {}
        static var primaryKey: String? { "identifier" }
        static var persistedTypeName: String { "Item" }
    }
}

/// A version-1 file holding two items, two clients, one order and two log lines.
private func versionOne(in directory: String) throws -> String {
    let path = directory + "/rules.store"
    var configuration = Store.Configuration()
    configuration.schemaVersion = 1
    let store = try Store(path: path, models: [Before.Item.self, Before.Order.self, Before.Log.self], configuration: configuration)
    try store.write { transaction in
        for identifier in 1...2 {
            var item = Before.Item()
            item.identifier = identifier
            item.title = "item \(identifier)"
            item.count = identifier == 1 ? 300 : -4
            item.score = identifier == 1 ? 5 : nil
            item.tags = ["b", "a", "b"]
            item.legacy = "gone"
            item.tag = "t\(identifier)"
            item.size = identifier * 10
            item.place.city = "Paris"
            try transaction.add(item)
        }
        var client = Before.Client()
        client.identifier = 7
        client.name = "Ada"
        var order = Before.Order()
        order.identifier = 70
        order.customer = client
        try transaction.add(order)
        client.identifier = 8
        client.name = "Alan"
        try transaction.add(client)
        var log = Before.Log()
        log.line = "one"
        try transaction.add(log)
        log.line = "two"
        try transaction.add(log)
    }
    try store.close()
    return path
}

private func versionTwo(_ migration: Store.Configuration.MigrationBlock?) -> Store.Configuration {
    var configuration = Store.Configuration()
    configuration.schemaVersion = 2
    configuration.migration = migration
    return configuration
}

/// The conversions the automatic rules cannot make, written as a block: `tag` into a
/// one-element array, `size` from `Int` to `String`, and the rename of `Client`.
private let conversions: Store.Configuration.MigrationBlock = { migration, _ in
    try migration.renameType(from: "Client", to: "Customer")
    try migration.enumerateObjects(ofType: "Item") { old, new in
        let tag: String = try old.value(forProperty: "tag")
        try new.setValue(.list([.string(tag)]), forProperty: "tag")
        let size: Int = try old.value(forProperty: "size")
        try new.setValue("\(size) cm", forProperty: "size")
    }
}

@Suite("Migration rules")
struct MigrationRulesTests {
    @Test("The automatic rules, with the block for the rest, after reopen")
    func automaticRules() throws {
        try withTemporaryDirectory { directory in
            let path = try versionOne(in: directory)
            try Store(path: path, models: [After.Item.self, After.Order.self], configuration: versionTwo(conversions)).close()
            let store = try Store(path: path, models: [After.Item.self, After.Order.self], configuration: versionTwo(nil))
            let items = try store.objects(After.Item.self).all()
            #expect(items.map(\.title) == ["item 1", "item 2"])
            #expect(items.map(\.count) == [300, -4])
            #expect(items.map(\.score) == [5, 7])
            #expect(items.map(\.tags) == [["a", "b"], ["a", "b"]])
            #expect(items.map(\.added) == ["fresh", "fresh"])
            #expect(items.map(\.tag) == [["t1"], ["t2"]])
            #expect(items.map(\.size) == ["10 cm", "20 cm"])
            #expect(items.map(\.place.city) == ["Paris", "Paris"])
            #expect(items.map(\.place.country) == ["unknown", "unknown"])
            // The renamed type keeps its objects and the links to them.
            #expect(try store.objects(After.Customer.self).map(\.name) == ["Ada", "Alan"])
            #expect(try store.object(After.Order.self, primaryKey: 70)?.customer?.name == "Ada")
            try store.close()
            let inspector = try StoreInspector(path: path)
            #expect(inspector.schema(of: "Item")?.property(named: "legacy") == nil)
            #expect(inspector.typeNames == ["Customer", "Item", "Log", "Order", "Place"] || inspector.typeNames == ["Customer", "Item", "Log", "Order"])
        }
    }

    @Test("A kind change without a block converting it is refused, naming it")
    func needsConversion() throws {
        try withTemporaryDirectory { directory in
            let path = try versionOne(in: directory)
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let error = #expect(throws: MigrationError.self) {
                try Store(path: path, models: [After.Item.self], configuration: versionTwo(nil))
            }
            #expect(error?.kind == .needsConversion(typeName: "Item", property: "tag", from: "String", to: "[String]"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        }
    }

    @Test("A model type renamed without renameType is refused, saying how to rename it, the outer and the inner one")
    func typeNotRenamed() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/deliveries.store"
            var one = Store.Configuration()
            one.schemaVersion = 1
            let store = try Store(path: path, models: [BehaviorDeliveryOne.self], configuration: one)
            try store.write { try $0.add(BehaviorDeliveryOne(id: 1, main: BehaviorBoxOne(label: "a", weight: 5, lid: "red"))) }
            try store.close()
            let outer = #expect(throws: MigrationError.self) {
                try Store(path: path, models: [BehaviorDeliveryTwo.self], configuration: versionTwo(nil))
            }
            #expect(outer?.kind == .typeNotRenamed(
                typeName: "BehaviorDelivery", property: "main", from: "BehaviorBox", to: "BehaviorCrate", storedType: "BehaviorBox", modelType: "BehaviorCrate"))
            #expect(outer?.description == """
                BehaviorDelivery.main changed from BehaviorBox to BehaviorCrate, which no automatic rule converts: if BehaviorBox was renamed \
                BehaviorCrate, say so with migration.renameType(from: "BehaviorBox", to: "BehaviorCrate"); otherwise convert it in \
                migration.enumerateObjects(ofType: "BehaviorDelivery"); the store is unchanged.
                """)
            let inner = #expect(throws: MigrationError.self) {
                try Store(path: path, models: [BehaviorDeliveryTwo.self], configuration: versionTwo { migration, _ in
                    try migration.renameType(from: "BehaviorBox", to: "BehaviorCrate")
                })
            }
            #expect(inner?.kind == .typeNotRenamed(
                typeName: "BehaviorCrate", property: "lid", from: "BehaviorLid", to: "BehaviorCap", storedType: "BehaviorLid", modelType: "BehaviorCap"))
            let renamed = try Store(path: path, models: [BehaviorDeliveryTwo.self], configuration: versionTwo { migration, _ in
                try migration.renameType(from: "BehaviorBox", to: "BehaviorCrate")
                try migration.renameType(from: "BehaviorLid", to: "BehaviorCap")
            })
            #expect(try renamed.object(BehaviorDeliveryTwo.self, primaryKey: 1)?.main == BehaviorCrateTwo(label: "a", weight: 5, lid: "red"))
            try renamed.close()
        }
    }

    @Test("A stored value that does not fit a narrowed kind is refused, naming it")
    func valueDoesNotFit() throws {
        try withTemporaryDirectory { directory in
            let path = try versionOne(in: directory)
            let error = #expect(throws: MigrationError.self) {
                try Store(path: path, models: [After.NarrowItem.self], configuration: versionTwo(nil))
            }
            #expect(error?.kind == .valueDoesNotFit(typeName: "Item", property: "count", value: "int(300)", kind: "Int8"))
        }
    }

    @Test("Deleting all objects of a type, creating and deleting objects")
    func objectOperations() throws {
        try withTemporaryDirectory { directory in
            let path = try versionOne(in: directory)
            let configuration = versionTwo { migration, _ in
                try migration.renameType(from: "Client", to: "Customer")
                try migration.deleteAllObjects(ofType: "Log")
                let created = try migration.create(ofType: "Customer")
                try created.setValue(9, forProperty: "identifier")
                try created.setValue("Grace", forProperty: "name")
                let discarded = try migration.create(ofType: "Customer")
                try migration.delete(discarded)
                try migration.enumerateObjects(ofType: "Customer") { old, new in
                    if try old.value(forProperty: "name", as: String.self) == "Alan" { try migration.delete(new) }
                }
                try migration.enumerateObjects(ofType: "Item") { old, new in
                    try new.setValue(.list([.string(try old.value(forProperty: "tag"))]), forProperty: "tag")
                    try new.setValue(String(try old.value(forProperty: "size", as: Int.self)), forProperty: "size")
                }
            }
            try Store(path: path, models: [After.Item.self, After.Order.self, After.Log.self], configuration: configuration).close()
            let store = try Store(path: path, models: [After.Item.self, After.Order.self, After.Log.self], configuration: versionTwo(nil))
            #expect(try store.objects(After.Customer.self).map(\.name) == ["Ada", "Grace"])
            #expect(try store.objects(After.Log.self).isEmpty)
            #expect(try store.objects(After.Item.self).map(\.size) == ["10", "20"])
        }
    }

    @Test("Operations on what does not exist are typed errors")
    func unknownNames() throws {
        try withTemporaryDirectory { directory in
            let path = try versionOne(in: directory)
            func failure(_ block: @escaping Store.Configuration.MigrationBlock) -> MigrationError.Kind? {
                do {
                    try Store(path: path, models: [After.Item.self], configuration: versionTwo(block)).close()
                    return nil
                } catch {
                    return (error as? MigrationError)?.kind
                }
            }
            let renamedToMissing = failure { migration, _ in try migration.renameProperty(onType: "Item", from: "title", to: "heading") }
            #expect(renamedToMissing == .unknownProperty(typeName: "Item", property: "heading"))
            let unknownType = failure { migration, _ in try migration.enumerateObjects(ofType: "Nothing") { _, _ in } }
            #expect(unknownType == .unknownType(typeName: "Nothing"))
            let taken = failure { migration, _ in try migration.renameType(from: "Client", to: "Item") }
            #expect(taken == .typeNameTaken(typeName: "Item"))
            let notMigrating = failure { migration, _ in
                try migration.delete(ManagedObject(objectSchema: After.Item.objectSchema()))
            }
            #expect(notMigrating == .notMigrating(typeName: "Item"))
        }
    }
}
