import Foundation
import Synchronization
import Testing
import TestSupport
@testable import MirrorStore
import MirrorStoreEngine

// Class models made without their `init()` (`TypePlan.freshObject`) against the same conversions
// from `init()`, with plans built with `CodecFactory.makesFreshObjects` off. The models count the
// calls of a default initialiser with a side effect and of their deinitialisers; only this suite
// makes them, and it runs its tests one at a time.

private let initCalls = Atomic<Int>(0)
private let deinitCalls = Atomic<Int>(0)

/// `value`, counting the call: a default initialiser with a side effect.
private func counted<Value>(_ value: Value) -> Value {
    initCalls.add(1, ordering: .relaxed)
    return value
}

private struct Spot: Persistable {
    var name = ""
    var floor: Int?
    var tags: [String] = []
    init() {}
}

private final class Target: Persistable {
    var id = 0
    var label = counted("")
    init() {}
    deinit { deinitCalls.add(1, ordering: .relaxed) }
    static var primaryKey: String? { "id" }
}

private class Base: Persistable {
    var id = 0
    var name = ""
    var stamp = counted(Date(timeIntervalSinceReferenceDate: 0))
    required init() {}
    deinit { deinitCalls.add(1, ordering: .relaxed) }
    class var primaryKey: String? { "id" }
    class var ignoredProperties: [String] { [] }
}

/// Embeds a model and links to none: the store reads it on its own, through the field sink.
private class Middle: Base {
    var score: Double?
    var tags: [String] = []
    var spot = Spot()
    var key = UUID()
}

private final class Leaf: Middle {
    var other: Spot?
    var spots: [Spot] = []
    var target: Target?
    var targets: [Target] = []
    var code: UInt8 = 0
    var small: Int8?
}

/// Embedded in `Booking`, its defaults counted: a new `Booking` gets it made of empty values,
/// without calling its `init()`; a nested struct and a list are made so too.
private struct Stage: Persistable {
    var name = counted("main")
    var seats = 12
    var lit: Bool?
    var inner = Spot()
    init() {}
}

/// Every field read straight from its bytes, its embedded struct in its place.
private final class Booking: Persistable {
    var id = 0
    var stage = Stage()
    var note = ""
    init() {}
    static var primaryKey: String? { "id" }
}

/// Single values only: the store reads it straight from its bytes.
private class FlatBase: Persistable {
    var id = 0
    var when = counted(Date(timeIntervalSinceReferenceDate: 0))
    required init() {}
    deinit { deinitCalls.add(1, ordering: .relaxed) }
    class var primaryKey: String? { "id" }
}

private final class FlatLeaf: FlatBase {
    var label: String?
    var flag = false
    var ratio: Float = 0
    var key = UUID()
}

/// Lists of linked class models, which are made in place.
private final class Roster: Persistable {
    var id = 0
    var members: [Leaf] = []
    var flats: [FlatLeaf] = []
    init() {}
    static var primaryKey: String? { "id" }
}

/// Lists, sets and a dictionary, whose empty values a recipe copies from its template, with
/// defaults of `init()` that are not empty; single values between them.
private final class Shelves: Persistable {
    var id = 0
    var names: [String] = counted(["made by init()"])
    var codes: Set<Int> = [1, 2]
    var blobs: [Data] = []
    var label = ""
    var moments: Set<Date> = []
    var ids: [UUID] = []
    var counts: [String: Int] = ["made by init()": 1]
    var spots: [Spot] = []
    var maybe: [Double]?
    init() {}
    static var primaryKey: String? { "id" }
}

private final class Bare: Persistable {
    init() {}
}

// Classes that must come from `init()`: something they store is not in their records.

private final class WithIgnored: Base {
    var note = ""
    var cache: [String: Int] = ["made by init()": 1]
    override class var ignoredProperties: [String] { ["cache"] }
}

private final class WithLazy: Base {
    lazy var shout: String = name.uppercased()
}

private class IgnoringBase: Persistable {
    var id = 0
    var scratch = counted(7)
    required init() {}
    class var ignoredProperties: [String] { ["scratch"] }
}

/// Stores everything it declares; its superclass does not.
private final class BelowIgnoring: IgnoringBase {
    var name = ""
}

@propertyWrapper
private struct Clamped {
    private var stored: Int
    init(wrappedValue: Int) { stored = min(wrappedValue, 10) }
    var wrappedValue: Int {
        get { stored }
        set { stored = min(newValue, 10) }
    }
}

private final class Wrapped: Persistable {
    var id = 0
    @Clamped var level = 3
    init() {}
    static var ignoredProperties: [String] { ["_level"] }
}

private final class HoldsWeak: Persistable {
    var id = 0
    weak var peer: Target?
    init() {}
    static var ignoredProperties: [String] { ["peer"] }
}

private final class Inverse: Persistable {
    var id = 0
    var pointers = LinkingObjects<Pointer>(property: "to")
    init() {}
    static var primaryKey: String? { "id" }
}

private final class Pointer: Persistable {
    var id = 0
    var to: Inverse?
    init() {}
    static var primaryKey: String? { "id" }
}

@Suite("Class models made without init()", .serialized)
struct ClassWithoutInitTests {
    static let seed = SeededRandom.seed(default: 0x2600_1217)

    /// The plan of `type` built with every class model coming from `init()`.
    private static func initPlan<Model: Persistable>(_ type: Model.Type) throws -> TypePlan {
        var factory = CodecFactory(plans: [:])
        factory.makesFreshObjects = false
        let plan = try factory.plan(for: type)
        for plan in factory.newPlans { try plan.checkInverses() }
        return plan
    }

    private static func mapped<Model: Persistable>(_ type: Model.Type, _ record: ManagedObject, plan: TypePlan) -> Result<Model, any Error> {
        Result {
            var context = DecodingContext()
            return try ModelMapping.model(type, from: record, plan: plan, context: &context)
        }
    }

    private static func randomSpot(_ random: inout SeededRandom) -> Spot {
        var spot = Spot()
        spot.name = random.string()
        spot.floor = random.optional { Int($0.integer(Int16.self)) }
        spot.tags = (0..<random.count()).map { _ in random.string() }
        return spot
    }

    private static func randomTarget(_ random: inout SeededRandom) -> Target {
        let target = Target()
        // Distinct keys, so a store keeps each target.
        target.id = Int(truncatingIfNeeded: random.next() >> 2)
        target.label = random.string()
        return target
    }

    private static func randomLeaf(_ random: inout SeededRandom, id: Int) -> Leaf {
        let leaf = Leaf()
        leaf.id = id
        leaf.name = random.string()
        leaf.stamp = Date(timeIntervalSinceReferenceDate: Double(random.integer(Int32.self)))
        leaf.score = random.optional { $0.double() }
        leaf.tags = (0..<random.count()).map { _ in random.string() }
        leaf.spot = randomSpot(&random)
        leaf.key = random.uuid()
        leaf.other = random.optional { randomSpot(&$0) }
        leaf.spots = (0..<random.count()).map { _ in randomSpot(&random) }
        leaf.target = random.optional { randomTarget(&$0) }
        leaf.targets = (0..<random.count()).map { _ in randomTarget(&random) }
        // The same instance twice in one graph.
        if let target = leaf.target, random.chance(30) { leaf.targets.append(target) }
        leaf.code = random.integer()
        leaf.small = random.optional { $0.integer() }
        return leaf
    }

    private static func randomFlat(_ random: inout SeededRandom, id: Int) -> FlatLeaf {
        let flat = FlatLeaf()
        flat.id = id
        flat.when = Date(timeIntervalSinceReferenceDate: Double(random.integer(Int32.self)))
        flat.label = random.optional { $0.string() }
        flat.flag = random.chance(50)
        flat.ratio = random.float()
        flat.key = random.uuid()
        return flat
    }

    /// Replaces one value somewhere in the graph of `record` with one of another kind, or null.
    private static func damage(_ record: ManagedObject, _ random: inout SeededRandom) {
        guard !record.values.isEmpty else { return }
        let index = Int.random(in: 0..<record.values.count, using: &random)
        switch record.values[index] {
        case .object(let linked) where random.chance(50):
            damage(linked, &random)
        case .list(let list) where random.chance(50) && !list.isEmpty:
            if case .object(let linked) = list[Int.random(in: 0..<list.count, using: &random)] {
                damage(linked, &random)
            } else {
                record.values[index] = .list(List([.bool(true)]))
            }
        default:
            record.values[index] = random.pick([.null, .string("damaged"), .int(-1), .bool(true), .double(.nan), .list(List([.int(1)]))])
        }
    }

    /// The same answer from both routes: equal models, or errors that read the same.
    private static func compare<Model>(_ fresh: Result<Model, any Error>, _ reference: Result<Model, any Error>, _ place: String) {
        switch (fresh, reference) {
        case (.success(let fresh), .success(let reference)):
            if let difference = firstDifference(reference, fresh) { Issue.record("\(place): \(difference)") }
        case (.failure(let fresh), .failure(let reference)):
            #expect("\(fresh)" == "\(reference)", "\(place)")
        case (.success, .failure(let error)):
            Issue.record("\(place): read without init(), failed with it: \(error)")
        case (.failure(let error), .success):
            Issue.record("\(place): failed without init(): \(error)")
        }
    }

    @Test("classes that store every property get a recipe; the others keep init()")
    func whichClassesQualify() throws {
        for type in [Leaf.self, Middle.self, Base.self, FlatLeaf.self, Target.self, Roster.self, Bare.self] as [any Persistable.Type] {
            #expect(try PlanCache.shared.plan(for: type).freshObject != nil, "\(type)")
        }
        for type in [WithIgnored.self, WithLazy.self, BelowIgnoring.self, Wrapped.self, HoldsWeak.self, Inverse.self] as [any Persistable.Type] {
            #expect(try PlanCache.shared.plan(for: type).freshObject == nil, "\(type)")
        }
        // Structs have their own route.
        #expect(try PlanCache.shared.plan(for: Spot.self).freshObject == nil)
        #expect(try Self.initPlan(Leaf.self).freshObject == nil)
    }

    @Test("the runtime must confirm the fields: a list that misses one gets no recipe")
    func recipeNeedsEveryField() throws {
        let fields = try #require(FieldLayout.storedFields(of: Leaf.self))
        #expect(EmptyInstance.objectRecipe(for: Leaf.self, fields: fields) != nil)
        #expect(EmptyInstance.objectRecipe(for: Leaf.self, fields: Array(fields.dropLast())) == nil)
        #expect(EmptyInstance.objectRecipe(for: Leaf.self, fields: Array(fields.dropFirst())) == nil)
        #expect(EmptyInstance.objectRecipe(for: Leaf.self, fields: Array(fields.dropFirst(4))) == nil)
        let bare = try #require(FieldLayout.storedFields(of: Bare.self))
        #expect(bare.isEmpty)
        #expect(EmptyInstance.objectRecipe(for: Bare.self, fields: bare) != nil)
    }

    @Test("random class models, intact and damaged: the same models or the same errors as from init()")
    func differential() throws {
        var random = SeededRandom(seed: Self.seed)
        let leafPlan = try PlanCache.shared.plan(for: Leaf.self)
        let leafReference = try Self.initPlan(Leaf.self)
        let rosterPlan = try PlanCache.shared.plan(for: Roster.self)
        let rosterReference = try Self.initPlan(Roster.self)
        let middlePlan = try PlanCache.shared.plan(for: Middle.self)
        let middleReference = try Self.initPlan(Middle.self)
        let flatPlan = try PlanCache.shared.plan(for: FlatLeaf.self)
        let flatReference = try Self.initPlan(FlatLeaf.self)
        let registry = try ModelRegistry(models: [Middle.self, FlatLeaf.self])
        let middleEmbedded = try registry.entry(for: Middle.self).embeddedSchemas
        var compared = 0
        for index in 0..<150 {
            let context = "seed \(Self.seed) #\(index)"
            // Links, lists of links, embedded values, superclasses: through records.
            let leaf = Self.randomLeaf(&random, id: index)
            let record = try leaf.managedObject()
            compared += try Self.compareRecords(leaf, record, plan: leafPlan, reference: leafReference, rounds: 6, random: &random, context)
            // A record without one of the properties: an error on both routes, never a model.
            let name = random.pick(leafPlan.schema.properties).name
            let missing = try record.removing(name)
            let withoutInit: Result<Leaf, any Error> = Self.mapped(Leaf.self, missing, plan: leafPlan)
            #expect(throws: MappingError.self, "\(context) without \(name)") { try withoutInit.get() }
            Self.compare(withoutInit, Self.mapped(Leaf.self, missing, plan: leafReference), "\(context) without \(name)")

            // Lists of linked class models, made in place.
            let roster = Roster()
            roster.id = index
            roster.members = (0..<random.count()).map { _ in Self.randomLeaf(&random, id: Int(random.integer(Int32.self))) }
            roster.flats = (0..<random.count()).map { _ in Self.randomFlat(&random, id: Int(random.integer(Int32.self))) }
            compared += try Self.compareRecords(
                roster, try roster.managedObject(), plan: rosterPlan, reference: rosterReference, rounds: 4, random: &random, "\(context) roster")

            // Stored bytes, read as the store reads a type on its own: the field sink and the flat fill.
            let middle = Self.randomLeaf(&random, id: index).asMiddle()
            compared += try Self.compareBytes(middle, plan: middlePlan, reference: middleReference, embedded: middleEmbedded, random: &random, context)
            let flat = Self.randomFlat(&random, id: index)
            compared += try Self.compareBytes(flat, plan: flatPlan, reference: flatReference, embedded: [:], random: &random, context)
        }
        #expect(compared > 2_000)
    }

    /// Maps `record` (`model`'s) with both plans, then `rounds` damaged copies of it: the plan
    /// under test must give `model` back and agree with the reference on every copy. Returns the
    /// damaged copies compared.
    private static func compareRecords<Model: Persistable>(
        _ model: Model, _ record: ManagedObject, plan: TypePlan, reference: TypePlan, rounds: Int,
        random: inout SeededRandom, _ context: String
    ) throws -> Int {
        let fresh: Result<Model, any Error> = mapped(Model.self, record, plan: plan)
        if let difference = firstDifference(model, try fresh.get()) { Issue.record("\(context): \(difference)") }
        compare(fresh, mapped(Model.self, record, plan: reference), context)
        for round in 0..<rounds {
            let damaged = try model.managedObject()
            damage(damaged, &random)
            compare(mapped(Model.self, damaged, plan: plan), mapped(Model.self, damaged, plan: reference), "\(context) damaged \(round)")
        }
        return rounds
    }

    /// Reads `model`'s bytes, intact and damaged, as the store does, with both plans.
    private static func compareBytes<Model: Persistable>(
        _ model: Model, plan: TypePlan, reference: TypePlan, embedded: [String: ObjectSchema], random: inout SeededRandom, _ context: String
    ) throws -> Int {
        var encoder = RecordEncoder(writesTagless: true)
        let record = try model.managedObject()
        let bytes = try encoder.encode(record)
        let key = try PrimaryKey.storageKey(of: record) ?? .integer(0)
        func read(_ bytes: [UInt8], _ plan: TypePlan) -> Result<Model, any Error> {
            Result { try ModelReader.standaloneModel(Model.self, plan: plan, embedding: embedded, bytes: bytes, key: key) }
        }
        let fresh = read(bytes, plan)
        let place = "\(context) \(Model.self) bytes"
        switch fresh {
        case .success(let read):
            if let difference = firstDifference(model, read) { Issue.record("\(place): \(difference)") }
        case .failure(let error):
            Issue.record("\(place): intact bytes failed: \(error)")
        }
        compare(fresh, read(bytes, reference), place)
        for round in 0..<6 {
            let damaged = random.damaged(bytes)
            compare(read(damaged, plan), read(damaged, reference), "\(place) damaged \(round)")
        }
        return 7
    }

    @Test("init() runs for none of the models a complete record makes, and for each one that needs it")
    func initCallsAreCounted() throws {
        var random = SeededRandom(seed: Self.seed &+ 1)
        let leaves = (0..<20).map { Self.randomLeaf(&random, id: $0) }
        let flats = (0..<20).map { Self.randomFlat(&random, id: $0) }
        let records = try leaves.map { try $0.managedObject() }
        let reference = try Self.initPlan(Leaf.self)
        // Every Leaf and every Target instance read: one call each from init().
        let instances = leaves.map { leaf in 1 + Set(leaf.targets.map(ObjectIdentifier.init) + (leaf.target.map { [ObjectIdentifier($0)] } ?? [])).count }
            .reduce(0, +)

        var before = initCalls.load(ordering: .relaxed)
        let read = try records.map { try Leaf.modelInstance(managedObject: $0) }
        #expect(initCalls.load(ordering: .relaxed) - before == 0)
        before = initCalls.load(ordering: .relaxed)
        let fromInit = try records.map { try Self.mapped(Leaf.self, $0, plan: reference).get() }
        #expect(initCalls.load(ordering: .relaxed) - before == instances)
        #expect(firstDifference(read, fromInit) == nil)

        let store = try Store.inMemory(models: [Leaf.self, FlatLeaf.self, Target.self])
        try store.write { transaction in
            for leaf in leaves { try transaction.add(leaf) }
            for flat in flats { try transaction.add(flat) }
        }
        before = initCalls.load(ordering: .relaxed)
        let stored = try Array(store.objects(Leaf.self))
        let storedFlats = try Array(store.objects(FlatLeaf.self))
        let one = try #require(try store.object(FlatLeaf.self, primaryKey: 3))
        #expect(initCalls.load(ordering: .relaxed) - before == 0)
        #expect(firstDifference(leaves, stored.sorted { $0.id < $1.id }) == nil)
        #expect(firstDifference(flats, storedFlats.sorted { $0.id < $1.id }) == nil)
        #expect(firstDifference(flats[3], one) == nil)

        // Where a stored property is not in the record, init() gives it its value.
        let ignoring = WithIgnored()
        ignoring.cache = ["set by the app": 2]
        ignoring.note = "kept"
        before = initCalls.load(ordering: .relaxed)
        let readIgnoring = try WithIgnored.modelInstance(managedObject: ignoring.managedObject())
        #expect(initCalls.load(ordering: .relaxed) - before == 1)
        #expect(readIgnoring.cache == ["made by init()": 1])
        #expect(readIgnoring.note == "kept")
        let below = BelowIgnoring()
        below.scratch = 99
        below.name = "below"
        before = initCalls.load(ordering: .relaxed)
        let readBelow = try BelowIgnoring.modelInstance(managedObject: below.managedObject())
        #expect(initCalls.load(ordering: .relaxed) - before == 1)
        #expect(readBelow.scratch == 7)
        #expect(readBelow.name == "below")
        let lazy = WithLazy()
        lazy.name = "quiet"
        #expect(try WithLazy.modelInstance(managedObject: lazy.managedObject()).shout == "QUIET")
        _ = try Bare.modelInstance(managedObject: Bare().managedObject())
    }

    @Test("an embedded struct of a class made without init() is made of empty values, then read from the record")
    func embeddedStructWithoutInit() throws {
        let plan = try PlanCache.shared.plan(for: Booking.self)
        #expect(plan.freshObject != nil && plan.directSteps != nil)
        var before = initCalls.load(ordering: .relaxed)
        let fresh = plan.newInstance(Booking.self)
        #expect(initCalls.load(ordering: .relaxed) - before == 0)
        #expect(fresh.stage.name == "" && fresh.stage.seats == 0 && fresh.stage.lit == nil && fresh.stage.inner.tags.isEmpty)

        var random = SeededRandom(seed: Self.seed &+ 3)
        let bookings = (0..<30).map { id in
            let booking = Booking()
            booking.id = id
            booking.note = random.string()
            booking.stage.name = random.string()
            booking.stage.seats = random.integer()
            booking.stage.lit = random.optional { $0.chance(50) }
            booking.stage.inner.name = random.string()
            booking.stage.inner.floor = random.optional { $0.integer() }
            booking.stage.inner.tags = (0..<random.count()).map { _ in random.string() }
            return booking
        }
        let store = try Store.inMemory(models: [Booking.self])
        try store.write { transaction in
            for booking in bookings { try transaction.add(booking) }
        }
        before = initCalls.load(ordering: .relaxed)
        let stored = try Array(store.objects(Booking.self))
        let one = try #require(try store.object(Booking.self, primaryKey: 7))
        #expect(initCalls.load(ordering: .relaxed) - before == 0)
        #expect(firstDifference(bookings, stored.sorted { $0.id < $1.id }) == nil)
        #expect(firstDifference(bookings[7], one) == nil)
    }

    @Test("a class's empty lists, sets and dictionaries are the shared empty values, copied from the recipe's template")
    func emptyContainersFromTheTemplate() throws {
        let plan = try PlanCache.shared.plan(for: Shelves.self)
        #expect(plan.freshObject != nil)
        let before = initCalls.load(ordering: .relaxed)
        let first = plan.newInstance(Shelves.self)
        let second = plan.newInstance(Shelves.self)
        #expect(initCalls.load(ordering: .relaxed) - before == 0)
        for shelves in [first, second] {
            #expect(shelves.names.isEmpty && shelves.codes.isEmpty && shelves.blobs.isEmpty && shelves.moments.isEmpty)
            #expect(shelves.ids.isEmpty && shelves.counts.isEmpty && shelves.spots.isEmpty && shelves.maybe == nil)
            // The very references `[]`, `Set()` and `[:]` hold, which the runtime never frees.
            #expect(unsafeBitCast(shelves.names, to: UInt.self) == unsafeBitCast([Int](), to: UInt.self))
            #expect(unsafeBitCast(shelves.spots, to: UInt.self) == unsafeBitCast([Int](), to: UInt.self))
            #expect(unsafeBitCast(shelves.codes, to: UInt.self) == unsafeBitCast(Set<UInt8>(), to: UInt.self))
            #expect(unsafeBitCast(shelves.counts, to: UInt.self) == unsafeBitCast([String: Bool](), to: UInt.self))
        }
        // Values, not shared storage: a change to one instance's containers leaves the other's empty.
        first.names.append("one")
        first.codes.insert(3)
        first.counts["two"] = 2
        first.spots.append(Spot())
        #expect(second.names.isEmpty && second.codes.isEmpty && second.counts.isEmpty && second.spots.isEmpty)
        #expect(first.names == ["one"] && first.codes == [3] && first.counts == ["two": 2] && first.spots.count == 1)

        // Read from records, intact and damaged, and as the store reads them: as from init().
        var random = SeededRandom(seed: Self.seed &+ 4)
        let reference = try Self.initPlan(Shelves.self)
        let embedded = try ModelRegistry(models: [Shelves.self]).entry(for: Shelves.self).embeddedSchemas
        for index in 0..<200 {
            let shelves = Shelves()
            shelves.id = index
            shelves.names = (0..<random.count()).map { _ in random.string() }
            shelves.codes = Set((0..<random.count()).map { _ in random.integer(Int.self) })
            shelves.blobs = (0..<random.count()).map { _ in random.data() }
            shelves.label = random.string()
            shelves.moments = Set((0..<random.count()).map { _ in Date(timeIntervalSinceReferenceDate: Double(random.integer(Int32.self))) })
            shelves.ids = (0..<random.count()).map { _ in random.uuid() }
            shelves.counts = Dictionary((0..<random.count()).map { _ in (random.string(), random.integer(Int.self)) }, uniquingKeysWith: { first, _ in first })
            shelves.spots = (0..<random.count()).map { _ in Self.randomSpot(&random) }
            shelves.maybe = random.optional { random in (0..<random.count()).map { _ in random.double() } }
            let context = "seed \(Self.seed &+ 4) #\(index)"
            _ = try Self.compareRecords(shelves, try shelves.managedObject(), plan: plan, reference: reference, rounds: 4, random: &random, context)
            _ = try Self.compareBytes(shelves, plan: plan, reference: reference, embedded: embedded, random: &random, context)
        }
    }

    @Test("every instance made is destroyed once, whether its fill succeeds or fails half-way")
    func deinitCounts() throws {
        let leaf = Leaf()
        leaf.name = "held"
        leaf.tags = ["a", "b"]
        leaf.target = Target()
        leaf.targets = (1...3).map { id in
            let target = Target()
            target.id = id
            target.label = "target \(id)"
            return target
        }
        try withExtendedLifetime(leaf) {
            // `code` is filled after the links: the leaf and its four targets exist when it fails.
            let bad = try leaf.managedObject().replacing("code", kind: .string, with: .string("not a number"))
            let good = try leaf.managedObject()
            for plan in [try PlanCache.shared.plan(for: Leaf.self), try Self.initPlan(Leaf.self)] {
                var before = deinitCalls.load(ordering: .relaxed)
                for _ in 0..<10 {
                    let failed: Result<Leaf, any Error> = Self.mapped(Leaf.self, bad, plan: plan)
                    #expect(throws: MappingError.self) { try failed.get() }
                }
                #expect(deinitCalls.load(ordering: .relaxed) - before == 10 * 5)
                before = deinitCalls.load(ordering: .relaxed)
                do {
                    let read = try (0..<10).map { _ in try Self.mapped(Leaf.self, good, plan: plan).get() }
                    withExtendedLifetime(read) {
                        #expect(read.allSatisfy { $0.targets.count == 3 && $0.name == "held" })
                        #expect(deinitCalls.load(ordering: .relaxed) - before == 0)
                    }
                }
                #expect(deinitCalls.load(ordering: .relaxed) - before == 10 * 5)
            }
        }
    }

    @Test("many threads make instances of the same classes at once")
    func concurrentReads() {
        let failures = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            var random = SeededRandom(seed: Self.seed &+ 2 &+ UInt64(thread))
            for _ in 0..<20 {
                let roster = Roster()
                roster.members = (0..<4).map { Self.randomLeaf(&random, id: $0) }
                roster.flats = (0..<4).map { Self.randomFlat(&random, id: $0) }
                do {
                    let copy = try Roster.modelInstance(managedObject: roster.managedObject())
                    if firstDifference(roster, copy) != nil { failures.add(1, ordering: .relaxed) }
                } catch {
                    failures.add(1, ordering: .relaxed)
                }
            }
        }
        #expect(failures.load(ordering: .relaxed) == 0)
    }
}

private extension Leaf {
    /// A `Middle` with this leaf's values for the properties it has.
    func asMiddle() -> Middle {
        let middle = Middle()
        middle.id = id
        middle.name = name
        middle.stamp = stamp
        middle.score = score
        middle.tags = tags
        middle.spot = spot
        middle.key = key
        return middle
    }
}
