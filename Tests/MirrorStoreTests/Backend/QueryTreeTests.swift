// The public view storage backends read (Sources/MirrorStore/Backend): it must follow the
// internal query tree, so a change there that this view does not follow fails here.
import Foundation
import MirrorStore
import Testing

private struct TreeLabel: Persistable {
    var identifier = 0
    var name = ""
    static var primaryKey: String? { "identifier" }
}

private struct TreeHero: Persistable {
    var identifier = 0
    var name = ""
    var age: Int?
    var active = false
    var tags: [String] = []
    var label: TreeLabel?
    var cache = 0
    static var primaryKey: String? { "identifier" }
    static var uniqueProperties: [String] { ["name"] }
    static var compoundIndexes: [CompoundIndex] { [.unique("name", "age")] }
    static var ignoredProperties: [String] { ["cache"] }
}

@Suite("Backend view")
struct QueryTreeTests {
    @Test func modelsListEveryReachableTypeWithItsDeclarations() throws {
        let models = try BackendModels(models: [TreeHero.self])
        #expect(models.types.map(\.schema.typeName) == ["TreeHero", "TreeLabel"])
        let hero = try #require(models.type(of: TreeHero.self))
        #expect(hero.uniqueProperties == ["name"])
        #expect(hero.compoundIndexes == [.unique("name", "age")])
        #expect(models.type(named: "TreeLabel")?.schema.primaryKey == "identifier")
        #expect(models.propertyName(of: \TreeHero.name) == "name")
        #expect(models.propertyName(of: \TreeHero.cache) == nil)
        #expect(models.propertyName(of: \TreeHero.name.count) == nil)
    }

    @Test func comparisonsPathsAndConnectivesAreExposed() throws {
        let models = try BackendModels(models: [TreeHero.self])
        let low = 40, prefix = "S"
        let tree = try models.queryTree(for: #Predicate<TreeHero> {
            ($0.age ?? 0) >= low && $0.name.starts(with: prefix) && ($0.label?.name == "Marvel" || !$0.active) && $0.tags.contains("x")
        })
        #expect(tree.conjuncts == [
            .compare(.nilCoalesce(.property(["age"]), .constant(.int(0))), .greaterThanOrEqual, .constant(.int(40))),
            .startsWith(.property(["name"]), .constant(.string("S"))),
            .or(.equal(.property(["label", "name"]), .constant(.string("Marvel"))), .not(.property(["active"]))),
            .contains(.property(["tags"]), .constant(.string("x"))),
        ])
        #expect(tree.isComplete)
        #expect(tree.description == "((((age ?? 0) >= 40 && name.starts(with: \"S\")) && (label.name == \"Marvel\" || !(active))) && tags.contains(\"x\"))")
    }

    @Test func whatTheViewDoesNotExposeIsOther() throws {
        let models = try BackendModels(models: [TreeHero.self])
        let tree = try models.queryTree(for: #Predicate<TreeHero> { $0.identifier > 2 && $0.tags.contains { $0.count > 3 } })
        #expect(tree.conjuncts == [.compare(.property(["identifier"]), .greaterThan, .constant(.int(2))), .other])
        #expect(!tree.isComplete)
    }

    @Test func errorsAreTheFileStoresErrors() throws {
        let models = try BackendModels(models: [TreeLabel.self])
        #expect(throws: StoreError(.unknownModel(typeName: "TreeHero"))) {
            try models.queryTree(for: #Predicate<TreeHero> { $0.identifier == 1 })
        }
        let heroes = try BackendModels(models: [TreeHero.self])
        #expect(throws: QueryError(.ignoredProperty(typeName: "TreeHero", property: "cache"))) {
            try heroes.queryTree(for: #Predicate<TreeHero> { $0.cache == 1 })
        }
    }
}
