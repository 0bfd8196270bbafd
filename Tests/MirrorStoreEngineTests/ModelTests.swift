import Testing
import TestSupport
@testable import MirrorStoreEngine

/// Random operations mirrored against plain dictionaries; after every step the engine's state
/// must equal the model's. Replay a failure with MIRRORSTORE_SEED=<seed>.
@Suite struct ModelTests {
    struct Model {
        var state = StoreState()

        mutating func apply(_ batch: WriteBatch, sequence: UInt64) {
            for operation in batch.operations {
                switch operation {
                case .put(let type, let key, let value):
                    state.objects[type, default: [:]][key] = value
                case .delete(let type, let key):
                    state.objects[type]?[key] = nil
                    if state.objects[type]?.isEmpty == true { state.objects[type] = nil }
                case .deleteAll(let type):
                    state.objects[type] = nil
                case .setSchema(let type, let schema):
                    state.schemas[type] = schema
                case .setMetadata(let key, let value):
                    state.metadata[key] = value
                case .reserveCapacity:
                    break  // Compaction's sizing hint: nothing visible.
                }
            }
            state.sequence = sequence
        }
    }

    static func randomKey(_ generator: inout SeededRandom) -> StorageKey {
        switch Int.random(in: 0..<3, using: &generator) {
        case 0: return .integer(Int64.random(in: -30...30, using: &generator))
        case 1: return .string("k\(Int.random(in: 0..<25, using: &generator))")
        default: return .bytes((0..<Int.random(in: 0...3, using: &generator)).map { _ in UInt8.random(in: 0...3, using: &generator) })
        }
    }

    static func run(seed: UInt64, path: String?) throws {
        var generator = SeededRandom(seed: seed)
        let configuration = EngineConfiguration(
            durability: .none, autoCompaction: .whenDeadBytesExceed(ratio: 0.6, minimumFileSize: 16 << 10))
        func open() throws -> StorageEngine {
            guard let path else { return StorageEngine(inMemoryWith: configuration) }
            return try StorageEngine(path: path, configuration: configuration)
        }
        var engine = try open()
        var model = Model()
        let types = ["A", "B", "C"]
        var operations = 0
        var step = 0
        // Statistics belong to one open engine: count the compactions of every one.
        var compactions = 0
        while operations < 1_200 {
            step += 1
            let context = "seed \(seed), step \(step)"
            switch Int.random(in: 0..<100, using: &generator) {
            case 0..<4:
                try engine.compact()
            case 4..<7:
                if path != nil {
                    compactions += engine.statistics.compactions
                    try engine.close()
                    engine = try open()
                }
            default:
                var batch = WriteBatch()
                for _ in 0..<Int.random(in: 1...6, using: &generator) {
                    operations += 1
                    let type = types.randomElement(using: &generator) ?? "A"
                    switch Int.random(in: 0..<100, using: &generator) {
                    case 0..<62:
                        let length = Int.random(in: 0..<20, using: &generator) == 0 ? 5_000 : Int.random(in: 0..<64, using: &generator)
                        batch.put(type: type, key: randomKey(&generator), value: (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
                    case 62..<85:
                        batch.delete(type: type, key: randomKey(&generator))
                    case 85..<89:
                        batch.deleteAll(type: type)
                    case 89..<94:
                        batch.setSchema(type: type, schema: Array("schema of \(type) at \(step)".utf8))
                    default:
                        batch.setMetadata(key: ["version", "owner"].randomElement(using: &generator) ?? "version", value: [UInt8(step % 256)])
                    }
                }
                let sequence = try engine.commit(batch)
                #expect(sequence == model.state.sequence + 1, "\(context)")
                model.apply(batch, sequence: sequence)
            }
            let snapshot = engine.snapshot()
            let actual = try StoreState(snapshot)
            #expect(actual == model.state, "\(context): engine \(actual) vs model \(model.state)")
            for (type, objects) in model.state.objects {
                #expect(snapshot.count(type: type) == objects.count, "\(context)")
                let entries = try snapshot.entries(type: type)
                #expect(Dictionary(uniqueKeysWithValues: entries.map { ($0.key, $0.value) }) == objects, "\(context)")
            }
            if actual != model.state { return }
        }
        #expect(compactions + engine.statistics.compactions > 0, "seed \(seed): auto or manual compaction should have run")
        try engine.close()
    }

    @Test func fileEngineMatchesTheModel() throws {
        let directory = TemporaryDirectory()
        try Self.run(seed: SeededRandom.seed(default: 0x0D31_0001), path: directory.file("model.store"))
    }

    @Test func inMemoryEngineMatchesTheModel() throws {
        try Self.run(seed: SeededRandom.seed(default: 0x0D31_0002), path: nil)
    }
}
