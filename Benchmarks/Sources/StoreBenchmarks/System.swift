import Foundation

/// What a benchmarked store does, once per batch: the per-object loops live inside each
/// implementation, so no protocol call is made per object.
protocol BenchmarkedSystem: Sendable {
    /// The name in tables and in cell names.
    static var name: String { get }
    /// The extension of its files in the scratch directory.
    static var fileExtension: String { get }
    /// Opens an existing store.
    init(path: String) throws
    /// Creates a new, empty store ready for `Customer`s.
    static func create(path: String) throws -> Self
    /// Every file the store may keep for `path`, whether or not it exists.
    static func files(for path: String) -> [String]

    /// Inserts all of `customers` in one transaction.
    func insert(_ customers: [Customer]) throws
    /// Inserts `customer` in a transaction of its own, durably.
    func insertOne(_ customer: Customer) throws
    /// Every customer, mapped to models.
    func fetchAll() throws -> [Customer]
    /// The customer with primary key `id`.
    func object(id: Int) throws -> Customer?
    /// Looks up each of `ids` by primary key; returns how many were found.
    func lookUp(_ ids: [Int]) throws -> Int
    /// The number of customers, counted by the store.
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

    /// Checks the count and every field of the sampled customers against the fixtures.
    func verify(objects: Int, sample: [Int], seed: UInt64, label: String) throws {
        let stored = try count()
        guard stored == objects else {
            throw BenchmarkFailure("\(label): \(Self.name) holds \(stored) customers, expected \(objects)")
        }
        for id in sample {
            guard let customer = try object(id: id) else {
                throw BenchmarkFailure("\(label): \(Self.name) has no customer \(id)")
            }
            let differences = customer.differences(from: Fixtures.customer(id: id, seed: seed))
            guard differences.isEmpty else {
                throw BenchmarkFailure("\(label): \(Self.name) customer \(id) reads back wrong: \(differences.joined(separator: ", "))")
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
