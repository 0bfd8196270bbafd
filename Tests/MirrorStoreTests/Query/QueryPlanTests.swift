import Foundation
import Testing
@_spi(Testing) import MirrorStore

/// Which access path the planner chooses, asserted through `Results.plan`, with the answer
/// checked against plain Swift each time.
@Suite("Query plans")
struct QueryPlanTests {
    /// A store of 400 seeded heroes and the same heroes in an array.
    static func world() throws -> (Store, [QueryHero]) {
        var world = QueryWorld(seed: 0x51A7)
        let heroes = (1...400).map { world.hero($0) }
        let store = try Store.inMemory(models: [QueryHero.self])
        try store.write { try $0.add(contentsOf: heroes) }
        return (store, heroes)
    }

    /// The identifiers a predicate selects, from the store and from the array.
    static func compare(_ store: Store, _ heroes: [QueryHero], _ predicate: Predicate<QueryHero>) throws -> Results<QueryHero> {
        let results = try store.objects(QueryHero.self).filter(predicate)
        let expected = try heroes.filter { try predicate.evaluate($0) }.map(\.identifier)
        #expect(results.map(\.identifier) == expected, "plan: \(results.plan)")
        return results
    }

    @Test("Equality, ranges and prefixes on indexed properties read the index")
    func indexedConditionsUseTheIndex() throws {
        let (store, heroes) = try Self.world()
        let thor = try Self.compare(store, heroes, #Predicate { $0.name == "Thor" })
        #expect(thor.plan.access == .index(name: "QueryHero.name", range: "== \"Thor\""))
        #expect(thor.plan.filter == .none)

        let middleAged = try Self.compare(store, heroes, #Predicate { $0.age >= 40 && $0.age < 50 })
        #expect(middleAged.plan.indexName == "QueryHero.age")

        let closedRange = try Self.compare(store, heroes, #Predicate { (20...29).contains($0.age) })
        #expect(closedRange.plan.indexName == "QueryHero.age")

        let prefix = try Self.compare(store, heroes, #Predicate { $0.name.starts(with: "Th") })
        #expect(prefix.plan.indexName == "QueryHero.name")

        let tagged = try Self.compare(store, heroes, #Predicate { $0.tags.contains("cosmic") })
        #expect(tagged.plan.indexName == "QueryHero.tags")

        // A property of a captured value is a constant too.
        struct Wanted: Codable, Sendable { let identifier: Int; let name: String; let age: Int }
        let wanted = Wanted(identifier: heroes[7].identifier, name: heroes[7].name, age: heroes[7].age)
        let captured = try Self.compare(store, heroes, #Predicate { $0.name == wanted.name && $0.age == wanted.age })
        #expect(captured.plan.indexName != nil)
        #expect(captured.plan.filter != .recordsThenModels)
        #expect(captured.contains { $0.identifier == wanted.identifier })

        let optional = try Self.compare(store, heroes, #Predicate { $0.realName == "Hulk" })
        #expect(optional.plan.indexName == "QueryHero.realName")

        // An indexed condition narrows, the rest is tested on the candidates' stored bytes.
        let mixed = try Self.compare(store, heroes, #Predicate { $0.name == "Hulk" && $0.rating > 50 })
        #expect(mixed.plan.indexName == "QueryHero.name")
        #expect(mixed.plan.filter == .storedBytes)
    }

    @Test("Conditions through links start from the linked objects and read the link's index")
    func linkConditionsJoin() throws {
        let (store, heroes) = try Self.world()
        let marvel = try Self.compare(store, heroes, #Predicate { $0.publisher?.name == "Marvel" })
        #expect(marvel.plan.access == .linked(index: "QueryHero.publisher", target: "index QueryPublisher.name == \"Marvel\""))
        #expect(marvel.plan.filter == .records)

        // 30 publishers and 200 dogs are fewer to test than 400 heroes, even without an index.
        let french = try Self.compare(store, heroes, #Predicate { $0.publisher?.country == "FR" })
        #expect(french.plan.access == .linked(index: "QueryHero.publisher", target: "scan every QueryPublisher"))
        let rexOwners = try Self.compare(store, heroes, #Predicate { $0.dogs.contains { $0.name == "Rex" && $0.age > 3 } })
        #expect(rexOwners.plan.access == .linked(index: "QueryHero.dogs", target: "scan every QueryDog"))

        // An index on the queried type wins over a join.
        let both = try Self.compare(store, heroes, #Predicate { $0.age == 30 && $0.publisher?.name == "DC" })
        #expect(both.plan.indexName == "QueryHero.age")
        // Heroes without a publisher are not found through the link: `nil == nil` scans.
        let none = try Self.compare(store, heroes, #Predicate { $0.publisher?.country == nil })
        #expect(none.plan.access == .scan(typeName: "QueryHero"))
    }

    @Test("Primary keys are looked up; unindexed and computed conditions scan")
    func otherAccessPaths() throws {
        let (store, heroes) = try Self.world()
        let one = try Self.compare(store, heroes, #Predicate { $0.identifier == 17 })
        #expect(one.plan.access == .primaryKey(typeName: "QueryHero", keys: 1))

        let unindexed = try Self.compare(store, heroes, #Predicate { $0.rating > 90 })
        #expect(unindexed.plan.access == .scan(typeName: "QueryHero"))
        #expect(unindexed.plan.filter == .storedBytes, "a comparison of its own value is tested in the file")

        let computed = try Self.compare(store, heroes, #Predicate { $0.nameLength > 4 })
        #expect(computed.plan.access == .scan(typeName: "QueryHero"))
        #expect(computed.plan.filter == .recordsThenModels)
    }

    @Test("Negative literals are constants: an index or the stored bytes answer them, not the models")
    func negativeLiterals() throws {
        let (store, heroes) = try Self.world()
        // The macro writes `-50` as a minus applied to 50.
        let indexed = try Self.compare(store, heroes, #Predicate { $0.age > -50 && $0.age < 30 })
        #expect(indexed.plan.access == .index(name: "QueryHero.age", range: "> -50 and < 30"))
        #expect(indexed.plan.filter == .none)
        let below = try Self.compare(store, heroes, #Predicate { $0.age < -50 })
        #expect(below.plan.access == .index(name: "QueryHero.age", range: "< -50"))
        let zero = try Self.compare(store, heroes, #Predicate { $0.rating == -0.0 || $0.rating < -1.5 })
        #expect(!zero.isEmpty, "-0.0 == 0.0, as Swift answers")
        #expect(zero.plan.access == .scan(typeName: "QueryHero") && zero.plan.filter == .storedBytes, "\(zero.plan)")
        let coalesced = try Self.compare(store, heroes, #Predicate { ($0.realName?.count ?? -1) > 3 })
        #expect(coalesced.plan.filter == .records)
        // An optional behind `??` with a constant is tested on the stored bytes, nil included.
        let fallback = try Self.compare(store, heroes, #Predicate { ($0.realName ?? "-") < "M" || $0.realName != "Thor" })
        #expect(fallback.plan.access == .scan(typeName: "QueryHero") && fallback.plan.filter == .storedBytes, "\(fallback.plan)")
        let captured = 7.0
        let negatedCapture = try Self.compare(store, heroes, #Predicate { $0.rating > -captured })
        #expect(negatedCapture.plan.filter == .storedBytes)
    }

    @Test("Arithmetic on stored numbers is decided on the stored bytes, or on records through links")
    func arithmetic() throws {
        let (store, heroes) = try Self.world()
        func onBytes(_ results: Results<QueryHero>) -> Bool {
            results.plan.access == .scan(typeName: "QueryHero") && results.plan.filter == .storedBytes
        }
        let doubled = try Self.compare(store, heroes, #Predicate { $0.rating * 2 > 150 })
        #expect(onBytes(doubled), "\(doubled.plan)")
        let shifted = try Self.compare(store, heroes, #Predicate { $0.age + 1 == 31 })
        #expect(onBytes(shifted), "\(shifted.plan)")
        #expect(!shifted.isEmpty)
        let difference = try Self.compare(store, heroes, #Predicate { $0.age - $0.identifier > 0 || -$0.rating > -10 })
        #expect(onBytes(difference), "\(difference.plan)")
        let divided = try Self.compare(store, heroes, #Predicate { $0.age / 7 == 4 && $0.age % 7 == 1 })
        #expect(onBytes(divided), "\(divided.plan)")
        let ratio = try Self.compare(store, heroes, #Predicate { $0.rating / 4 <= 2.5 })
        #expect(onBytes(ratio), "\(ratio.plan)")
        let linked = try Self.compare(store, heroes, #Predicate { $0.dogs.contains { $0.age * 3 > 40 } })
        #expect(linked.plan.filter == .records)
        // Integer arithmetic may trap in Swift, so a condition after it does not narrow by an index.
        let after = try Self.compare(store, heroes, #Predicate { $0.age + 1 > 50 && $0.name == "Thor" })
        #expect(after.plan.access == .scan(typeName: "QueryHero"))
        let before = try Self.compare(store, heroes, #Predicate { $0.name == "Thor" && $0.age + 1 > 50 })
        #expect(before.plan.indexName == "QueryHero.name")
        #expect(before.plan.filter == .storedBytes)
    }

    @Test("A range captured whole reads the index, or is tested on the stored bytes")
    func capturedRangesAndRawValues() throws {
        let (store, heroes) = try Self.world()
        let adults = 18...64, teens = 13..<20
        let closed = try Self.compare(store, heroes, #Predicate { adults.contains($0.age) })
        #expect(closed.plan.access == .index(name: "QueryHero.age", range: "in 18...64"))
        #expect(closed.plan.filter == .none)
        let open = try Self.compare(store, heroes, #Predicate { teens.contains($0.age) && $0.rating > 10 })
        #expect(open.plan.indexName == "QueryHero.age")
        #expect(open.plan.filter == .storedBytes)
        let ratings = 10.0...20.0
        let unindexed = try Self.compare(store, heroes, #Predicate { ratings.contains($0.rating) })
        #expect(unindexed.plan.access == .scan(typeName: "QueryHero") && unindexed.plan.filter == .storedBytes, "\(unindexed.plan)")
    }

    /// Readings with indexes on a double, an optional float, a UUID and data.
    final class PlanReading: Persistable {
        var identifier = 0
        var value = 0.0
        var ratio: Float?
        var token = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        var blob = Data()
        var counts: [String: Int] = [:]
        var samples: [Double] = []
        init() {}
        static var primaryKey: String? { "identifier" }
        static var indexedProperties: [String] { ["value", "ratio", "token", "blob"] }
    }

    @Test("Equality on an indexed double, float, UUID or data reads the index; lookups, filters, extremes and positions read records")
    func equalityOnIndexedValues() throws {
        let values: [Double] = [-0.0, 0.0, 1.5, -.infinity, .nan]
        let tokens = (0..<3).map { UUID(uuid: (UInt8($0), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)) }
        let readings = (1...60).map { identifier in
            let reading = PlanReading()
            reading.identifier = identifier
            reading.value = values[identifier % values.count]
            reading.ratio = identifier % 4 == 0 ? nil : Float(values[identifier % 3])
            reading.token = tokens[identifier % tokens.count]
            reading.blob = Data(repeating: UInt8(identifier % 3), count: identifier % 2)
            reading.counts = identifier % 3 == 0 ? [:] : ["a": identifier % 5, "b": identifier]
            reading.samples = (0..<(identifier % 4)).map { values[($0 + identifier) % values.count] }
            return reading
        }
        let store = try Store.inMemory(models: [PlanReading.self])
        try store.write { try $0.add(contentsOf: readings) }
        func check(_ predicate: Predicate<PlanReading>, index: String?, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let results = try store.objects(PlanReading.self).filter(predicate)
            let expected = try readings.filter { try predicate.evaluate($0) }.map(\.identifier)
            #expect(results.map(\.identifier) == expected, "plan: \(results.plan)", sourceLocation: sourceLocation)
            #expect(results.plan.indexName == index, "plan: \(results.plan)", sourceLocation: sourceLocation)
            if index != nil { #expect(results.plan.filter == .none, "plan: \(results.plan)", sourceLocation: sourceLocation) }
        }
        let zero = 0.0, notANumber = Double.nan, low = -Double.infinity, token = tokens[1], blob = Data([2])
        try check(#Predicate { $0.value == zero }, index: "PlanReading.value")
        try check(#Predicate { $0.value == -0.0 }, index: "PlanReading.value")
        try check(#Predicate { $0.value == low }, index: "PlanReading.value")
        // NaN equals nothing: no index is read for it, and nothing matches.
        try check(#Predicate { $0.value == notANumber }, index: nil)
        try check(#Predicate { $0.ratio == 1.5 }, index: "PlanReading.ratio")
        try check(#Predicate { $0.ratio == nil }, index: "PlanReading.ratio")
        try check(#Predicate { $0.token == token }, index: "PlanReading.token")
        try check(#Predicate { $0.blob == blob }, index: "PlanReading.blob")
        // Ranges still scan: NaN sorts last in the index but is greater than nothing.
        try check(#Predicate { $0.value > zero }, index: nil)

        // `$0.x ?? -1 > 0` scans (no range of floats reads an index) and tests the stored bytes.
        let ratioFallback = try store.objects(PlanReading.self).filter(#Predicate { ($0.ratio ?? -1) > 0 })
        #expect(ratioFallback.map(\.identifier) == readings.filter { ($0.ratio ?? -1) > 0 }.map(\.identifier))
        #expect(ratioFallback.plan.filter == .storedBytes, "plan: \(ratioFallback.plan)")

        // Lookups, filters, extremes and positions are decided on the records.
        for predicate in [
            #Predicate<PlanReading> { $0.counts["a"] == 2 },
            #Predicate<PlanReading> { $0.counts["c"] == nil && $0.counts["b", default: 0] > 30 },
            #Predicate<PlanReading> { $0.samples.filter { $0 > zero }.count == 1 },
            #Predicate<PlanReading> { $0.samples.filter { $0 != $0 }.isEmpty },
            #Predicate<PlanReading> { $0.samples.max() == 1.5 },
            #Predicate<PlanReading> { ($0.samples.min() ?? zero) < zero },
            #Predicate<PlanReading> { $0.samples.count > 1 && $0.samples[1] == zero },
        ] {
            try check(predicate, index: nil)
            let results = try store.objects(PlanReading.self).filter(predicate)
            #expect(results.plan.filter == .records, "plan: \(results.plan)")
        }
    }

    @Test("A sort by an indexed property reads the index in order; others sort")
    func sortsUseTheIndex() throws {
        let (store, heroes) = try Self.world()
        let byAge = try store.objects(QueryHero.self).sorted(using: SortDescriptor(\.age))
        #expect(byAge.plan.order == .index(name: "QueryHero.age", ascending: true))
        #expect(byAge.map(\.identifier) == heroes.sorted(using: SortDescriptor(\.age)).map(\.identifier))
        #expect(Array(byAge.prefix(20).map(\.identifier)) == Array(heroes.sorted(using: SortDescriptor(\.age)).prefix(20).map(\.identifier)))

        let byAgeDown = try store.objects(QueryHero.self).sorted(using: SortDescriptor(\.age, order: .reverse))
        #expect(byAgeDown.plan.order == .index(name: "QueryHero.age", ascending: false))
        #expect(byAgeDown.map(\.identifier) == heroes.sorted(using: SortDescriptor(\.age, order: .reverse)).map(\.identifier))

        let byRating = try store.objects(QueryHero.self).sorted(using: SortDescriptor(\.rating))
        #expect(byRating.plan.order == .records(properties: ["rating"]))
    }

    @Test("Sorting by a property named at run time matches SortDescriptor; bad names are typed errors")
    func runTimeSort() throws {
        let (store, heroes) = try Self.world()
        let byRating = try store.objects(QueryHero.self).sorted(byProperty: "rating", ascending: false)
        #expect(byRating.map(\.identifier) == heroes.sorted(using: SortDescriptor(\.rating, order: .reverse)).map(\.identifier))
        let byAge = try store.objects(QueryHero.self).sorted(byProperty: "age")
        #expect(byAge.plan.indexName == "QueryHero.age")

        let unsortable = #expect(throws: QueryError.self) { try store.objects(QueryHero.self).sorted(byProperty: "tags") }
        #expect(unsortable?.kind == .unsortableProperty(typeName: "QueryHero", property: "tags", kind: "[String]"))
        let unknown = #expect(throws: QueryError.self) { try store.objects(QueryHero.self).sorted(byProperty: "height") }
        #expect(unknown?.kind == .unknownProperty(typeName: "QueryHero", property: "height"))
        let ignored = #expect(throws: QueryError.self) { try store.objects(QueryHero.self).sorted(byProperty: "scratch") }
        #expect(ignored?.kind == .ignoredProperty(typeName: "QueryHero", property: "scratch"))
    }

    @Test("A predicate or sort on an ignored property is a typed error naming type and property")
    func ignoredPropertyIsRefused() throws {
        let (store, _) = try Self.world()
        let expected = QueryError.Kind.ignoredProperty(typeName: "QueryHero", property: "scratch")
        let filtered = #expect(throws: QueryError.self) { try store.objects(QueryHero.self).filter(#Predicate { $0.scratch == 0 }) }
        #expect(filtered?.kind == expected)
        #expect(filtered?.description.contains("QueryHero.scratch") == true)
        let sorted = #expect(throws: QueryError.self) { try store.objects(QueryHero.self).sorted(using: SortDescriptor(\.scratch)) }
        #expect(sorted?.kind == expected)
    }
}
