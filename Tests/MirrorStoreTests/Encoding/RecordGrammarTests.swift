import Foundation
import MirrorStoreEngine
import Testing
import TestSupport
@testable import MirrorStore

/// Every reader of record bytes follows ``RecordGrammar``: its skip, the byte conditions'
/// inlined skips, the decoder and the projection agree on where each value ends, on what is
/// damage, and on how deep values may nest. Replay with `MIRRORSTORE_SEED=<seed>`.
@Suite("Record grammar")
struct RecordGrammarTests {
    static let seed = SeededRandom.seed(default: 0x5EED_0024)

    /// Schemas of the types the random values embed or link to.
    private struct Schemas: SchemaSource {
        static let leaf = ObjectSchema(typeName: "Leaf", properties: [
            .init(name: "number", kind: .int), .init(name: "names", kind: .list(.optional(.string))),
        ])
        static let keyed = ObjectSchema(typeName: "Keyed", properties: [.init(name: "identifier", kind: .int, isPrimaryKey: true)])
        static let node = ObjectSchema(typeName: "Node", properties: [
            .init(name: "value", kind: .int), .init(name: "child", kind: .optional(.object(typeName: "Node"))),
        ])

        func schema(named typeName: String) -> ObjectSchema? {
            [Self.leaf, Self.keyed, Self.node].first { $0.typeName == typeName }
        }

        func isLinkTarget(_ typeName: String) -> Bool { typeName == "Keyed" }
    }

    private static let scalarKinds: [PropertyKind] = [
        .bool, .int, .int8, .uint, .uint32, .float, .double, .string, .data, .date, .uuid, .decimal, .url,
    ]

    private static func randomKind(_ random: inout SeededRandom, depth: Int = 0) -> PropertyKind {
        let choice = depth > 3 ? 0 : Int.random(in: 0..<10, using: &random)
        switch choice {
        case 5: return .optional(random.pick(scalarKinds))
        case 6: return .list(randomKind(&random, depth: depth + 1))
        case 7: return .dictionary(randomKind(&random, depth: depth + 1))
        case 8: return .optional(.object(typeName: random.pick(["Leaf", "Keyed"])))
        case 9: return .set(random.pick(scalarKinds))
        default: return random.pick(scalarKinds)
        }
    }

    private static func randomValue(of kind: PropertyKind, _ random: inout SeededRandom) -> RecordValue {
        switch kind {
        case .optional(let wrapped): return random.chance(35) ? .null : randomValue(of: wrapped, &random)
        case .bool: return .bool(random.chance(50))
        case .int, .int8, .int16, .int32, .int64: return .int(random.integer())
        case .uint, .uint8, .uint16, .uint32, .uint64: return .uint(random.integer())
        case .float: return .float(random.float())
        case .double: return .double(random.double())
        case .string: return .string(random.string())
        case .data: return .data(random.data())
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(random.integer(Int32.self))))
        case .uuid: return .uuid(random.uuid())
        case .decimal: return .decimal(Decimal(random.integer(Int32.self)) / 100)
        case .url: return .url(URL(string: "https://example.com/\(random.integer(UInt16.self))")!)
        case .object(let typeName) where typeName == "Keyed":
            return .object(ManagedObject(objectSchema: Schemas.keyed, values: [.int(random.integer())]))
        case .object:
            let names = (0..<Int.random(in: 0...3, using: &random)).map { _ in random.chance(30) ? RecordValue.null : .string(random.string()) }
            return .object(ManagedObject(objectSchema: Schemas.leaf, values: [.int(random.integer()), .list(List(names))]))
        case .list(let element), .set(let element):
            return .list(List((0..<Int.random(in: 0...4, using: &random)).map { _ in randomValue(of: element, &random) }))
        case .dictionary(let element):
            var entries: [String: RecordValue] = [:]
            for index in 0..<Int.random(in: 0...3, using: &random) { entries["k\(index)"] = randomValue(of: element, &random) }
            return .dictionary(entries)
        }
    }

    /// A random record: its schema, its bytes, and where each value starts (the last entry is the end).
    private static func randomRecord(_ random: inout SeededRandom) throws -> (ObjectSchema, [UInt8], [Int]) {
        let kinds = (0..<Int.random(in: 1...8, using: &random)).map { _ in randomKind(&random) }
        let schema = ObjectSchema(typeName: "Random", properties: kinds.enumerated().map { .init(name: "p\($0.offset)", kind: $0.element) })
        let values = kinds.map { randomValue(of: $0, &random) }
        var encoder = RecordEncoder(writesTagless: false)
        let bytes = try encoder.encode(ManagedObject(objectSchema: schema, values: values))
        // Each value alone, after a one-byte count, to know where it ends.
        var boundaries = [ByteWriter.varintSize(UInt64(kinds.count))]
        for value in values {
            let single = try encoder.encode(ManagedObject(objectSchema: schema, values: [value]))
            boundaries.append(boundaries[boundaries.count - 1] + single.count - 1)
        }
        return (schema, bytes, boundaries)
    }

    /// Where each skipper ends one value starting at `start`, or nil where it fails.
    private struct Skips: Equatable {
        var grammar: Int?
        var quick: Int?
        var single: Int?
    }

    private static func skips(_ bytes: [UInt8], from start: Int) -> Skips {
        var reader = ByteReader(bytes, from: start)
        let grammar: Int? = (try? RecordGrammar.skipValue(from: &reader)).map { reader.position }
        return bytes.withUnsafeBytes { raw in
            var quick = RawCursor(raw, at: start)
            var single = RawCursor(raw, at: start)
            return Skips(
                grammar: grammar,
                quick: quick.skipSingleValueQuickly() ? quick.position : nil,
                single: (try? single.skipSingleValue().get()).map { single.position })
        }
    }

    /// The byte conditions' skips read single values only, as the same table sizes them: they end
    /// where the grammar's skip ends, and fail where it fails or the value holds other values.
    private static func checkAgreement(_ skips: Skips, tag: UInt8?, _ note: @autoclosure () -> String) {
        let isSingle = tag.flatMap(RecordGrammar.payload(ofTag:))?.isSingleValue ?? false
        let expected = isSingle ? skips.grammar : nil
        #expect(skips.quick == expected && skips.single == expected, "\(note()): \(skips)")
    }

    @Test("the table has a payload for every tag and for nothing else")
    func tableCoversTags() {
        for byte in UInt8.min...UInt8.max {
            #expect((RecordGrammar.payload(ofTag: byte) != nil) == (ValueTag(rawValue: byte) != nil), "tag \(byte)")
        }
    }

    @Test("every skipper ends each valid value where the encoder ended it (2,000 records)")
    func validValues() throws {
        var random = SeededRandom(seed: Self.seed)
        let schemas = Schemas()
        for index in 0..<2_000 {
            let (schema, bytes, boundaries) = try Self.randomRecord(&random)
            for position in schema.properties.indices {
                let skips = Self.skips(bytes, from: boundaries[position])
                #expect(skips.grammar == boundaries[position + 1], "seed \(Self.seed), case \(index), value \(position)")
                Self.checkAgreement(skips, tag: bytes[boundaries[position]], "seed \(Self.seed), case \(index), value \(position)")
                // The projection skips the values before the one it reads.
                let projection = RecordProjection(schema: schema, properties: [], schemas: schemas)
                #expect(throws: Never.self, "seed \(Self.seed), case \(index)") { _ = try projection.value(at: position, of: bytes) }
            }
            let record = ManagedObject(objectSchema: schema, values: [])
            try RecordDecoder(schema: schemas.schema(named:), resolve: { _, _ in nil }).decode(bytes, into: record)
            #expect(record.values.count == schema.properties.count)
        }
    }

    @Test("on damaged bytes every skipper fails or ends where the others do (4,000 records)")
    func damagedValues() throws {
        var random = SeededRandom(seed: Self.seed &+ 1)
        let schemas = Schemas()
        var (decoded, failed) = (0, 0)
        for index in 0..<4_000 {
            var (schema, bytes, boundaries) = try Self.randomRecord(&random)
            Self.damage(&bytes, &random)
            // Walk the values as the grammar finds them, every skipper from the same start.
            var start = boundaries[0]
            var walked = true
            for _ in schema.properties.indices {
                guard start < bytes.count else { walked = false; break }
                let skips = Self.skips(bytes, from: start)
                Self.checkAgreement(skips, tag: bytes[start], "seed \(Self.seed), case \(index), at \(start)")
                guard let next = skips.grammar else { walked = false; break }
                start = next
            }
            // Whatever the decoder and the projection accept, the grammar walks to the end.
            let record = ManagedObject(objectSchema: schema, values: [])
            let decoder = RecordDecoder(schema: schemas.schema(named:), resolve: { _, _ in nil })
            if (try? decoder.decode(bytes, into: record)) != nil {
                decoded += 1
                #expect(walked && start == bytes.count, "seed \(Self.seed), case \(index): the decoder read what the grammar refuses")
            } else {
                failed += 1
            }
            let projection = RecordProjection(schema: schema, properties: Set(schema.properties.map(\.name)), schemas: schemas)
            if (try? projection.values(of: bytes)) != nil {
                #expect(walked, "seed \(Self.seed), case \(index): the projection read what the grammar refuses")
            }
        }
        #expect(decoded > 200 && failed > 2_000, "decoded \(decoded), failed \(failed)")
    }

    /// One random kind of damage: bit flip, truncation, inserted garbage, or a changed tag byte.
    private static func damage(_ bytes: inout [UInt8], _ random: inout SeededRandom) {
        let position = Int.random(in: 0..<bytes.count, using: &random)
        switch Int.random(in: 0..<4, using: &random) {
        case 0: bytes[position] ^= UInt8(1) << UInt8.random(in: 0...7, using: &random)
        case 1: bytes.removeLast(Int.random(in: 1...bytes.count, using: &random))
        case 2: bytes.insert(contentsOf: (0..<Int.random(in: 1...4, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }, at: position)
        default: bytes[position] = UInt8.random(in: 0...20, using: &random)
        }
    }

    /// A record of one list property whose elements are lists `levels` deep around an integer.
    private static func nestedLists(_ levels: Int) -> (ObjectSchema, [UInt8]) {
        var kind = PropertyKind.int
        var writer = ByteWriter()
        writer.varint(1)
        for _ in 0..<levels {
            kind = .list(kind)
            writer.byte(ValueTag.list.rawValue)
            writer.varint(1)
        }
        writer.byte(ValueTag.int.rawValue)
        writer.varint(ByteWriter.zigzag(7))
        return (ObjectSchema(typeName: "Deep", properties: [.init(name: "lists", kind: kind)]), writer.bytes)
    }

    /// A chain of `levels` embedded Node records, and its bytes as the grammar describes them.
    private static func embeddedChain(_ levels: Int) -> (ManagedObject, [UInt8]) {
        var node = ManagedObject(objectSchema: Schemas.node, values: [.int(Int64(levels)), .null])
        for value in (0..<levels).reversed() {
            node = ManagedObject(objectSchema: Schemas.node, values: [.int(Int64(value)), .object(node)])
        }
        var writer = ByteWriter()
        for value in 0...levels {
            writer.varint(2)
            writer.byte(ValueTag.int.rawValue)
            writer.varint(ByteWriter.zigzag(Int64(value)))
            writer.byte(value < levels ? ValueTag.embedded.rawValue : ValueTag.null.rawValue)
        }
        return (node, writer.bytes)
    }

    @Test("one depth rule: values at the maximum nesting are refused by the writer and every reader")
    func oneDepthRule() throws {
        let limit = RecordGrammar.maximumNesting
        let schemas = Schemas()
        // The integer inside lists nested `nesting` deep lies at depth `nesting`.
        for (nesting, accepted) in [(limit - 1, true), (limit, false)] {
            let (schema, bytes) = Self.nestedLists(nesting)
            let note = "lists \(nesting) deep"
            var reader = ByteReader(bytes, from: 1)
            #expect(((try? RecordGrammar.skipValue(from: &reader)) != nil) == accepted, "\(note): skip")
            #expect(((try? RecordProjection(schema: schema, properties: ["lists"], schemas: schemas).values(of: bytes)) != nil) == accepted,
                    "\(note): projection")
            let record = ManagedObject(objectSchema: schema, values: [])
            #expect(((try? RecordDecoder.withoutLinks.decode(bytes, into: record)) != nil) == accepted, "\(note): decoder")
            #expect(((try? SchemaCoding.decode(SchemaCoding.encode(schema))) != nil) == accepted, "\(note): schema")
            var encoder = RecordEncoder(writesTagless: false)
            var value = RecordValue.int(7)
            for _ in 0..<nesting { value = .list([value]) }
            let written = Result { () throws(StoreError) in try encoder.encode(ManagedObject(objectSchema: schema, values: [value])) }
            #expect((try? written.get()) == (accepted ? bytes : nil), "\(note): writer")
        }
        // The values of the last Node of an embedded chain `levels` long lie at depth `levels`.
        for (levels, accepted) in [(limit - 1, true), (limit, false)] {
            let (chain, bytes) = Self.embeddedChain(levels)
            let note = "a chain \(levels) deep"
            var reader = ByteReader(bytes, from: 1)
            let skipped = (try? RecordGrammar.skipValue(from: &reader)).flatMap { try? RecordGrammar.skipValue(from: &reader) } != nil
            #expect(skipped == accepted && (!accepted || reader.isAtEnd), "\(note): skip")
            #expect(((try? RecordProjection(schema: Schemas.node, properties: ["child"], schemas: schemas).values(of: bytes)) != nil) == accepted,
                    "\(note): projection")
            let record = ManagedObject(objectSchema: Schemas.node, values: [])
            let decoder = RecordDecoder(schema: schemas.schema(named:), resolve: { _, _ in nil })
            #expect(((try? decoder.decode(bytes, into: record)) != nil) == accepted, "\(note): decoder")
            var encoder = RecordEncoder(writesTagless: false)
            switch Result(catching: { () throws(StoreError) in try encoder.encode(chain) }) {
            case .success(let written):
                #expect(accepted && written == bytes, "\(note): writer")
            case .failure(let error):
                #expect(!accepted, "\(note): writer refused it: \(error)")
                guard case .nestingTooDeep(_, let found) = error.kind else { Issue.record("\(note): \(error)"); break }
                #expect(found == limit, "\(note): writer")
            }
        }
    }
}
