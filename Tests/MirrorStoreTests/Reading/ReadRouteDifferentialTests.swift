import Foundation
import Testing
import TestSupport
@testable import MirrorStore
import MirrorStoreEngine

/// The fast routes from stored bytes to a model against the general one, on random models, intact
/// and damaged: the store's reads of a standalone type (the direct fill for a model whose plan
/// has direct steps, a field sink for the others) against decoding a record and mapping
/// it, both with the plan's own schema (the flat-record route) and with an equal copy of it (the
/// general route, which matches fields by position). On intact bytes every route gives the model
/// written; on damaged bytes every route fails, or every route gives the same model. Every route
/// checks, as the store does, that the record holds the key it is stored under.
@Suite("Read route differentials")
struct ReadRouteDifferentialTests {
    static let seed = SeededRandom.seed(default: 0x200_2402)

    /// A flat class: every field a single value.
    final class FlatClass: Persistable {
        var id = 0
        var name = ""
        var score: Double?
        var flag = false
        var stamp = Date(timeIntervalSinceReferenceDate: 0)
        var code: UInt16 = 0
        init() {}
        static var primaryKey: String? { "id" }
    }

    /// A flat struct.
    struct FlatStruct: Persistable {
        var id = 0
        var label: String?
        var ratio: Float = 0
        var uuid = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        var blob = Data()
        init() {}
        static var primaryKey: String? { "id" }
    }

    /// A class keyed by a UUID, with optionals of several kinds: the direct fill checks the
    /// stored key in place.
    final class UUIDKeyed: Persistable {
        var id = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        var owner = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        var ended: Date?
        var device: String?
        var rating: Double?
        var events: Int?
        init() {}
        static var primaryKey: String? { "id" }
    }

    /// An immutable struct, made fresh from its record.
    struct Frozen: Persistable {
        let id: Int
        let name: String
        let values: [Int]
        let weight: Double?
        static var primaryKey: String? { "id" }
    }

    /// Embedded (no primary key) in `WithEmbedded`.
    struct Place: Persistable {
        var name = ""
        var floor: Int?
        var tags: [String] = []
        init() {}
    }

    /// An embedded class that embeds a struct in turn.
    final class Inner: Persistable {
        var label = ""
        var place = Place()
        init() {}
    }

    /// A model that embeds models and links to none: the store reads it on its own (the
    /// standalone route), its embedded records by their schemas in the plan.
    final class WithEmbedded: Persistable {
        var id = 0
        var place = Place()
        var other: Place?
        var places: [Place] = []
        var inner = Inner()
        var note = ""
        init() {}
        static var primaryKey: String? { "id" }
    }

    /// A model whose embedded model links to a model with a primary key: not standalone.
    struct Holder: Persistable {
        var id = 0
        var wrapper = Wrapper()
        init() {}
        static var primaryKey: String? { "id" }
    }

    struct Wrapper: Persistable {
        var target: FlatClass?
        init() {}
    }

    /// Embedded two levels deep: every field read directly.
    struct Spot: Persistable {
        var label = ""
        var level: Int8 = 0
        var lit: Bool?
        init() {}
    }

    /// Embedded in `Happening` and `Reading`: single values, optionals, arrays and sets of them,
    /// and an embedded struct, all filled in place.
    struct Hall: Persistable {
        var name = ""
        var city: String?
        var capacity = 0
        var spot = Spot()
        var tags: [String] = []
        var codes: Set<Int> = []
        init() {}
    }

    /// A class with a string key whose every field is read directly: embedded structs, optionals,
    /// arrays and sets of single values.
    final class Happening: Persistable {
        var code = ""
        var startsAt = Date(timeIntervalSinceReferenceDate: 0)
        var endsAt: Date?
        var attendees: Int?
        var hall = Hall()
        var scores: [Int] = []
        var weights: [Double] = []
        var small: [UInt8] = []
        var wide: [Int64] = []
        var ids: [UUID] = []
        var blobs: [Data] = []
        var flags: [Bool] = []
        var moments: [Date] = []
        var names: Set<String> = []
        var note: String?
        var spot = Spot()
        init() {}
        static var primaryKey: String? { "code" }
    }

    /// A struct root with embedded structs, read directly too.
    struct Reading: Persistable {
        var id: UInt32 = 0
        var hall = Hall()
        var values: [Float] = []
        var counts: Set<UInt16> = []
        var spot = Spot()
        init() {}
        static var primaryKey: String? { "id" }
    }

    /// Embedded with an ignored property, which a fill in place would leave as the embedding
    /// model's `init()` set it: not embeddable, so `HoldsCached` is read by the general path.
    struct Cached: Persistable {
        var value = 0
        var cache = 7
        init() {}
        static var ignoredProperties: [String] { ["cache"] }
    }

    final class HoldsCached: Persistable {
        var id = 0
        var cached = Cached()
        init() { cached.cache = 99 }
        static var primaryKey: String? { "id" }
    }

    /// A flat class keyed by a String, every property a required single value so that its records
    /// may be tagless: the direct fill gives its key field the key's own text.
    final class Labelled: Persistable {
        var name = ""
        var count = 0
        var note = ""
        var flag = false
        var stamp = Date(timeIntervalSinceReferenceDate: 0)
        init() {}
        static var primaryKey: String? { "name" }
    }

    @Test("a String key's field takes the key: every route agrees, tagged and tagless, intact and damaged, the key spelled as stored or not")
    func stringKeyFieldRoutesAgree() throws {
        var random = SeededRandom(seed: Self.seed ^ 0x5E)
        let plan = try PlanCache.shared.plan(for: Labelled.self)
        #expect(plan.directSteps != nil && plan.schema.taglessLayout != nil)
        var compared = 0
        for index in 0..<300 {
            let model = Labelled()
            // Short keys (small strings) and long ones (allocated), ASCII or not.
            model.name = random.chance(30) ? "\(index)" : "\(index)-" + random.string()
            model.count = random.integer()
            model.note = random.string()
            model.flag = random.chance(50)
            model.stamp = Date(timeIntervalSinceReferenceDate: Double(random.integer(Int32.self)))
            let record = try model.managedObject()
            let key = try #require(try PrimaryKey.storageKey(of: record))
            for tagless in [false, true] {
                // The direct fill itself takes the intact record, whichever its form.
                var encoder = RecordEncoder(writesTagless: tagless)
                let bytes = try encoder.encode(record)
                var instance = Labelled()
                #expect(ModelMapping.fillDirectly(&instance, plan: plan, reading: bytes, key: key), "seed \(Self.seed), #\(index), tagless \(tagless)")
                if let difference = firstDifference(model, instance) { Issue.record("seed \(Self.seed), #\(index), tagless \(tagless): \(difference)") }
                compared += try check(model, index: index, random: &random, tagless: tagless)
            }
        }
        // The same text spelled otherwise than stored: the direct fill declines it, and the
        // routes give one answer.
        for (stored, asked) in [("caf\u{E9}-long-enough-to-allocate", "cafe\u{301}-long-enough-to-allocate"), ("\u{E9}", "e\u{301}"), ("e\u{301}", "\u{E9}")] {
            let model = Labelled()
            model.name = stored
            for tagless in [false, true] {
                var encoder = RecordEncoder(writesTagless: tagless)
                let bytes = try encoder.encode(try model.managedObject())
                var instance = Labelled()
                #expect(!ModelMapping.fillDirectly(&instance, plan: plan, reading: bytes, key: .string(asked)))
                let outcomes = readings(of: bytes, as: Labelled.self, plan: plan, key: .string(asked))
                let answers = outcomes.map { outcome in (try? outcome.reading.get()).map { "\($0.name.unicodeScalars.map(\.value))" } ?? "failed" }
                #expect(Set(answers).count == 1, "\(stored) asked as \(asked), tagless \(tagless): \(answers)")
            }
        }
        #expect(compared > 20_000)
    }

    /// Every type the direct fill reads inline (`QuickValueReadingUnsafe.swift`), required and
    /// optional, beside an integer key.
    final class QuickForms: Persistable {
        var id = 0
        var int = 0
        var intOptional: Int?
        var double = 0.0
        var doubleOptional: Double?
        var date = Date(timeIntervalSinceReferenceDate: 0)
        var dateOptional: Date?
        var text = ""
        var textOptional: String?
        var flag = false
        var flagOptional: Bool?
        init() {}
        static var primaryKey: String? { "id" }
    }

    @Test("a value the direct fill reads inline, in every form a record may hold, is read as the general route reads it")
    func inlineReadsAgreeOnEveryForm() throws {
        let plan = try PlanCache.shared.plan(for: QuickForms.self)
        #expect(plan.directSteps != nil && plan.schema.taglessLayout == nil)
        func bits(_ value: Double) -> [UInt8] { withUnsafeBytes(of: value.bitPattern.littleEndian) { Array($0) } }
        let long = Array("a string long enough to allocate".utf8)
        // Each value's own forms, the other types' forms, and bytes that are no value.
        let forms: [[UInt8]] = [
            [ValueTag.null.rawValue], [ValueTag.false.rawValue], [ValueTag.true.rawValue],
            [ValueTag.int.rawValue, 10], [ValueTag.int.rawValue, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],
            [ValueTag.int.rawValue] + Array(repeating: 0xFF, count: 10) + [0x01], [ValueTag.int.rawValue, 0x80],
            [ValueTag.uint.rawValue, 7], [ValueTag.float.rawValue, 0, 0, 0xC0, 0x3F],
            [ValueTag.double.rawValue] + bits(1.5), [ValueTag.double.rawValue] + bits(.nan), [ValueTag.double.rawValue, 1, 2],
            [ValueTag.date.rawValue] + bits(100), [ValueTag.date.rawValue] + bits(.nan), [ValueTag.date.rawValue] + bits(-.infinity),
            [ValueTag.string.rawValue, 3] + Array("abc".utf8), [ValueTag.string.rawValue, 0], [ValueTag.string.rawValue, UInt8(long.count)] + long,
            [ValueTag.string.rawValue, 2, 0xFF, 0xFE], [ValueTag.string.rawValue, 2, 0xC3, 0xA9], [ValueTag.string.rawValue, 9, 0x61],
            // The longest small string, one byte more, and a short one whose last byte is not ASCII.
            [ValueTag.string.rawValue, 15] + Array("fifteen bytes!!".utf8), [ValueTag.string.rawValue, 16] + Array("sixteen bytes!!!".utf8),
            [ValueTag.string.rawValue, 3, 0x61, 0x62, 0xC3], [ValueTag.string.rawValue, 4, 0x61, 0x62, 0xC3, 0xA9],
            [ValueTag.data.rawValue, 1, 0], [ValueTag.uuid.rawValue] + Array(repeating: 1, count: 16), [ValueTag.list.rawValue, 0],
            [ValueTag.embedded.rawValue, 0], [99], [],
        ]
        // A value every field holds, in the form the encoder writes it.
        let valid: [String: [UInt8]] = [
            "int": [ValueTag.int.rawValue, 4], "intOptional": [ValueTag.null.rawValue],
            "double": [ValueTag.double.rawValue] + bits(2.5), "doubleOptional": [ValueTag.double.rawValue] + bits(-3),
            "date": [ValueTag.date.rawValue] + bits(5), "dateOptional": [ValueTag.null.rawValue],
            "text": [ValueTag.string.rawValue, 1, 0x7A], "textOptional": [ValueTag.string.rawValue, UInt8(long.count)] + long,
            "flag": [ValueTag.true.rawValue], "flagOptional": [ValueTag.false.rawValue],
        ]
        let names = plan.schema.properties.map(\.name)
        var agreed = 0
        for (position, name) in names.enumerated() where name != "id" {
            for (number, form) in forms.enumerated() {
                // The key 6 first, as written (zigzag 12), then the values in schema order.
                var bytes: [UInt8] = [UInt8(names.count)]
                for (other, otherName) in names.enumerated() {
                    if otherName == "id" { bytes += [ValueTag.int.rawValue, 12] } else { bytes += other == position ? form : try #require(valid[otherName]) }
                }
                let outcomes = readings(of: bytes, as: QuickForms.self, plan: plan, key: .integer(6))
                let models = expectRoutesAgree(outcomes, place: "\(name), form #\(number) \(form)")
                if !models.isEmpty { agreed += 1 }
            }
        }
        // Each field's own forms at least were read.
        #expect(agreed >= 20)
    }

    /// Text of `length` ASCII bytes (printable, so valid UTF-8), or with its last byte above 0x7F
    /// (then `length` bytes that are not UTF-8) when `ascii` is false.
    static func asciiText(_ random: inout SeededRandom, length: Int, ascii: Bool = true) -> [UInt8] {
        var bytes = (0..<length).map { _ in UInt8.random(in: 32...126, using: &random) }
        if !ascii, length > 0 { bytes[length - 1] = 0xC3 }
        return bytes
    }

    @Test("strings read inline, short (two words) or long, into fields that held empty or other strings, are what the general route reads, intact and damaged")
    func inlineStringsAgreeWhateverTheFieldHeld() throws {
        var random = SeededRandom(seed: Self.seed ^ 0x57)
        let plan = try PlanCache.shared.plan(for: QuickForms.self)
        #expect(plan.directSteps != nil)
        var filled = 0
        for index in 0..<300 {
            let model = QuickForms()
            model.id = index
            // Every length around the 15 bytes a small string holds, ASCII or not, and random text.
            func text(_ random: inout SeededRandom) -> String {
                if random.chance(30) { return random.string() }
                let bytes = Self.asciiText(&random, length: Int.random(in: 0...20, using: &random), ascii: random.chance(90))
                return String(decoding: bytes, as: UTF8.self)
            }
            model.text = text(&random)
            model.textOptional = random.optional { text(&$0) }
            model.int = random.integer()
            model.date = Date(timeIntervalSinceReferenceDate: Double(random.integer(Int32.self)))
            let record = try model.managedObject()
            let key = try #require(try PrimaryKey.storageKey(of: record))
            var encoder = RecordEncoder(writesTagless: false)
            let bytes = try encoder.encode(record)
            for damage in 0..<9 {
                let input = damage == 0 ? bytes : random.damaged(bytes)
                let place = "seed \(Self.seed), #\(index), damage \(damage)"
                let models = expectRoutesAgree(readings(of: input, as: QuickForms.self, plan: plan, key: key), place: place)
                if damage == 0, let read = models.first, let difference = firstDifference(model, read) { Issue.record("\(place): \(difference)") }
                // Straight into an instance whose strings are not empty (short and long), as a
                // model's own `init()` may leave them: the old values released, the new ones read
                // as the routes read them.
                var held = QuickForms()
                held.text = String(decoding: Self.asciiText(&random, length: Int.random(in: 0...40, using: &random)), as: UTF8.self)
                held.textOptional = random.chance(50) ? nil : String(decoding: Self.asciiText(&random, length: Int.random(in: 0...40, using: &random)), as: UTF8.self)
                guard ModelMapping.fillDirectly(&held, plan: plan, reading: input, key: key) else { continue }
                filled += 1
                guard let read = models.first else {
                    Issue.record("\(place): the direct fill read bytes every route refused")
                    continue
                }
                if let difference = firstDifference(read, held) { Issue.record("\(place): \(difference)") }
            }
        }
        #expect(filled > 300)
    }

    /// Keyed by each integer width the fast way to a storage key meets (`PrimaryKey.integerKey`).
    final class IntKeyed: Persistable {
        var id = 0
        init() {}
        static var primaryKey: String? { "id" }
    }

    final class Int64Keyed: Persistable {
        var id: Int64 = 0
        init() {}
        static var primaryKey: String? { "id" }
    }

    final class Int32Keyed: Persistable {
        var id: Int32 = 0
        init() {}
        static var primaryKey: String? { "id" }
    }

    final class UInt64Keyed: Persistable {
        var id: UInt64 = 0
        init() {}
        static var primaryKey: String? { "id" }
    }

    @Test("a key given as any integer or a string becomes the storage key, or the error, the general check gives, whatever the key's type")
    func integerKeysAgreeWithTheGeneralCheck() throws {
        let types: [any Persistable.Type] = [IntKeyed.self, Int64Keyed.self, Int32Keyed.self, UInt64Keyed.self, Labelled.self]
        let registry = try ModelRegistry(models: types)
        var random = SeededRandom(seed: Self.seed ^ 0x6B)
        var compared = 0
        func general(_ value: some RecordPrimitive, _ entry: ModelRegistry.Entry) -> StorageKey? {
            let recordValue = value.recordValue
            guard let kind = entry.primaryKeyKind, entry.primaryKeyValueType.map({ $0.accepts(recordValue) }) ?? kind.accepts(recordValue) else { return nil }
            return PrimaryKey.storageKey(for: recordValue)
        }
        func expectAgreement(_ value: some RecordPrimitive, _ entry: ModelRegistry.Entry) {
            let fast = try? registry.key(value, for: entry)
            #expect(fast == general(value, entry), "seed \(Self.seed ^ 0x6B), \(entry.plan.typeName) keyed by \(value) of \(type(of: value))")
            compared += 1
        }
        func expectAgreement<Model: Persistable>(on type: Model.Type, _ number: UInt64) throws {
            let entry = try registry.entry(for: type)
            expectAgreement(Int(truncatingIfNeeded: number), entry)
            expectAgreement(Int64(bitPattern: number), entry)
            expectAgreement(Int32(truncatingIfNeeded: number), entry)
            expectAgreement(UInt64(number), entry)
            expectAgreement(UInt8(truncatingIfNeeded: number), entry)
            expectAgreement(String(number), entry)
        }
        for _ in 0..<500 {
            let bits = random.next()
            let edges: [UInt64] = [0, 1, UInt64(bitPattern: -1), UInt64(Int32.max), UInt64(bitPattern: Int64(Int32.min)), UInt64(Int64.max), UInt64(bitPattern: Int64.min)]
            let number = random.chance(30) ? random.pick(edges) : (random.chance(50) ? bits : bits >> (bits % 64))
            try expectAgreement(on: IntKeyed.self, number)
            try expectAgreement(on: Int64Keyed.self, number)
            try expectAgreement(on: Int32Keyed.self, number)
            try expectAgreement(on: UInt64Keyed.self, number)
            try expectAgreement(on: Labelled.self, number)
        }
        #expect(compared == 500 * types.count * 6)
    }

    @Test("which plans read stored bytes directly")
    func directPlans() throws {
        for type in [Happening.self, Reading.self, FlatClass.self, FlatStruct.self, UUIDKeyed.self, Hall.self, Spot.self] as [any Persistable.Type] {
            #expect(try PlanCache.shared.plan(for: type).directSteps != nil, "\(type)")
        }
        // An array of embedded models and an embedded class, an embedded struct with an ignored
        // property, a struct built without `init()`, an optional embedded model: the general path.
        for type in [WithEmbedded.self, HoldsCached.self, Frozen.self, Holder.self] as [any Persistable.Type] {
            #expect(try PlanCache.shared.plan(for: type).directSteps == nil, "\(type)")
        }
        #expect(try PlanCache.shared.plan(for: Cached.self).embeddableSteps == nil)
        #expect(try PlanCache.shared.plan(for: Hall.self).embeddableSteps != nil)
    }

    static func randomSpot(_ random: inout SeededRandom) -> Spot {
        var spot = Spot()
        spot.label = random.string()
        spot.level = random.integer()
        spot.lit = random.optional { $0.chance(50) }
        return spot
    }

    static func randomHall(_ random: inout SeededRandom) -> Hall {
        var hall = Hall()
        hall.name = random.string()
        hall.city = random.optional { $0.string() }
        hall.capacity = random.integer()
        hall.spot = randomSpot(&random)
        hall.tags = (0..<random.count()).map { _ in random.string() }
        hall.codes = Set((0..<random.count()).map { _ in random.integer(Int.self) })
        return hall
    }

    static func randomHappening(_ random: inout SeededRandom, index: Int) -> Happening {
        let happening = Happening()
        happening.code = "\(index)-" + random.string()
        happening.startsAt = Date(timeIntervalSinceReferenceDate: Double(random.integer(Int32.self)))
        happening.endsAt = random.optional { Date(timeIntervalSinceReferenceDate: Double($0.integer(Int32.self))) }
        happening.attendees = random.optional { $0.integer() }
        happening.hall = randomHall(&random)
        happening.scores = (0..<random.count()).map { _ in random.integer() }
        happening.weights = (0..<random.count()).map { _ in random.double() }
        happening.small = (0..<random.count()).map { _ in random.integer() }
        happening.wide = (0..<random.count()).map { _ in random.integer() }
        happening.ids = (0..<random.count()).map { _ in random.uuid() }
        happening.blobs = (0..<random.count()).map { _ in random.data() }
        happening.flags = (0..<random.count()).map { _ in random.chance(50) }
        happening.moments = (0..<random.count()).map { _ in Date(timeIntervalSinceReferenceDate: Double(random.integer(Int32.self))) }
        happening.names = Set((0..<random.count()).map { _ in random.string() })
        happening.note = random.optional { $0.string() }
        happening.spot = randomSpot(&random)
        return happening
    }

    @Test("a direct plan's intact bytes are filled by the direct steps alone")
    func directFillTakesIntactBytes() throws {
        var random = SeededRandom(seed: Self.seed ^ 0x44)
        for index in 0..<200 {
            let happening = Self.randomHappening(&random, index: index)
            let record = try happening.managedObject()
            var encoder = RecordEncoder(writesTagless: false)
            let bytes = try encoder.encode(record)
            let plan = try PlanCache.shared.plan(for: Happening.self)
            var instance = Happening()
            let key = try #require(try PrimaryKey.storageKey(of: record))
            #expect(ModelMapping.fillDirectly(&instance, plan: plan, reading: bytes, key: key), "seed \(Self.seed), #\(index)")
            if let difference = firstDifference(happening, instance) { Issue.record("seed \(Self.seed), #\(index): \(difference)") }
        }
    }

    @Test("a model that embeds models without links is read on its own; one whose embedded model links is not")
    func embeddingWithoutLinksIsStandalone() throws {
        let registry = try ModelRegistry(models: [WithEmbedded.self, Holder.self])
        #expect(try registry.entry(for: WithEmbedded.self).isStandalone)
        #expect(try registry.entry(for: Holder.self).isStandalone == false)
    }

    @Test("the registry finds each of its models by type, whatever the models and their order, and no other type")
    func registryFindsEachModelByType() throws {
        let models: [any Persistable.Type] = [
            FlatClass.self, FlatStruct.self, UUIDKeyed.self, Frozen.self, Place.self, Inner.self, WithEmbedded.self,
            Holder.self, Wrapper.self, Spot.self, Hall.self, Happening.self, Reading.self, HoldsCached.self, Labelled.self,
        ]
        var random = SeededRandom(seed: Self.seed &+ 7)
        for round in 0..<40 {
            let chosen = models.shuffled(using: &random).prefix(Int.random(in: 1...models.count, using: &random))
            let registry = try ModelRegistry(models: Array(chosen))
            // Every model the chosen ones reach is registered, found by its type and by its name alike.
            for typeName in registry.typeNames {
                let plan = try #require(registry.plan(named: typeName))
                #expect(registry.entry(named: typeName)?.plan === plan, "seed \(Self.seed), round \(round), \(typeName)")
                #expect(registry.plan(ofType: plan.modelType) === plan, "seed \(Self.seed), round \(round), \(typeName)")
            }
            for model in models where registry.plan(named: model.persistedTypeName) == nil {
                #expect(registry.plan(ofType: model) == nil, "seed \(Self.seed), round \(round), \(model)")
            }
        }
    }

    static func randomPlace(_ random: inout SeededRandom) -> Place {
        var place = Place()
        place.name = random.string()
        place.floor = random.optional { Int($0.integer(Int16.self)) }
        place.tags = (0..<random.count()).map { _ in random.string() }
        return place
    }

    @Test("every route gives the model written, and damaged bytes the same answer on every route")
    func routesAgree() throws {
        var random = SeededRandom(seed: Self.seed)
        var compared = 0
        for index in 0..<400 {
            let flatClass = FlatClass()
            flatClass.id = index
            flatClass.name = random.string()
            flatClass.score = random.optional { $0.double() }
            flatClass.flag = random.chance(50)
            flatClass.stamp = Date(timeIntervalSinceReferenceDate: Double(random.integer(Int32.self)))
            flatClass.code = random.integer()
            compared += try check(flatClass, index: index, random: &random)

            var flatStruct = FlatStruct()
            flatStruct.id = index
            flatStruct.label = random.optional { $0.string() }
            flatStruct.ratio = random.float()
            flatStruct.uuid = random.uuid()
            flatStruct.blob = random.data()
            compared += try check(flatStruct, index: index, random: &random)

            let keyed = UUIDKeyed()
            keyed.id = random.uuid()
            keyed.owner = random.uuid()
            keyed.ended = random.optional { Date(timeIntervalSinceReferenceDate: Double($0.integer(Int32.self))) }
            keyed.device = random.optional { $0.string() }
            keyed.rating = random.optional { $0.double() }
            keyed.events = random.optional { $0.integer() }
            compared += try check(keyed, index: index, random: &random)

            let frozen = Frozen(
                id: index, name: random.string(), values: (0..<random.count()).map { _ in random.integer() },
                weight: random.optional { $0.double() })
            compared += try check(frozen, index: index, random: &random)

            let embedding = WithEmbedded()
            embedding.id = index
            embedding.place = Self.randomPlace(&random)
            embedding.other = random.optional { Self.randomPlace(&$0) }
            embedding.places = (0..<random.count()).map { _ in Self.randomPlace(&random) }
            embedding.inner.label = random.string()
            embedding.inner.place = Self.randomPlace(&random)
            embedding.note = random.string()
            compared += try check(embedding, index: index, random: &random)

            var all = PropertyBasedMappingTests.randomModel(&random)
            all.int = index
            compared += try check(all, index: index, random: &random)

            compared += try check(Self.randomHappening(&random, index: index), index: index, random: &random)

            var reading = Reading()
            reading.id = UInt32(index)
            reading.hall = Self.randomHall(&random)
            reading.values = (0..<random.count()).map { _ in random.float() }
            reading.counts = Set((0..<random.count()).map { _ in random.integer(UInt16.self) })
            reading.spot = Self.randomSpot(&random)
            compared += try check(reading, index: index, random: &random)

            // Its `init()` sets `cached.cache` to 99; read, it is a new `Cached`'s 7.
            let holder = HoldsCached()
            holder.id = index
            holder.cached = Cached()
            holder.cached.value = random.integer()
            compared += try check(holder, index: index, random: &random)
        }
        #expect(compared > 20_000)
    }

    /// Reads `model`'s bytes (its tagless record when `tagless`), then 8 damaged copies of them, by
    /// every route; returns how many readings were compared.
    private func check<Model: Persistable>(_ model: Model, index: Int, random: inout SeededRandom, tagless: Bool = false) throws -> Int {
        let plan = try PlanCache.shared.plan(for: Model.self)
        var encoder = RecordEncoder(writesTagless: tagless)
        let record = try model.managedObject()
        let bytes = try encoder.encode(record)
        let context = "seed \(Self.seed), \(Model.self) #\(index)"
        let key = try PrimaryKey.storageKey(of: record) ?? .integer(0)
        let intact = readings(of: bytes, as: Model.self, plan: plan, key: key)
        for (route, reading) in intact {
            switch reading {
            case .success(let read):
                if let difference = firstDifference(model, read) { Issue.record("\(context), \(route): \(difference)") }
            case .failure(let error):
                Issue.record("\(context), \(route): intact bytes failed: \(error)")
            }
        }
        for damage in 0..<8 {
            let damaged = random.damaged(bytes)
            expectRoutesAgree(readings(of: damaged, as: Model.self, plan: plan, key: key), place: "\(context), damage \(damage)")
        }
        return 9 * 4
    }

    /// Records an issue at `place` unless the routes all failed, or all read and read the same
    /// model; returns the models they read.
    @discardableResult
    private func expectRoutesAgree<Model: Persistable>(_ outcomes: [(route: String, reading: Result<Model, any Error>)], place: String) -> [Model] {
        let models = outcomes.compactMap { try? $0.reading.get() }
        if !models.isEmpty && models.count != outcomes.count {
            let answers = outcomes.map { "\($0.route): \((try? $0.reading.get()) == nil ? "failed" : "read")" }
            Issue.record("\(place): the routes disagree: \(answers.joined(separator: ", "))")
        }
        for model in models.dropFirst() {
            if let difference = firstDifference(models[0], model) { Issue.record("\(place): \(difference)") }
        }
        return models
    }

    private func readings<Model: Persistable>(
        of bytes: [UInt8], as type: Model.Type, plan: TypePlan, key: StorageKey
    ) -> [(route: String, reading: Result<Model, any Error>)] {
        let generalSchema = ObjectSchema(typeName: plan.schema.typeName, properties: plan.schema.properties)
        // Embedded models read by the registry's schemas, as the store's reader of a linking type reads them.
        let registry = try? ModelRegistry(models: [Model.self])
        let decoder = RecordDecoder(schema: { registry?.schema(named: $0) }, resolve: { typeName, _ in
            throw RecordCodingFailure(.unknownType(typeName))
        })
        let embedded = (try? registry?.entry(for: Model.self).embeddedSchemas) ?? [:]
        return [
            ("store read (flat bytes or field sink)", Result { try ModelReader.standaloneModel(type, plan: plan, embedding: embedded, bytes: bytes, key: key) }),
            ("store read in place (flat bytes or field sink)", Result {
                try bytes.withUnsafeBytes { try ModelReader.standaloneModel(type, plan: plan, embedding: embedded, bytesInPlace: $0, key: key) }
            }),
            ("record with the plan's schema", Result {
                try PrimaryKey.checkStored(bytes, under: key, schema: plan.schema)
                let record = ManagedObject(objectSchema: plan.schema, values: [])
                try decoder.decode(bytes, into: record)
                return try Model.modelInstance(managedObject: record)
            }),
            ("record matched by position (general)", Result {
                try PrimaryKey.checkStored(bytes, under: key, schema: generalSchema)
                let record = ManagedObject(objectSchema: generalSchema, values: [])
                try decoder.decode(bytes, into: record)
                return try Model.modelInstance(managedObject: record)
            }),
        ]
    }
}
