import Foundation
import Testing
import TestSupport
@testable import MirrorStore
import MirrorStoreEngine

/// The in-place read of a number property (``StoredNumberReading``), which aggregates over every
/// object take, against the projection's read, on random records intact and damaged: wherever the
/// in-place read answers, it gives the value the projection reads, of the same kind.
@Suite struct StoredNumberReadingTests {
    static let seed = SeededRandom.seed(default: 0x290_0006)

    struct Row: Persistable {
        var id = 0
        var label = ""
        var small: Int8 = 0
        var count: UInt32 = 0
        var tags: [String] = []
        var level = 0.0
        var ratio: Float = 0
        var flag = false
        var maybe: Int?
        static var primaryKey: String? { "id" }
    }

    @Test("wherever the in-place read answers, it reads what the projection reads")
    func agreesWithTheProjection() throws {
        var random = SeededRandom(seed: Self.seed)
        let schema = try Row.objectSchema()
        let projection = RecordProjection(schema: schema, properties: Set(schema.properties.map(\.name)), schemas: try ModelRegistry(models: [Row.self]))
        let readers = schema.properties.indices.compactMap { StoredNumberReading(schema: schema, position: $0) }
        #expect(readers.count == 7)
        var encoder = RecordEncoder(writesTagless: false)
        var answered = 0, deferred = 0
        for index in 0..<1_500 {
            let row = Row(id: index, label: random.string(), small: random.integer(), count: random.integer(),
                          tags: random.chance(30) ? [random.string()] : [], level: random.double(), ratio: random.float(),
                          flag: random.chance(50), maybe: random.optional { $0.integer() })
            var bytes = try encoder.encode(row.managedObject())
            if index % 3 != 0 { bytes = random.damaged(bytes) }
            for reader in readers {
                let fast = bytes.withUnsafeBytes { reader.value(in: $0) }
                guard let fast else {
                    deferred += 1
                    continue
                }
                answered += 1
                let general = try #require(try? projection.value(at: reader.position, of: bytes),
                                           "seed \(Self.seed), row \(index), \(schema.properties[reader.position].name): read in place, refused by the projection")
                #expect(general.scalarRecordValue == fast || (general.isNull && fast == .null),
                        "seed \(Self.seed), row \(index), \(schema.properties[reader.position].name): \(fast) in place, \(general) projected")
            }
        }
        #expect(answered > 2_500 && deferred > 2_000)
    }
}
