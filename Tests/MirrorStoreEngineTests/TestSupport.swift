import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// Everything a snapshot exposes, read eagerly so two states compare with `==`.
struct StoreState: Equatable, CustomStringConvertible {
    var objects: [String: [StorageKey: [UInt8]]] = [:]
    var schemas: [String: [UInt8]] = [:]
    var metadata: [String: [UInt8]] = [:]
    var sequence: UInt64 = 0

    init() {}

    init(_ snapshot: EngineSnapshot) throws {
        sequence = snapshot.sequence
        for type in snapshot.typeNames {
            if let schema = snapshot.schema(type: type) { schemas[type] = schema }
            var values: [StorageKey: [UInt8]] = [:]
            for key in try snapshot.keys(type: type) {
                values[key] = try snapshot.value(type: type, key: key)
            }
            if !values.isEmpty { objects[type] = values }
        }
        for key in snapshot.metadataKeys {
            metadata[key] = snapshot.metadata(key: key)
        }
    }

    var description: String {
        let counts = objects.map { "\($0.key): \($0.value.count)" }.sorted().joined(separator: ", ")
        return "sequence \(sequence), objects [\(counts)], schemas \(schemas.keys.sorted()), metadata \(metadata.keys.sorted())"
    }
}

/// A configuration for tests that reopen often: no syncs (a test's kill is not a power cut).
func fastConfiguration(_ mode: EngineConfiguration.RecoveryMode = .strict) -> EngineConfiguration {
    EngineConfiguration(durability: .none, recoveryMode: mode, autoCompaction: .disabled)
}

func readFile(_ path: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}

func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// Writes `bytes` as the store at `path`, removing the sidecars recovery wrote for an earlier
/// copy there, so that each damaged copy is opened as if it were the first.
func replaceStore(at path: String, with bytes: [UInt8]) throws {
    try writeFile(path, bytes)
    for sidecar in droppedSidecars(of: path) { try FileManager.default.removeItem(atPath: sidecar) }
}

/// Flips one bit of the byte at `offset` in `bytes`, the bit drawn from `generator`.
func flipRandomBit(of bytes: inout [UInt8], at offset: Int, using generator: inout SeededRandom) {
    bytes[offset] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
}

/// Flips one random bit of a byte from `start` on (past the header, say) in `bytes`, the byte
/// drawn before the bit, and returns the byte's offset.
@discardableResult
func flipRandomBit(of bytes: inout [UInt8], from start: Int, using generator: inout SeededRandom) -> Int {
    let offset = Int.random(in: start..<bytes.count, using: &generator)
    flipRandomBit(of: &bytes, at: offset, using: &generator)
    return offset
}

/// Opens, reads the whole state and closes; errors propagate.
func openState(_ path: String, _ configuration: EngineConfiguration) throws -> StoreState {
    try openStateAndReport(path, configuration).state
}

/// Opens, reads the whole state and what recovery left out, and closes; errors propagate.
func openStateAndReport(_ path: String, _ configuration: EngineConfiguration) throws -> (state: StoreState, report: RecoveryReport?) {
    let engine = try StorageEngine(path: path, configuration: configuration)
    defer { try? engine.close() }
    return (try StoreState(engine.snapshot()), engine.recoveryReport)
}

/// The sidecars recovery wrote for the store at `path`, in the order they were written.
func droppedSidecars(of path: String) -> [String] {
    let directory = (path as NSString).deletingLastPathComponent
    let prefix = (path as NSString).lastPathComponent + ".dropped-"
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    return names.filter { $0.hasPrefix(prefix) }
        .sorted { (Int($0.dropFirst(prefix.count)) ?? 0) < (Int($1.dropFirst(prefix.count)) ?? 0) }
        .map { directory + "/" + $0 }
}

/// The bytes a sidecar kept: what follows its header.
func keptBytes(_ sidecar: String) throws -> [UInt8] {
    let bytes = try readFile(sidecar)
    let report = try #require(DroppedBytesFile.decode(bytes, path: sidecar, fileSize: UInt64(bytes.count)))
    return Array(bytes.suffix(Int(report.droppedBytes)))
}

/// A seeded batch of mixed operations over a small key space, so later units overwrite and
/// delete what earlier ones wrote.
func randomBatch(_ generator: inout SeededRandom, number: Int) -> WriteBatch {
    var batch = WriteBatch()
    let types = ["Hero", "Publisher", "Tag"]
    for _ in 0..<Int.random(in: 1...4, using: &generator) {
        let type = types.randomElement(using: &generator) ?? "Hero"
        let key: StorageKey
        switch Int.random(in: 0..<3, using: &generator) {
        case 0: key = .integer(Int64.random(in: -20...20, using: &generator))
        case 1: key = .string("key-\(Int.random(in: 0..<15, using: &generator))")
        default: key = .bytes([UInt8.random(in: 0...5, using: &generator), 0xFF])
        }
        switch Int.random(in: 0..<20, using: &generator) {
        case 0..<13:
            let length = Int.random(in: 0..<40, using: &generator)
            batch.put(type: type, key: key, value: (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
        case 13..<17:
            batch.delete(type: type, key: key)
        case 17:
            batch.deleteAll(type: type)
        case 18:
            batch.setSchema(type: type, schema: Array("schema \(number)".utf8))
        default:
            batch.setMetadata(key: "version", value: Array("\(number)".utf8))
        }
    }
    return batch
}

/// A store written one unit at a time, with the file size and full state after each unit.
struct RecordedStore {
    var bytes: [UInt8]
    /// `unitEnds[k]` is the file size after `k` units (`unitEnds[0]` is the header alone).
    var unitEnds: [Int]
    var states: [StoreState]

    /// The state opening a copy cut to `length` bytes must show: the last unit that fits.
    func expectedState(length: Int) -> StoreState {
        guard let units = unitEnds.lastIndex(where: { $0 <= length }) else { return StoreState() }
        return states[units]
    }

    static func make(at path: String, units: Int, seed: UInt64) throws -> RecordedStore {
        var generator = SeededRandom(seed: seed)
        return try record(at: path, commits: 1...units, generator: &generator)
    }

    /// A store whose file starts with the output of compacting `before` commits, written in
    /// units of about `chunkSize` payload bytes, followed by `after` more commits. Its first
    /// state is the compacted one: no prefix of the compacted units ever existed as a state.
    static func makeCompacted(at path: String, before: Int, after: Int, chunkSize: Int, seed: UInt64) throws -> RecordedStore {
        var generator = SeededRandom(seed: seed)
        let original = try record(at: path, commits: 1...before, generator: &generator)
        let source = MemoryLog(original.bytes)
        let recovered = try Recovery.scan(source)
        let compacted = MemoryLog()
        _ = try Compaction.rewrite(
            index: recovered.index, secondary: SecondaryIndexes(), from: source, into: compacted, lastSequence: recovered.lastSequence, checkpointAfter: nil,
            keysInMemory: nil, chunkSize: chunkSize)
        try writeFile(path, try compacted.read(at: 0, count: Int(compacted.size())))
        let store = try record(at: path, commits: (before + 1)...(before + after), generator: &generator)
        #expect(store.states[0] == original.states[before], "compaction keeps the state")
        return store
    }

    /// Opens the store at `path` and commits seeded batches numbered `commits`, recording each state.
    private static func record(at path: String, commits: ClosedRange<Int>, generator: inout SeededRandom) throws -> RecordedStore {
        let engine = try StorageEngine(path: path, configuration: fastConfiguration())
        var ends = [Int(engine.statistics.fileSize)]
        var states = [try StoreState(engine.snapshot())]
        for number in commits {
            try engine.commit(randomBatch(&generator, number: number))
            ends.append(Int(engine.statistics.fileSize))
            states.append(try StoreState(engine.snapshot()))
        }
        try engine.close()
        return RecordedStore(bytes: try readFile(path), unitEnds: ends, states: states)
    }
}

/// The crash child's executable, built next to the test bundle.
func crashChildURL() -> URL? {
    childExecutableURL(named: "EngineCrashChild")
}

/// The raw key encrypted test stores use: a key, not a passphrase, so that no test pays for PBKDF2.
let testEncryptionKey: [UInt8] = Array(0..<32)

/// Writes `payload` as an encrypted log at `path`, then calls `body` with the log opened read-only
/// as written (`damaged` false) and again with one byte of its middle flipped (`damaged` true).
func withEncryptedLog(
    at path: String, holding payload: [UInt8], _ body: (_ log: any LogStorage, _ damaged: Bool) throws -> Void
) throws {
    do {
        let file = FileLog(path: path, descriptor: open(path, O_RDWR | O_CREAT, 0o600), faults: nil)
        let log = try EncryptedLog.storage(for: file, keys: EncryptionKeys(.key(testEncryptionKey)), writable: true)
        try log.write(payload, at: 0)
        try log.sync()
    }
    for damaged in [false, true] {
        if damaged {
            var bytes = try readFile(path)
            bytes[bytes.count / 2] ^= 0x40
            try writeFile(path, bytes)
        }
        let file = FileLog(path: path, descriptor: open(path, O_RDONLY), faults: nil)
        try body(try EncryptedLog.storage(for: file, keys: EncryptionKeys(.key(testEncryptionKey)), writable: false), damaged)
    }
}

/// `configuration`, encrypted with `testEncryptionKey` when `encrypted`: how a behaviour test runs
/// once more on an encrypted store.
func encrypting(_ configuration: EngineConfiguration, _ encrypted: Bool = true) -> EngineConfiguration {
    var configuration = configuration
    if encrypted { configuration.encryption = .key(testEncryptionKey) }
    return configuration
}
