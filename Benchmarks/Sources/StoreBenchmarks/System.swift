import Foundation

/// What a benchmarked store does, once per batch: the per-object loops live inside each
/// implementation, so no protocol call is made per object.
protocol BenchmarkedSystem: Sendable {
    /// The model it stores.
    associatedtype Model: StoreShape
    /// The name in tables and in cell names.
    static var name: String { get }
    /// The extension of its files in the scratch directory.
    static var fileExtension: String { get }
    /// Opens an existing store.
    init(path: String) throws
    /// Creates a new, empty store ready for `Model`s.
    static func create(path: String) throws -> Self
    /// Every file the store may keep for `path`, whether or not it exists.
    static func files(for path: String) -> [String]

    /// Inserts all of `objects` in one transaction.
    func insert(_ objects: [Model]) throws
    /// Inserts `object` in a transaction of its own, durably.
    func insertOne(_ object: Model) throws
    /// Every object, mapped to models.
    func fetchAll() throws -> [Model]
    /// The object with primary key `key`.
    func object(key: Model.Key) throws -> Model?
    /// Looks up each of `keys` by primary key; returns how many were found.
    func lookUp(_ keys: [Model.Key]) throws -> Int
    /// The number of objects, counted by the store.
    func count() throws -> Int
    func close() throws
    /// Version and settings, printed in the header.
    var note: String { get }
}

extension BenchmarkedSystem {
    /// The bytes of the store's files on disk.
    static func fileBytes(for path: String) -> Int {
        files(for: path).reduce(0) { total, file in
            let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.intValue
            return total + (size ?? 0)
        }
    }

    static func removeFiles(for path: String) {
        for file in files(for: path) { try? FileManager.default.removeItem(atPath: file) }
    }

    /// Checks the count and every field of the sampled objects against the fixtures.
    func verify(objects: Int, sample: [Int], seed: UInt64, label: String) throws {
        let stored = try count()
        guard stored == objects else {
            throw BenchmarkFailure("\(label): \(Self.name) holds \(stored) objects, expected \(objects)")
        }
        for id in sample {
            guard let object = try object(key: Model.key(id: id, seed: seed)) else {
                throw BenchmarkFailure("\(label): \(Self.name) has no object \(id)")
            }
            let differences = object.differences(from: Model.fixture(id: id, seed: seed))
            guard differences.isEmpty else {
                throw BenchmarkFailure("\(label): \(Self.name) object \(id) reads back wrong: \(differences.joined(separator: ", "))")
            }
        }
    }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
