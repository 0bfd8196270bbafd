import BenchmarkSupport
import Foundation
import GRDB
import MirrorStore

/// A model the store cells run on: the same class is a MirrorStore `Persistable` and a GRDB
/// Codable record, and its objects are a pure function of `(id, seed)`, so a child process can
/// build the objects it writes, or the ones it expects to read, without holding the whole set.
///
/// `id` numbers the objects `1...objects`; ``key(id:)`` is the primary key object `id` is stored
/// under, which need not be that integer (a UUID, a string).
protocol StoreShape: Persistable, Codable, FetchableRecord, PersistableRecord {
    associatedtype Key: RecordPrimitive & DatabaseValueConvertible & Hashable & Sendable
    /// The name `--shape` selects it by.
    static var shapeName: String { get }
    /// What the shape is, for the report's header.
    static var shapeSummary: String { get }
    /// Object `id` of the data set.
    static func fixture(id: Int, seed: UInt64) -> Self
    /// The primary key object `id` is stored under.
    static func key(id: Int, seed: UInt64) -> Key
    /// This object's primary key.
    var storedKey: Key { get }
    /// The fields that differ from `other`, as `name: a ≠ b`; empty when all are equal.
    func differences(from other: Self) -> [String]
    /// Creates the model's table the way a GRDB user writes it: SQLite column types for the
    /// Codable encoding GRDB uses by default (dates as text, UUIDs as 16-byte blobs, nested
    /// values and arrays as JSON text), a rowid table (GRDB's default, also for a non-integer key).
    static func createTable(_ db: Database) throws
}

/// Builds the per-field comparison a shape's `differences(from:)` returns.
struct FieldComparison {
    private(set) var differences: [String] = []

    mutating func compare<Value: Equatable>(_ field: String, _ a: Value, _ b: Value) {
        if a != b { differences.append("\(field): \(a) ≠ \(b)") }
    }
}

/// The shapes `--shape` selects from.
enum Shapes {
    static let all: [any StoreShape.Type] = [Customer.self, Reading.self, Article.self, Session.self, Profile.self]

    static func named(_ name: String) -> (any StoreShape.Type)? {
        all.first { $0.shapeName == name }
    }

    static var names: String { all.map { $0.shapeName }.joined(separator: ", ") }
}

extension SplitMix64 {
    /// A uniform draw from `range`.
    mutating func next(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }

    /// A random version-4 UUID.
    mutating func nextUUID() -> UUID {
        let high = next(), low = next()
        var bytes = (0 ..< 8).map { UInt8(truncatingIfNeeded: high >> ($0 * 8)) }
            + (0 ..< 8).map { UInt8(truncatingIfNeeded: low >> ($0 * 8)) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// A generator for object `id` of a data set, distinct per `salt`.
    static func object(id: Int, seed: UInt64, salt: UInt64 = 0) -> SplitMix64 {
        SplitMix64(seed: (seed &+ salt) ^ (UInt64(truncatingIfNeeded: id) &* 0xD6E8_FEB8_6659_FD93))
    }
}
