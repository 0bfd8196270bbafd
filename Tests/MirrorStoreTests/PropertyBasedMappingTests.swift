import Foundation
import Testing
import TestSupport
@testable import MirrorStore

/// Seeded property-based tests: random models round-trip exactly, and random damage to records
/// ends in a MappingError, never a crash. Replay a failure with `MIRRORSTORE_SEED=<seed>`.
@Suite("Property-based mapping")
struct PropertyBasedMappingTests {
    static let seed = SeededRandom.seed(default: 0x5EED_0001)

    @Test("random models of every type round-trip exactly (6,000 cases)")
    func randomRoundTrips() throws {
        var random = SeededRandom(seed: Self.seed)
        for index in 0..<6_000 {
            let model = Self.randomModel(&random)
            let copy = try AllTypes.modelInstance(managedObject: model.managedObject())
            #expect(Self.bitwiseEqual(model, copy), "seed \(Self.seed), case \(index)")
            if !Self.bitwiseEqual(model, copy) { return }
        }
    }

    @Test("random record damage ends in a MappingError naming the property (3,000 cases)")
    func randomMismatches() throws {
        var random = SeededRandom(seed: Self.seed &+ 1)
        let properties = try AllTypes.objectSchema().properties
        var rejected = 0
        for index in 0..<3_000 {
            let record = try Self.randomModel(&random).managedObject()
            let property = random.pick(properties)
            let damaged: ManagedObject
            if random.chance(10) {
                damaged = try record.removing(property.name)
            } else {
                let value = Self.randomRecordValue(&random, depth: 0)
                damaged = try record.replacing(property.name, kind: Self.kind(of: value), with: value)
            }
            let context = "seed \(Self.seed), case \(index), property \(property.name)"
            do {
                _ = try AllTypes.modelInstance(managedObject: damaged)
                // A replacement the property accepts is not damage: enum raw values are checked
                // against their cases, so only a plain kind match may succeed.
                #expect(damaged[property.name].map(property.kind.accepts) == true, "\(context)")
            } catch let error as MappingError {
                rejected += 1
                #expect(error.path.first == property.name, "\(context): \(error)")
                #expect(error.modelType == "AllTypes", "\(context)")
            }
        }
        #expect(rejected > 2_500, "seed \(Self.seed): most random replacements must be rejected")
    }

    @Test("random class graphs keep their shape: cycles and sharing (1,000 cases)")
    func randomGraphs() throws {
        var random = SeededRandom(seed: Self.seed &+ 2)
        for index in 0..<1_000 {
            let nodes = (0..<Int.random(in: 1...12, using: &random)).map { number in
                let node = Node()
                node.name = "n\(number)"
                return node
            }
            for node in nodes {
                node.next = random.optional { $0.pick(nodes) }
                node.children = (0..<Int.random(in: 0...3, using: &random)).map { _ in random.pick(nodes) }
                node.byName = random.chance(30) ? ["k": random.pick(nodes)] : [:]
            }
            let record = try nodes[0].managedObject()
            defer { record.releaseGraph() }
            let copy = try Node.modelInstance(managedObject: record)
            var pairs: [ObjectIdentifier: Node] = [:]
            let isomorphic = Self.sameShape(nodes[0], copy, pairs: &pairs)
            #expect(isomorphic, "seed \(Self.seed), case \(index)")
            Self.breakCycles(nodes + Array(pairs.values))
            if !isomorphic { return }
        }
    }

    // MARK: - Generators

    static func randomModel(_ random: inout SeededRandom) -> AllTypes {
        var model = AllTypes()
        model.bool = random.chance(50)
        model.int = random.integer()
        model.int8 = random.integer()
        model.int16 = random.integer()
        model.int32 = random.integer()
        model.int64 = random.integer()
        model.uint = random.integer()
        model.uint8 = random.integer()
        model.uint16 = random.integer()
        model.uint32 = random.integer()
        model.uint64 = random.integer()
        model.float = random.float()
        model.double = random.double()
        model.string = random.string()
        model.data = random.data()
        model.date = Date(timeIntervalSinceReferenceDate: Double(Int32.random(in: .min ... .max, using: &random)) / 7)
        model.uuid = random.uuid()
        model.decimal = Decimal(sign: random.chance(50) ? .minus : .plus,
                                exponent: Int.random(in: -20...20, using: &random),
                                significand: Decimal(UInt32.random(in: 0 ... .max, using: &random)))
        model.url = URL(string: random.pick(["https://example.com", "file:///tmp/a%20b", "mailto:a@b.c", "x:y"])) ?? model.url
        model.suit = random.pick(Suit.allCases)
        model.level = random.pick(Level.allCases)
        model.ratio = random.pick(Ratio.allCases)
        model.optionalBool = random.optional { $0.chance(50) }
        model.optionalInt = random.optional { $0.integer() }
        model.optionalInt8 = random.optional { $0.integer() }
        model.optionalUInt64 = random.optional { $0.integer() }
        model.optionalFloat = random.optional { $0.float() }
        model.optionalDouble = random.optional { $0.double() }
        model.optionalString = random.optional { $0.string() }
        model.optionalData = random.optional { $0.data() }
        model.optionalDate = random.optional { Date(timeIntervalSince1970: Double($0.integer(Int32.self))) }
        model.optionalUUID = random.optional { $0.uuid() }
        model.optionalDecimal = random.optional { Decimal($0.integer(Int32.self)) }
        model.optionalURL = random.optional { _ in URL(fileURLWithPath: "/var/tmp") }
        model.optionalSuit = random.optional { $0.pick(Suit.allCases) }
        model.ints = (0..<random.count()).map { _ in random.integer() }
        model.strings = Set((0..<random.count()).map { _ in random.string() })
        model.doubles = Dictionary((0..<random.count()).map { _ in (random.string(), random.double()) }, uniquingKeysWith: { a, _ in a })
        model.optionalStrings = random.optional { random in (0..<random.count()).map { _ in random.string() } }
        model.optionalElements = (0..<random.count()).map { _ in random.optional { $0.integer() } }
        model.nestedLists = (0..<Int.random(in: 0...4, using: &random)).map { _ in (0..<random.count()).map { _ in random.string() } }
        model.listsByKey = ["a": (0..<random.count()).map { _ in random.integer() }]
        model.suits = (0..<random.count()).map { _ in random.pick(Suit.allCases) }
        model.levels = Set((0..<3).map { _ in random.pick(Level.allCases) })
        model.optionalSet = random.optional { [$0.uuid(), $0.uuid()] }
        return model
    }

    static func randomRecordValue(_ random: inout SeededRandom, depth: Int) -> RecordValue {
        let shape = Int.random(in: 0..<(depth < 2 ? 15 : 13), using: &random)
        switch shape {
        case 13:
            // Lists hold one shape of element (and nulls), as records made from models do.
            let element = Int.random(in: 1..<13, using: &random)
            return .list(List((0..<Int.random(in: 0...3, using: &random)).map { _ in
                random.chance(20) ? .null : randomScalar(&random, shape: element)
            }))
        case 14:
            return .dictionary(["k": randomRecordValue(&random, depth: depth + 1)])
        default:
            return randomScalar(&random, shape: shape)
        }
    }

    static func randomScalar(_ random: inout SeededRandom, shape: Int) -> RecordValue {
        switch shape {
        case 1: .bool(random.chance(50))
        case 2: .int(random.integer())
        case 3: .uint(random.integer())
        case 4: .float(random.float())
        case 5: .double(random.double())
        case 6: .string(random.string())
        case 7: .data(random.data())
        case 8: .date(Date(timeIntervalSince1970: Double(random.integer(Int32.self))))
        case 9: .uuid(random.uuid())
        case 10: .decimal(Decimal(random.integer(Int16.self)))
        case 11: .url(URL(fileURLWithPath: "/x"))
        case 12: .object(ManagedObject(objectSchema: ObjectSchema(typeName: "Stranger", properties: [])))
        default: .null
        }
    }

    /// The loosest kind that accepts `value`, so the damaged record itself is well-formed.
    static func kind(of value: RecordValue) -> PropertyKind {
        switch value {
        case .null: .optional(.string)
        case .bool: .bool
        case .int: .int
        case .uint: .uint
        case .float: .float
        case .double: .double
        case .string: .string
        case .data: .data
        case .date: .date
        case .uuid: .uuid
        case .decimal: .decimal
        case .url: .url
        case .object(let record): .object(typeName: record.objectSchema.typeName)
        case .list(let list):
            .list(.optional(list.first(where: { $0 != .null }).map(kind(of:)) ?? .string))
        case .dictionary(let entries): .dictionary(entries.values.first.map(kind(of:)) ?? .string)
        }
    }

    // MARK: - Comparisons

    /// Equality where floating-point values compare by bit pattern, so NaN equals itself.
    static func bitwiseEqual(_ a: AllTypes, _ b: AllTypes) -> Bool {
        guard a.float.bitPattern == b.float.bitPattern,
              a.double.bitPattern == b.double.bitPattern,
              a.optionalFloat?.bitPattern == b.optionalFloat?.bitPattern,
              a.optionalDouble?.bitPattern == b.optionalDouble?.bitPattern,
              a.doubles.mapValues(\.bitPattern) == b.doubles.mapValues(\.bitPattern) else { return false }
        var left = a
        var right = b
        left.float = 0; right.float = 0
        left.double = 0; right.double = 0
        left.optionalFloat = nil; right.optionalFloat = nil
        left.optionalDouble = nil; right.optionalDouble = nil
        left.doubles = [:]; right.doubles = [:]
        return left == right
    }

    /// Whether two graphs match node for node, following every link in the same order.
    static func sameShape(_ original: Node, _ copy: Node, pairs: inout [ObjectIdentifier: Node]) -> Bool {
        if let seen = pairs[ObjectIdentifier(original)] { return seen === copy }
        pairs[ObjectIdentifier(original)] = copy
        guard original.name == copy.name,
              original.children.count == copy.children.count,
              original.byName.keys.sorted() == copy.byName.keys.sorted(),
              (original.next == nil) == (copy.next == nil) else { return false }
        if let next = original.next, let copied = copy.next, !sameShape(next, copied, pairs: &pairs) { return false }
        for (child, copied) in zip(original.children, copy.children) where !sameShape(child, copied, pairs: &pairs) {
            return false
        }
        for (key, node) in original.byName {
            guard let copied = copy.byName[key], sameShape(node, copied, pairs: &pairs) else { return false }
        }
        return true
    }

    static func breakCycles(_ nodes: [Node]) {
        for node in nodes {
            node.next = nil
            node.children = []
            node.byName = [:]
        }
    }
}
