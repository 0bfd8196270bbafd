import Foundation
import Testing
@testable import MirrorStore

/// The table of stored value types agrees with the kinds, the stored schemas already on disk and
/// the encoder.
@Suite("Stored value types")
struct StoredValueTypeTests {
    /// The kinds in the order of their bytes in stored schemas, as files written before the table
    /// hold them.
    static let kindsByStoredByte: [PropertyKind] = [
        .bool, .int, .int8, .int16, .int32, .int64, .uint, .uint8, .uint16, .uint32, .uint64,
        .float, .double, .string, .data, .date, .uuid, .decimal, .url,
    ]

    @Test("each type is its kind's, with its Swift name and its byte in stored schemas")
    func typesMatchKinds() throws {
        #expect(StoredValueType.allCases.map(\.kind) == Self.kindsByStoredByte)
        for type in StoredValueType.allCases {
            #expect(type.kind.storedValueType == type)
            #expect(type.kind.description == type.name)
            #expect(PropertyKind.optional(type.kind).storedValueType == nil)
            let schema = ObjectSchema(typeName: "T", properties: [.init(name: "p", kind: type.kind)])
            let bytes = SchemaCoding.encode(schema)
            // Version, "T", one property, "p", then the kind's byte.
            #expect(bytes[6] == type.rawValue, "\(type)")
            #expect(try SchemaCoding.decode(bytes) == schema)
        }
    }

    @Test("the encoder writes each type's values with the tag the table gives")
    func encoderWritesTheTag() throws {
        let samples: [StoredValueType: RecordValue] = [
            .bool: .bool(true), .int: .int(-3), .int8: .int(4), .int16: .int(5), .int32: .int(6), .int64: .int(7),
            .uint: .uint(1), .uint8: .uint(2), .uint16: .uint(3), .uint32: .uint(4), .uint64: .uint(5),
            .float: .float(1.5), .double: .double(2.5), .string: .string("s"), .data: .data(Data([1])),
            .date: .date(Date(timeIntervalSinceReferenceDate: 9)), .uuid: .uuid(UUID()), .decimal: .decimal(12),
            .url: .url(URL(string: "https://example.com")!),
        ]
        for type in StoredValueType.allCases {
            let value = try #require(samples[type])
            #expect(type.accepts(value) && type.kind.accepts(value))
            let schema = ObjectSchema(typeName: "T", properties: [.init(name: "p", kind: type.kind)])
            var encoder = RecordEncoder(writesTagless: false)
            let bytes = try encoder.encode(ManagedObject(objectSchema: schema, values: [value]))
            #expect(type.isWritten(with: bytes[1]), "\(type)")
            let others = StoredValueType.allCases.filter { $0.tag != type.tag }
            #expect(others.allSatisfy { !$0.isWritten(with: bytes[1]) }, "\(type)")
        }
    }
}
