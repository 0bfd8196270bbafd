import Foundation
import MirrorStore
@testable import MirrorStorePostgres
import NIOCore
import PostgresNIO
import Testing

/// A row's reader reads a cell of a single value through `ColumnCoding.scalar(_:type:)`, with the
/// type it resolved once per table, and falls back to `ColumnCoding.read(_:column:key:)` only to
/// name a failure: on any cell, intact or damaged, the fast route gives the general route's value
/// or fails where it fails. No server needed: the cells are made here.
@Suite("Reading single-value cells")
struct ScalarCellReadingTests {
    /// Each scalar type with a property kind stored as it and the data type its column reads as.
    static let types: [(type: ScalarType, kind: PropertyKind, dataType: PostgresDataType)] = [
        (.boolean, .bool, .bool), (.bigint, .int64, .int8), (.unsigned, .uint64, .text), (.real, .float, .float4),
        (.double, .double, .float8), (.text, .string, .text), (.bytea, .data, .bytea), (.date, .date, .float8),
        (.uuid, .uuid, .uuid), (.decimal, .decimal, .text), (.url, .url, .text),
    ]

    /// The bytes of an intact value of `type`, as the server sends them (binary format).
    static func intactBytes(_ type: ScalarType, _ random: inout SeededRandom) -> ByteBuffer {
        var buffer = ByteBuffer()
        switch type {
        case .boolean: random.chance(50).encode(into: &buffer, context: .default)
        case .bigint: random.integer(Int64.self).encode(into: &buffer, context: .default)
        case .unsigned: String(random.integer(UInt64.self)).encode(into: &buffer, context: .default)
        case .real: Float(bitPattern: random.integer(UInt32.self)).encode(into: &buffer, context: .default)
        case .double, .date: Double(bitPattern: random.integer(UInt64.self)).encode(into: &buffer, context: .default)
        case .text: random.string().encode(into: &buffer, context: .default)
        case .bytea: buffer.writeBytes((0..<Int.random(in: 0..<12, using: &random)).map { _ in random.integer(UInt8.self) })
        case .uuid: UUID(uuid: (random.integer(), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, random.integer())).encode(into: &buffer, context: .default)
        case .decimal: random.pick(["0", "-12345678901234567890.5", "1e-30", "12.25"]).encode(into: &buffer, context: .default)
        case .url: random.pick(["https://example.com/a?b=c", "file:///tmp/x", "relative/path"]).encode(into: &buffer, context: .default)
        }
        return buffer
    }

    /// `bytes` damaged: cut short, grown, or overwritten in places.
    static func damaged(_ bytes: ByteBuffer, _ random: inout SeededRandom) -> ByteBuffer {
        var bytes = Array(bytes.readableBytesView)
        switch Int.random(in: 0..<3, using: &random) {
        case 0: bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &random)))
        case 1: bytes += (0..<Int.random(in: 1..<6, using: &random)).map { _ in random.integer(UInt8.self) }
        default:
            for _ in 0..<Int.random(in: 1..<4, using: &random) where !bytes.isEmpty {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = random.integer()
            }
        }
        return ByteBuffer(bytes: bytes)
    }

    /// Whether two read values are the same value (NaN included, which `==` says differs from itself).
    static func same(_ a: RecordValue, _ b: RecordValue) -> Bool {
        a == b || "\(a)" == "\(b)"
    }

    @Test func theFastRouteReadsWhatTheGeneralRouteReads() throws {
        let coding = ColumnCoding(models: try BackendModels(models: [Gauge.self]), typeName: "Gauge")
        var random = SeededRandom(seed: 3_131)
        var failures = 0
        for round in 0..<6_000 {
            let (type, kind, dataType) = random.pick(Self.types)
            let column = ColumnMapping(property: "value", position: 0, kind: kind, storage: .scalar(type), isNullable: true, isPrimaryKey: false)
            let intact = Self.intactBytes(type, &random)
            let bytes: ByteBuffer? = switch round % 4 {
            case 0, 1: intact
            case 2: Self.damaged(intact, &random)
            default: random.chance(20) ? nil : Self.damaged(Self.intactBytes(random.pick(Self.types).type, &random), &random)
            }
            // Now and then a column whose data type is not the one this type reads.
            let cellType = random.chance(15) ? random.pick(Self.types).dataType : dataType
            let cell = PostgresCell(bytes: bytes, dataType: cellType, format: .binary, columnName: "value", columnIndex: 0)
            let general = Result { try coding.read(cell, column: column, key: { "7" }) }
            switch (ColumnCoding.scalar(cell, type: type), general) {
            case (let fast?, .success(let value)):
                #expect(Self.same(fast, value), "\(type): the fast route read \(fast), the general route \(value)")
            case (nil, .failure(let error)):
                failures += 1
                #expect(error is PostgresStoreError, "\(type): \(error)")
            case (let fast?, .failure(let error)):
                Issue.record("\(type): the fast route read \(fast) where the general route failed: \(error)")
            case (nil, .success(let value)):
                Issue.record("\(type): the fast route failed where the general route read \(value)")
            }
        }
        // The damaged cells do fail, somewhere.
        #expect(failures > 100)
    }
}
