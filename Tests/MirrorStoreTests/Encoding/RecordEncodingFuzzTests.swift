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
            var encoder = RecordEncoder()
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
            var encoder = RecordEncoder()
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
