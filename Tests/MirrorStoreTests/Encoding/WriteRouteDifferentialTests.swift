import Foundation
import Testing
import TestSupport
@testable import MirrorStore
import MirrorStoreEngine

/// The direct write (`ModelMapping.writeDirectly`, a model's bytes straight from its fields by
/// its plan's direct steps) against the general one (the model's record from `managedObject()`,
/// encoded by `RecordEncoder`, its key from `PrimaryKey.storageKey(of:)`), on random models: the
/// same bytes and key, tagged and tagless, for intact values; for values the encoder refuses
/// (NaN dates anywhere in the model) the direct write declines and the general path reports them;
/// and a plan without direct steps is never written directly. The store's `add` takes the direct
/// write: what it stores is what the general path encodes.
@Suite("Write route differentials")
struct WriteRouteDifferentialTests {
    static let seed = SeededRandom.seed(default: 0x26_2611)

    typealias Read = ReadRouteDifferentialTests

    /// Every single-value type, required and optional, decimals and URLs included.
    struct Scalars: Persistable {
        var id: UInt64 = 0
        var bool = false
        var int = 0
        var int8: Int8 = 0
        var int16: Int16 = 0
        var int32: Int32 = 0
        var int64: Int64 = 0
        var uint: UInt = 0
        var uint8: UInt8 = 0
        var uint16: UInt16 = 0
        var uint32: UInt32 = 0
        var float: Float = 0
        var double = 0.0
        var string = ""
        var data = Data()
        var date = Date(timeIntervalSinceReferenceDate: 0)
        var uuid = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        var decimal = Decimal()
        var url = URL(fileURLWithPath: "/")
        var optionalBool: Bool?
        var optionalInt16: Int16?
        var optionalUInt: UInt?
        var optionalFloat: Float?
        var optionalDouble: Double?
        var optionalString: String?
        var optionalData: Data?
        var optionalDate: Date?
        var optionalUUID: UUID?
        var optionalDecimal: Decimal?
        var optionalURL: URL?
        init() {}
        static var primaryKey: String? { "id" }
    }

    /// Required single values only, more than eight `Bool`s among them: written tagless where the
    /// file allows it. Keyed by a UUID.
    final class Switches: Persistable {
        var id = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        var a = false, b = false, c = false, d = false, e = false
        var count: Int8 = 0
        var f = false, g = false, h = false, i = false, j = false
        var label = ""
        var stamp = Date(timeIntervalSinceReferenceDate: 0)
        var price = Decimal()
        var link = URL(fileURLWithPath: "/")
        var ratio: Float = 0
        init() {}
        static var primaryKey: String? { "id" }
    }

    /// No primary key: the store gives each a generated identity.
    struct Unkeyed: Persistable {
        var name = ""
        var values: [Int16] = []
        var flags: Set<Bool> = []
        var hall = Read.Hall()
        init() {}
    }

    static func randomDate(_ random: inout SeededRandom) -> Date {
        Date(timeIntervalSinceReferenceDate: random.chance(10) ? random.pick([.infinity, -.infinity, -0.0]) : Double(random.integer(Int32.self)) / 8)
    }

    static func randomDecimal(_ random: inout SeededRandom) -> Decimal {
        Decimal(sign: random.chance(50) ? .minus : .plus, exponent: Int.random(in: -20...20, using: &random),
                significand: Decimal(UInt32.random(in: 0 ... .max, using: &random)))
    }

    static func randomURL(_ random: inout SeededRandom) -> URL {
        URL(string: random.pick(["https://example.com/a?b=c", "file:///tmp/a%20b", "mailto:a@b.c", "x:y"])) ?? URL(fileURLWithPath: "/")
    }

    static func randomScalars(_ random: inout SeededRandom) -> Scalars {
        var model = Scalars()
        model.id = random.integer()
        model.bool = random.chance(50)
        model.int = random.integer()
        model.int8 = random.integer()
        model.int16 = random.integer()
        model.int32 = random.integer()
        model.int64 = random.integer()
        model.uint = random.integer()
        model.uint8 = random.integer()
        model.uint16 = random.integer()
        model.uint32 = random.integer()
        model.float = random.float()
        model.double = random.double()
        model.string = random.string()
        model.data = random.data()
        model.date = randomDate(&random)
        model.uuid = random.uuid()
        model.decimal = randomDecimal(&random)
        model.url = randomURL(&random)
        model.optionalBool = random.optional { $0.chance(50) }
        model.optionalInt16 = random.optional { $0.integer() }
        model.optionalUInt = random.optional { $0.integer() }
        model.optionalFloat = random.optional { $0.float() }
        model.optionalDouble = random.optional { $0.double() }
        model.optionalString = random.optional { $0.string() }
        model.optionalData = random.optional { $0.data() }
        model.optionalDate = random.optional { randomDate(&$0) }
        model.optionalUUID = random.optional { $0.uuid() }
        model.optionalDecimal = random.optional { randomDecimal(&$0) }
        model.optionalURL = random.optional { randomURL(&$0) }
        return model
    }

    static func randomSwitches(_ random: inout SeededRandom) -> Switches {
        let model = Switches()
        model.id = random.uuid()
        (model.a, model.b, model.c, model.d, model.e) = (random.chance(50), random.chance(50), random.chance(50), random.chance(50), random.chance(50))
        (model.f, model.g, model.h, model.i, model.j) = (random.chance(50), random.chance(50), random.chance(50), random.chance(50), random.chance(50))
        model.count = random.integer()
        model.label = random.string()
        model.stamp = randomDate(&random)
        model.price = randomDecimal(&random)
        model.link = randomURL(&random)
        model.ratio = random.float()
        return model
    }

    static func randomUnkeyed(_ random: inout SeededRandom) -> Unkeyed {
        var model = Unkeyed()
        model.name = random.string()
        model.values = (0..<random.count()).map { _ in random.integer() }
        model.flags = Set((0..<random.count()).map { _ in random.chance(50) })
        model.hall = Read.randomHall(&random)
        return model
    }

    static func randomReading(_ random: inout SeededRandom, index: Int) -> Read.Reading {
        var reading = Read.Reading()
        reading.id = UInt32(index)
        reading.hall = Read.randomHall(&random)
        reading.values = (0..<random.count()).map { _ in random.float() }
        reading.counts = Set((0..<random.count()).map { _ in random.integer(UInt16.self) })
        reading.spot = Read.randomSpot(&random)
        return reading
    }

    /// The direct write of `model` (opened from an existential, so that its fields are read).
    static func direct<Model: Persistable>(_ model: Model, tagless: Bool) throws -> DirectRecord? {
        ModelMapping.writeDirectly(model, plan: try PlanCache.shared.plan(for: Model.self), tagless: tagless)
    }

    /// The general path's bytes and key for `model`, or nil when it refuses the model.
    static func general<Model: Persistable>(_ model: Model, tagless: Bool) -> DirectRecord? {
        guard let record = try? model.managedObject() else { return nil }
        var encoder = RecordEncoder(writesTagless: tagless)
        guard let bytes = try? encoder.encode(record) else { return nil }
        // A model without a primary key has none (nil), which is not a failure.
        let key: StorageKey?
        do { key = try PrimaryKey.storageKey(of: record) } catch { return nil }
        return DirectRecord(key: key, bytes: bytes)
    }

    /// Compares both routes on `model`, tagged and tagless; returns how many writes agreed.
    @discardableResult
    static func compare<Model: Persistable>(_ model: Model, _ context: @autoclosure () -> String) throws -> Int {
        let plan = try PlanCache.shared.plan(for: Model.self)
        var agreed = 0
        for tagless in [false, true] {
            let direct = try Self.direct(model, tagless: tagless)
            let general = general(model, tagless: tagless)
            guard let direct else {
                #expect(plan.directSteps == nil || general == nil, "\(context()), tagless \(tagless): the direct write declined what the general path writes")
                continue
            }
            guard let general else {
                Issue.record("\(context()), tagless \(tagless): the direct write took a model the general path refuses")
                continue
            }
            #expect(direct.bytes == general.bytes, "\(context()), tagless \(tagless): bytes differ")
            #expect(direct.key == general.key, "\(context()), tagless \(tagless): keys differ")
            if direct.bytes == general.bytes && direct.key == general.key { agreed += 1 }
        }
        return agreed
    }

    @Test("which plans are written directly")
    func directPlans() throws {
        for type in [Scalars.self, Switches.self, Unkeyed.self, Read.Happening.self, Read.Reading.self] as [any Persistable.Type] {
            #expect(try PlanCache.shared.plan(for: type).directSteps != nil, "\(type)")
        }
        var random = SeededRandom(seed: Self.seed ^ 0x77)
        // Enums, dictionaries, lists of embedded models, embedded classes, `let` properties: the
        // general path alone.
        let general: [any Persistable] = [
            PropertyBasedMappingTests.randomModel(&random), Read.WithEmbedded(), Read.HoldsCached(),
            Read.Frozen(id: 1, name: "a", values: [1], weight: nil), Read.Holder(),
        ]
        for model in general {
            #expect(try PlanCache.shared.plan(for: type(of: model)).directSteps == nil, "\(type(of: model))")
            #expect(try Self.direct(model, tagless: true) == nil, "\(type(of: model))")
        }
    }

    @Test("intact models: the same bytes and key on both routes, tagged and tagless")
    func routesAgree() throws {
        var random = SeededRandom(seed: Self.seed)
        var agreed = 0
        for index in 0..<300 {
            let context = "seed \(Self.seed), #\(index)"
            agreed += try Self.compare(Self.randomScalars(&random), context)
            agreed += try Self.compare(Self.randomSwitches(&random), context)
            agreed += try Self.compare(Self.randomUnkeyed(&random), context)
            agreed += try Self.compare(Read.randomHappening(&random, index: index), context)
            agreed += try Self.compare(Self.randomReading(&random, index: index), context)
            let flat = Read.FlatClass()
            flat.id = random.integer()
            flat.name = random.string()
            flat.score = random.optional { $0.double() }
            flat.flag = random.chance(50)
            flat.stamp = Self.randomDate(&random)
            flat.code = random.integer()
            agreed += try Self.compare(flat, context)
        }
        #expect(agreed == 300 * 6 * 2)
    }

    @Test("a NaN date anywhere in a model: the direct write declines it, and the store reports it as the general path does")
    func refusedValues() throws {
        var random = SeededRandom(seed: Self.seed ^ 0x4E)
        let nan = Date(timeIntervalSinceReferenceDate: .nan)
        var models: [any Persistable] = []
        for _ in 0..<40 {
            var scalars = Self.randomScalars(&random)
            if random.chance(50) { scalars.date = nan } else { scalars.optionalDate = nan }
            models.append(scalars)
            let happening = Read.randomHappening(&random, index: 0)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: happening.startsAt = nan
            case 1: happening.moments.insert(nan, at: Int.random(in: 0...happening.moments.count, using: &random))
            default: happening.endsAt = nan
            }
            models.append(happening)
            let switches = Self.randomSwitches(&random)
            switches.stamp = nan
            models.append(switches)
        }
        for (index, model) in models.enumerated() {
            for tagless in [false, true] {
                #expect(try Self.direct(model, tagless: tagless) == nil, "seed \(Self.seed), #\(index)")
                #expect(Self.general(model, tagless: tagless) == nil, "seed \(Self.seed), #\(index)")
            }
        }
        try withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/refused.store", models: [Scalars.self, Read.Happening.self, Switches.self])
            for (index, model) in models.enumerated() {
                #expect(throws: StoreError.self, "#\(index)") { try store.write { try $0.add(model) } }
                let expected = try Self.generalFailure(model)
                do {
                    try store.write { try $0.add(model) }
                } catch {
                    #expect("\(error)" == expected, "seed \(Self.seed), #\(index)")
                }
            }
            #expect(try store.objects(Scalars.self).count == 0)
        }
    }

    /// What saving `model` by its record throws, as text.
    static func generalFailure(_ model: any Persistable) throws -> String {
        var encoder = RecordEncoder(writesTagless: true)
        do {
            _ = try encoder.encode(try model.managedObject())
            return "no failure"
        } catch {
            return "\(error)"
        }
    }

    @Test("the store's add stores the bytes the general path encodes, and reads them back")
    func storeTakesDirectWrites() throws {
        var random = SeededRandom(seed: Self.seed ^ 0x5A)
        try withTemporaryDirectory { directory in
            let store = try Store(path: directory + "/direct.store", models: [Scalars.self, Switches.self, Unkeyed.self, Read.Happening.self])
            var scalars: [Scalars] = []
            var switches: [Switches] = []
            var unkeyed: [Unkeyed] = []
            var happenings: [Read.Happening] = []
            for index in 0..<150 {
                var model = Self.randomScalars(&random)
                model.id = UInt64(index) &* 0x9E37_79B9_7F4A_7C15
                scalars.append(model)
                switches.append(Self.randomSwitches(&random))
                unkeyed.append(Self.randomUnkeyed(&random))
                happenings.append(Read.randomHappening(&random, index: index))
            }
            try store.write { transaction in
                try transaction.add(contentsOf: scalars)
                try transaction.add(contentsOf: switches)
                try transaction.add(contentsOf: unkeyed)
                try transaction.add(contentsOf: happenings)
            }
            let snapshot = store.observation.engine.snapshot()
            func check<Model: Persistable>(_ models: [Model], keys: [StorageKey]) throws {
                let typeName = try PlanCache.shared.plan(for: Model.self).typeName
                for (model, key) in zip(models, keys) {
                    let expected = try #require(Self.general(model, tagless: true))
                    #expect(try snapshot.value(type: typeName, key: key) == expected.bytes, "seed \(Self.seed), \(typeName) \(key)")
                }
            }
            try check(scalars, keys: scalars.map { .integer(Int64(bitPattern: $0.id)) })
            try check(switches, keys: switches.map { .bytes(withUnsafeBytes(of: $0.id.uuid) { Array($0) }) })
            try check(unkeyed, keys: (1...Int64(unkeyed.count)).map { .integer($0) })
            try check(happenings, keys: happenings.map { .string($0.code) })
            let read = try store.objects(Read.Happening.self).map { $0 }
            #expect(read.count == happenings.count)
            for happening in happenings {
                let stored = try #require(try store.object(Read.Happening.self, primaryKey: happening.code))
                if let difference = firstDifference(happening, stored) { Issue.record("seed \(Self.seed): \(difference)") }
            }
        }
    }
}
