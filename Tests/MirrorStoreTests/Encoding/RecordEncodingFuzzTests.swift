import Foundation
import MirrorStoreEngine
import Testing
import TestSupport
@testable import MirrorStore

/// Seeded mutation fuzzing of the record and schema encodings: damaged bytes end in a typed
/// failure or a well-formed record, never a trap. Replay with `MIRRORSTORE_SEED=<seed>`.
@Suite("Record encoding fuzz")
struct RecordEncodingFuzzTests {
    static let seed = SeededRandom.seed(default: 0x5EED_0005)

    private struct Schemas {
        let all: [String: ObjectSchema]
        func schema(named typeName: String) -> ObjectSchema? { all[typeName] }
    }

    private func decode(_ bytes: [UInt8], schema: ObjectSchema, schemas: Schemas) throws {
        let record = ManagedObject(objectSchema: schema, values: [])
        let decoder = RecordDecoder(schema: { schemas.schema(named: $0) }, resolve: { _, _ in nil })
        try decoder.decode(bytes, into: record)
        #expect(record.values.count == schema.properties.count)
    }

    @Test("valid records decode back to the same values")
    func roundTrip() throws {
        var random = SeededRandom(seed: Self.seed)
        let schema = try AllTypes.objectSchema()
        let schemas = Schemas(all: ["AllTypes": schema])
        for index in 0..<500 {
            let record = try PropertyBasedMappingTests.randomModel(&random).managedObject()
            var encoder = RecordEncoder(writesTagless: false)
            let bytes = try encoder.encode(record)
            let copy = ManagedObject(objectSchema: schema, values: [])
            try RecordDecoder(schema: { schemas.schema(named: $0) }, resolve: { _, _ in nil }).decode(bytes, into: copy)
            let model = try AllTypes.modelInstance(managedObject: copy)
            let original = try AllTypes.modelInstance(managedObject: record)
            #expect(PropertyBasedMappingTests.bitwiseEqual(model, original), "seed \(Self.seed), case \(index)")
        }
    }

    @Test("mutated records never trap (4,000 cases)")
    func mutatedRecords() throws {
        var random = SeededRandom(seed: Self.seed &+ 1)
        let schema = try AllTypes.objectSchema()
        let employee = try Employee.objectSchema()
        let schemas = Schemas(all: ["AllTypes": schema, "Employee": employee,
                                    "Company": try Company.objectSchema(), "Address": try Address.objectSchema()])
        var rejected = 0
        for index in 0..<4_000 {
            var bytes: [UInt8]
            var encoder = RecordEncoder(writesTagless: false)
            let useEmployee = random.chance(30)
            if useEmployee {
                let model = Employee()
                model.identifier = random.integer()
                model.employer = Company()
                model.contacts = ["k": Address()]
                bytes = try encoder.encode(model.managedObject())
            } else {
                bytes = try encoder.encode(PropertyBasedMappingTests.randomModel(&random).managedObject())
            }
            mutate(&bytes, &random)
            do {
                try decode(bytes, schema: useEmployee ? employee : schema, schemas: schemas)
            } catch is RecordCodingFailure {
                rejected += 1
            } catch {
                Issue.record("seed \(Self.seed), case \(index): untyped failure \(error)")
            }
        }
        #expect(rejected > 3_000, "seed \(Self.seed): most mutations must be caught")
    }

    /// A model whose fields all hold single values, which stored reads fill by the flat path.
    private struct Flat: Persistable, Equatable {
        var small: Int8 = 0
        var count = 0
        var unsigned: UInt16 = 0
        var ratio = 0.0
        var flag = false
        var name = ""
        var nickname: String?
        var when = Date(timeIntervalSinceReferenceDate: 0)
        var identifier = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        var amount: Decimal?
        init() {}
    }

    private final class FlatClass: Persistable {
        var count = 0
        var name = ""
        var nickname: String?
        init() {}
    }

    /// The model the general path (a sink fed by the record decoder) makes of `bytes`, or nil.
    private func generalModel<Model: Persistable>(_ type: Model.Type, plan: TypePlan, bytes: [UInt8]) -> Model? {
        var context = DecodingContext()
        return try? ModelMapping.model(type, plan: plan, context: &context) { sink in
            try RecordDecoder.withoutLinks.decode(bytes, schema: plan.schema, into: &sink)
        }
    }

    @Test("the flat path reads what the general path reads, and leaves it every record it cannot (3,000 cases)")
    func flatPathAgreesWithGeneralPath() throws {
        var random = SeededRandom(seed: Self.seed &+ 3)
        let plan = try PlanCache.shared.plan(for: Flat.self)
        let classPlan = try PlanCache.shared.plan(for: FlatClass.self)
        #expect(plan.isFlat && classPlan.isFlat)
        var (fast, fallBack) = (0, 0)
        for index in 0..<3_000 {
            var model = Flat()
            model.small = Int8.random(in: .min ... .max, using: &random)
            model.count = random.integer()
            model.unsigned = UInt16.random(in: 0 ... .max, using: &random)
            model.ratio = Double(random.integer()) / 7
            model.flag = random.chance(50)
            model.name = String(repeating: "n", count: Int.random(in: 0...20, using: &random))
            model.nickname = random.chance(50) ? "nick \(index)" : nil
            model.when = Date(timeIntervalSinceReferenceDate: Double(random.integer() % 1_000_000))
            model.amount = random.chance(20) ? Decimal(index) / 4 : nil
            var encoder = RecordEncoder(writesTagless: false)
            var bytes = try encoder.encode(model.managedObject())
            let intact = random.chance(30)
            if !intact { mutate(&bytes, &random) }

            var filled = Flat()
            let general = generalModel(Flat.self, plan: plan, bytes: bytes)
            if ModelMapping.fillDirectly(&filled, plan: plan, reading: bytes, key: .integer(1)) {
                fast += 1
                #expect(general == filled, "seed \(Self.seed), case \(index): the paths read different models")
            } else {
                fallBack += 1
            }
            if intact {
                #expect(general == model, "seed \(Self.seed), case \(index)")
                if model.amount == nil { #expect(filled == model, "seed \(Self.seed), case \(index): an intact record left the flat path") }
            }
            // Through the store's read: a typed error or the general path's model, never a trap.
            let read = try? ModelReader.standaloneModel(Flat.self, plan: plan, embedding: [:], bytes: bytes, key: .integer(1))
            #expect(read == general, "seed \(Self.seed), case \(index)")

            let instance = FlatClass()
            instance.count = model.count
            instance.name = model.name
            instance.nickname = model.nickname
            var classBytes = try encoder.encode(instance.managedObject())
            if !intact { mutate(&classBytes, &random) }
            var fresh = FlatClass()
            let generalClass = generalModel(FlatClass.self, plan: classPlan, bytes: classBytes)
            if ModelMapping.fillDirectly(&fresh, plan: classPlan, reading: classBytes, key: .integer(1)) {
                let same = generalClass.map { $0.count == fresh.count && $0.name == fresh.name && $0.nickname == fresh.nickname }
                #expect(same == true, "seed \(Self.seed), case \(index)")
            }
        }
        // Both outcomes occur, or the test would not be comparing anything.
        #expect(fast > 500 && fallBack > 500, "fast \(fast), fell back \(fallBack)")
    }

    private struct KeyedByInteger: Persistable, Equatable {
        var name = ""
        var identifier = 0
        var score = 0.0
        init() {}
        static var primaryKey: String? { "identifier" }
    }

    private struct KeyedByUnsigned: Persistable, Equatable {
        var identifier: UInt64 = 0
        var name = ""
        init() {}
        static var primaryKey: String? { "identifier" }
    }

    private struct KeyedByText: Persistable, Equatable {
        var count = 0
        var code = ""
        init() {}
        static var primaryKey: String? { "code" }
    }

    private struct KeyedByUUID: Persistable, Equatable {
        var identifier = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        var name = ""
        init() {}
        static var primaryKey: String? { "identifier" }
    }

    /// What the general route reads of `bytes` stored under `key`: the key checked, then the
    /// record decoder's model; nil for either failing.
    private func generalKeyedModel<Model: Persistable>(_ type: Model.Type, plan: TypePlan, bytes: [UInt8], key: StorageKey) -> Model? {
        guard (try? PrimaryKey.checkStored(bytes, under: key, schema: plan.schema)) != nil else { return nil }
        return generalModel(type, plan: plan, bytes: bytes)
    }

    /// One keyed model's record, intact or damaged, read by the store's route under its own key,
    /// another key or a differently spelled one: the same as the general route's answer.
    private func checkKeyed<Model: Persistable & Equatable>(
        _ model: Model, key: StorageKey, otherKeys: [StorageKey], case index: Int, tagless: Bool, random: inout SeededRandom
    ) throws -> Bool {
        let plan = try PlanCache.shared.plan(for: Model.self)
        #expect(plan.isFlat, "\(Model.self) is not flat")
        var encoder = RecordEncoder(writesTagless: tagless)
        var bytes = try encoder.encode(model.managedObject())
        let intact = random.chance(40)
        if !intact { mutate(&bytes, &random) }
        let readKey = random.chance(60) ? key : random.pick(otherKeys)
        let read = try? ModelReader.standaloneModel(Model.self, plan: plan, embedding: [:], bytes: bytes, key: readKey)
        let general = generalKeyedModel(Model.self, plan: plan, bytes: bytes, key: readKey)
        #expect(read == general, "seed \(Self.seed), case \(index): \(Model.self) under \(readKey)")
        let inPlace = bytes.withUnsafeBytes { try? ModelReader.standaloneModel(Model.self, plan: plan, embedding: [:], bytesInPlace: $0, key: readKey) }
        #expect(inPlace == general, "seed \(Self.seed), case \(index): \(Model.self) in place under \(readKey)")
        if intact, readKey == key { #expect(read == model, "seed \(Self.seed), case \(index): \(Model.self) intact") }
        var filled = Model._autoMalloc()
        return ModelMapping.fillDirectly(&filled, plan: plan, reading: bytes, key: readKey)
    }

    /// In both record forms: these models' properties are all required single values.
    @Test("a keyed flat model read under its key, another or a differently spelled one, intact or damaged, as the general route reads it (4,000 cases)",
          arguments: [false, true])
    func flatPathChecksTheKey(tagless: Bool) throws {
        var random = SeededRandom(seed: Self.seed &+ 4)
        var (fast, fallBack) = (0, 0)
        for index in 0..<1_000 {
            var integer = KeyedByInteger()
            integer.identifier = random.integer()
            integer.name = String(repeating: "i", count: Int.random(in: 0...20, using: &random))
            integer.score = Double(random.integer(Int32.self)) / 3
            let integerKey = StorageKey.integer(Int64(integer.identifier))
            var unsigned = KeyedByUnsigned()
            unsigned.identifier = random.integer()
            unsigned.name = "u\(index)"
            var text = KeyedByText()
            // Composed here, and the same text decomposed below: a key that equals it as a
            // `String` but not byte for byte.
            text.code = random.chance(50) ? "caf\u{E9} \(index)" : "code \(index)"
            text.count = random.integer()
            let decomposed = StorageKey.string(text.code.replacingOccurrences(of: "\u{E9}", with: "e\u{301}"))
            var uuid = KeyedByUUID()
            let uuidBytes = (0..<16).map { _ in UInt8.random(in: 0 ... .max, using: &random) }
            uuid.identifier = UUID(storedBytes: uuidBytes)
            uuid.name = "v\(index)"
            let outcomes = [
                try checkKeyed(integer, key: integerKey, otherKeys: [.integer(Int64(integer.identifier) &+ 1), .string("\(integer.identifier)")],
                               case: index, tagless: tagless, random: &random),
                try checkKeyed(unsigned, key: .integer(Int64(bitPattern: unsigned.identifier)),
                               otherKeys: [.integer(Int64(bitPattern: unsigned.identifier &+ 1))], case: index, tagless: tagless, random: &random),
                try checkKeyed(text, key: .string(text.code), otherKeys: [decomposed, .string(text.code + " "), .integer(1)], case: index, tagless: tagless, random: &random),
                try checkKeyed(uuid, key: .bytes(uuidBytes), otherKeys: [.bytes(uuidBytes.reversed()), .bytes([1, 2])], case: index, tagless: tagless, random: &random),
            ]
            for filled in outcomes {
                if filled { fast += 1 } else { fallBack += 1 }
            }
        }
        // Both outcomes occur, or the test would not be comparing anything.
        #expect(fast > 500 && fallBack > 500, "fast \(fast), fell back \(fallBack)")
    }

    @Test("mutated and random schema bytes never trap (4,000 cases)")
    func mutatedSchemas() throws {
        var random = SeededRandom(seed: Self.seed &+ 2)
        let valid = [try AllTypes.objectSchema(), try Employee.objectSchema(), try Hero.objectSchema()].map(SchemaCoding.encode)
        for index in 0..<4_000 {
            var bytes = random.chance(20)
                ? (0..<Int.random(in: 0...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                : random.pick(valid)
            mutate(&bytes, &random)
            // Damaged bytes must end in a DecodeFailure (the only error `decode` can throw); bytes
            // that do decode must describe exactly that schema, with nothing silently ignored.
            if let schema = try? SchemaCoding.decode(bytes) {
                let reencoded = SchemaCoding.encode(schema)
                #expect(reencoded == bytes, "seed \(Self.seed), case \(index): a decoded schema re-encodes differently")
                if reencoded != bytes { return }
            }
        }
    }

    /// One random kind of damage: bit flip, truncation, inserted garbage, or a zeroed span.
    private func mutate(_ bytes: inout [UInt8], _ random: inout SeededRandom) {
        guard !bytes.isEmpty else { return }
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            let position = Int.random(in: 0..<bytes.count, using: &random)
            bytes[position] ^= UInt8(1) << UInt8.random(in: 0...7, using: &random)
        case 1:
            bytes.removeLast(Int.random(in: 1...bytes.count, using: &random))
        case 2:
            let position = Int.random(in: 0...bytes.count, using: &random)
            bytes.insert(contentsOf: (0..<Int.random(in: 1...8, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }, at: position)
        default:
            let start = Int.random(in: 0..<bytes.count, using: &random)
            let end = min(bytes.count, start + Int.random(in: 1...16, using: &random))
            for position in start..<end { bytes[position] = 0 }
        }
    }
}
