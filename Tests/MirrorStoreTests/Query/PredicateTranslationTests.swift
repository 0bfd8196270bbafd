import Dispatch
import Foundation
import Testing
@_spi(Testing) @testable import MirrorStore
import MirrorStoreEngine

/// A predicate's expression type is compiled into a translation once and reused for every
/// predicate of that shape: these check that what the shape's translation remembers never leaks
/// from one predicate into another of the same shape.
@Suite("Predicate translation")
struct PredicateTranslationTests {
    @Test("Predicates of one shape on different properties each read their own property")
    func oneShapeManyProperties() throws {
        let (store, heroes) = try QueryPlanTests.world()
        let age = heroes[41].age, identifier = heroes[41].identifier
        // `$0.age == n`, `$0.identifier == n` and `$0.scratch == n` are all an `Equal` of an
        // `Int` key path and an `Int` value: one expression type, so one compiled translation.
        for round in 0..<3 {
            let byAge = try QueryPlanTests.compare(store, heroes, #Predicate { $0.age == age })
            #expect(byAge.plan.indexName == "QueryHero.age", "round \(round): \(byAge.plan)")

            let byKey = try QueryPlanTests.compare(store, heroes, #Predicate { $0.identifier == identifier })
            #expect(byKey.plan.access == .primaryKey(typeName: "QueryHero", keys: 1), "round \(round): \(byKey.plan)")

            let ignored = #expect(throws: QueryError.self) {
                _ = try store.objects(QueryHero.self).filter(#Predicate { $0.scratch == age })
            }
            #expect(ignored?.kind == .ignoredProperty(typeName: "QueryHero", property: "scratch"), "round \(round)")
        }
    }

    @Test("A shape compiled once translates each predicate's own constants")
    func oneShapeManyConstants() throws {
        let (store, heroes) = try QueryPlanTests.world()
        for hero in heroes.prefix(25) {
            let name = hero.name, age = hero.age
            let found = try QueryPlanTests.compare(store, heroes, #Predicate { $0.name == name && $0.age >= age })
            #expect(found.plan.indexName != nil)
            #expect(found.contains { $0.identifier == hero.identifier })
        }
    }

    @Test("An operand that is not stored in place is read and translated from a copy, to the same node")
    func operandsOutOfPlace() throws {
        struct Holder {
            let stored: PredicateExpressions.Value<Int>
            var computed: PredicateExpressions.Value<Int> { stored }
        }
        let holder = Holder(stored: PredicateExpressions.Value(7))
        let translator = PredicateTranslator(registry: try ModelRegistry(models: []))
        #expect(MemoryLayout<Holder>.offset(of: \Holder.stored) != nil)
        #expect(MemoryLayout<Holder>.offset(of: \Holder.computed) == nil)
        for field in [\Holder.stored, \Holder.computed] {
            let node = try withUnsafePointer(to: holder) { try Translations.operand(field)(UnsafeRawPointer($0), translator) }
            guard case .constant(.int(7)) = node else {
                Issue.record("\(field) translated to \(node)")
                continue
            }
            #expect(withUnsafePointer(to: holder) { Translations.reader(field)(UnsafeRawPointer($0)).value } == 7)
        }
    }

    @Test("Threads translating predicates of one shape on different properties at once each get their own answer")
    func oneShapeFromManyThreads() throws {
        let (store, heroes) = try QueryPlanTests.world()
        let byAge = Dictionary(grouping: heroes, by: \.age).mapValues { $0.map(\.identifier) }
        let keyed = heroes.map { (age: $0.age, identifier: $0.identifier) }
        let wrong = Lock<[String]>([])
        // Each worker alternates two properties of one shape, so the shape's remembered member
        // changes under the others' feet all the time.
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for step in 0..<150 {
                let (age, identifier) = keyed[(worker * 150 + step) % keyed.count]
                do {
                    let ages = try store.objects(QueryHero.self).filter(#Predicate { $0.age == age }).map(\.identifier)
                    let keys = try store.objects(QueryHero.self).filter(#Predicate { $0.identifier == identifier }).map(\.identifier)
                    if ages != byAge[age] ?? [] || keys != [identifier] {
                        wrong.withLock { $0.append("worker \(worker) step \(step): \(ages) for age \(age), \(keys) for \(identifier)") }
                    }
                } catch {
                    wrong.withLock { $0.append("worker \(worker) step \(step): \(error)") }
                }
            }
        }
        #expect(wrong.withLock { $0 }.isEmpty, "\(wrong.withLock { $0.prefix(3) })")
    }
}
