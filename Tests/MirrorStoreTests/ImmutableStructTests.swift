import Foundation
import Synchronization
import Testing
import MirrorStore
import TestSupport

// Seed 000's models as a Swift developer writes them: `let` properties, no `init()`, only the
// memberwise initialiser.

private struct Headquarters: Persistable, Equatable {
    let city: String
    let floors: Int
}

private struct SeedPublisher: Persistable, Equatable {
    let identifier: Int
    let name: String
    let headquarters: Headquarters
    static var primaryKey: String? { "identifier" }
}

private struct SeedHero: Persistable, Equatable {
    // Not `CaseIterable` and no case for the raw value "": its empty value is its first case.
    enum Power: String { case flight, strength, intellect }

    let identifier: Int
    let name: String
    let realName: String?
    let publisher: SeedPublisher?
    let tags: [String]
    let power: Power
    let born: Date
    static var primaryKey: String? { "identifier" }
    static var indexedProperties: [String] { ["name"] }
}

/// Links to nothing and nothing links to it: the store decodes its bytes straight into the value.
private struct Note: Persistable, Equatable {
    let identifier: UUID
    let text: String
    let pinned: Bool
    static var primaryKey: String? { "identifier" }
}

private struct Annotated: Persistable {
    let identifier: Int
    let note: String?
    var counts: [String: Int]
    lazy var shout: String = "computed"
    static var ignoredProperties: [String] { ["note", "counts"] }
}

private struct WithClosure: Persistable {
    let identifier: Int
    let format: (Int) -> String
    static var ignoredProperties: [String] { ["format"] }
}

/// Counts its live instances, to show a failed construction releases what it had built. Its
/// ignored property keeps its instances coming from `init()`, which counts them.
private final class Tracked: Persistable {
    static let live = Atomic<Int>(0)
    var name = ""
    var counted = true
    init() { Self.live.add(1, ordering: .relaxed) }
    deinit { Self.live.subtract(1, ordering: .relaxed) }
    static var ignoredProperties: [String] { ["counted"] }
}

private struct HoldsTracked: Persistable {
    let tracked: Tracked
    let count: Int
}

private final class ClassWithLet: Persistable {
    let identifier: Int
    init() { identifier = 0 }
}

private let marvel = SeedPublisher(identifier: 1, name: "Marvel", headquarters: Headquarters(city: "New York", floors: 12))
private let heroes = [
    SeedHero(identifier: 1455, name: "Iron Man", realName: "Tony Stark", publisher: marvel,
             tags: ["genius"], power: .intellect, born: Date(timeIntervalSince1970: 1_101_763_989.123)),
    SeedHero(identifier: 1009, name: "Hulk", realName: nil, publisher: marvel,
             tags: [], power: .strength, born: Date(timeIntervalSince1970: -3_000_000)),
    SeedHero(identifier: 7, name: "Storm", realName: "Ororo Munroe", publisher: nil,
             tags: ["x-men", "weather"], power: .flight, born: Date(timeIntervalSince1970: 0)),
]

private let notes = (0..<3).map { index in
    Note(identifier: UUID(uuid: (UInt8(index), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)),
         text: "note \(index)", pinned: index == 1)
}

@Suite("Immutable struct models")
struct ImmutableStructTests {
    @Test("A struct with let properties and no init() round-trips through its record")
    func roundTrip() throws {
        for hero in heroes {
            let record = try hero.managedObject()
            #expect(try SeedHero.modelInstance(managedObject: record) == hero)
        }
        #expect(try SeedHero.objectSchema().properties.map(\.name)
            == ["identifier", "name", "realName", "publisher", "tags", "power", "born"])
    }

    @Test("Stored, queried and read back after reopening a file store")
    func throughTheStore() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/heroes.store"
            do {
                let store = try Store(path: path, models: [SeedHero.self, Note.self])
                try store.write { transaction in
                    for hero in heroes { try transaction.add(hero) }
                    for note in notes { try transaction.add(note) }
                }
                let found = try store.objects(SeedHero.self).filter(#Predicate { $0.name == "Hulk" })
                #expect(Array(found) == [heroes[1]])
            }
            let store = try Store(path: path, models: [SeedHero.self, Note.self])
            #expect(try store.object(SeedHero.self, primaryKey: 1455) == heroes[0])
            #expect(try store.object(Note.self, primaryKey: notes[1].identifier) == notes[1])
            #expect(Set(try store.objects(Note.self).map(\.text)) == Set(notes.map(\.text)))
            #expect(try store.object(SeedPublisher.self, primaryKey: 1) == marvel)
            let sorted = try store.objects(SeedHero.self).sorted(using: SortDescriptor(\.name))
            #expect(sorted.map(\.name) == ["Hulk", "Iron Man", "Storm"])
            // An immutable value changes by being replaced.
            let renamed = SeedHero(identifier: 7, name: "Ororo", realName: nil, publisher: nil,
                                   tags: [], power: .flight, born: heroes[2].born)
            try store.write { try $0.add(renamed) }
            #expect(try store.object(SeedHero.self, primaryKey: 7) == renamed)
        }
    }

    @Test("Every stored property must come from the record")
    func missingPropertyIsNamed() throws {
        let record = try heroes[0].managedObject().removing("realName")
        let error = #expect(throws: MappingError.self) { try SeedHero.modelInstance(managedObject: record) }
        #expect(error?.kind == .missingProperty)
        #expect(error?.propertyPath == "SeedHero.realName")
    }

    @Test("A construction that fails half-way releases what it had built")
    func failedConstructionReleases() throws {
        let record = try HoldsTracked(tracked: Tracked(), count: 3).managedObject()
            .replacing("count", kind: .string, with: .string("three"))
        #expect(Tracked.live.load(ordering: .relaxed) == 0)
        let error = #expect(throws: MappingError.self) { try HoldsTracked.modelInstance(managedObject: record) }
        #expect(error?.propertyPath == "HoldsTracked.count")
        // The instance decoded for the first property went with the value that failed.
        #expect(Tracked.live.load(ordering: .relaxed) == 0)
        let good = try HoldsTracked.modelInstance(managedObject: HoldsTracked(tracked: Tracked(), count: 3).managedObject())
        #expect(Tracked.live.load(ordering: .relaxed) == 1)
        #expect(good.count == 3)
    }

    @Test("Properties a struct does not store take their empty values")
    func unstoredPropertiesAreEmpty() throws {
        var model = Annotated(identifier: 3, note: "kept in memory only", counts: ["a": 1])
        #expect(model.shout == "computed")
        var copy = try Annotated.modelInstance(managedObject: model.managedObject())
        #expect(copy.identifier == 3)
        #expect(copy.note == nil)
        #expect(copy.counts.isEmpty)
        #expect(copy.shout == "computed")
        #expect(try Annotated.objectSchema().properties.map(\.name) == ["identifier"])
    }

    @Test("A property without an empty value is a typed error naming it")
    func noEmptyValue() throws {
        let error = #expect(throws: MappingError.self) { try WithClosure.objectSchema() }
        #expect(error?.kind == .noEmptyValue(type: "(Int) -> String"))
        #expect(error?.propertyPath == "WithClosure.format")
    }

    @Test("The default init() gives every property its empty value")
    func defaultInit() {
        let hero = SeedHero()
        #expect(hero.identifier == 0)
        #expect(hero.name == "")
        #expect(hero.realName == nil)
        #expect(hero.publisher == nil)
        #expect(hero.tags == [])
        #expect(hero.power == .flight)
        #expect(hero.born == Date(timeIntervalSinceReferenceDate: 0))
        #expect(SeedPublisher().headquarters == Headquarters(city: "", floors: 0))
    }

    @Test("A class keeps its init() and its let properties are refused")
    func classLetIsRefused() {
        let error = #expect(throws: MappingError.self) { try ClassWithLet().managedObject() }
        #expect(error?.kind == .immutableProperty)
        #expect(error?.description
            == "ClassWithLet.identifier is a 'let' constant of a class, which reflection cannot write into an instance safely; declare it 'var', list it in ignoredProperties, or make the model a struct.")
    }
}
