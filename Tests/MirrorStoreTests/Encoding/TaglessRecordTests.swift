import Foundation
import MirrorStoreEngine
import Testing
import TestSupport
@testable import MirrorStore

/// The tagless record form (``TaglessLayout``) beside the tagged one: on random schemas of
/// required single values, every reader of record bytes (the decoder, the model routes, the
/// projection and the index keys made from it, the in-place number read, the key check, byte
/// conditions) gives the same answers on both forms of a record; damaged tagless records end in
/// typed failures with their offset, or in answers the readers agree on. Replay with
/// `MIRRORSTORE_SEED=<seed>`.
@Suite("Tagless records")
struct TaglessRecordTests {
    static let seed = SeededRandom.seed(default: 0x7A6_1E55)

    private struct NoSchemas: SchemaSource {
        func schema(named typeName: String) -> ObjectSchema? { nil }
        func isLinkTarget(_ typeName: String) -> Bool { false }
    }

    // MARK: Random schemas and records

    /// A schema of 1 to 20 required single values, its primary key (an integer, a string or a
    /// UUID) at a random position or none.
    /// `types` are those to pick from besides `Bool`.
    static func randomSchema(_ random: inout SeededRandom, types choices: [StoredValueType] = StoredValueType.allCases) -> ObjectSchema {
        let count = Int.random(in: 1...20, using: &random)
        var types = (0..<count).map { _ in
            random.chance(30) ? StoredValueType.bool : random.pick(choices)
        }
        var keyPosition: Int?
        if random.chance(70) {
            let position = Int.random(in: 0..<count, using: &random)
            types[position] = random.pick([.int, .int32, .uint64, .string, .uuid])
            keyPosition = position
        }
        let properties = types.enumerated().map { index, type in
            ObjectSchema.Property(name: "p\(index)", kind: type.kind, isPrimaryKey: index == keyPosition)
        }
        return ObjectSchema(typeName: "Random", properties: properties)
    }

    static func randomValue(_ type: StoredValueType, _ random: inout SeededRandom) -> RecordValue {
        switch type {
        case .bool: .bool(random.chance(50))
        case .int: .int(random.integer())
        case .int8: .int(Int64(random.integer(Int8.self)))
        case .int16: .int(Int64(random.integer(Int16.self)))
        case .int32: .int(Int64(random.integer(Int32.self)))
        case .int64: .int(random.integer())
        case .uint: .uint(random.integer())
        case .uint8: .uint(UInt64(random.integer(UInt8.self)))
        case .uint16: .uint(UInt64(random.integer(UInt16.self)))
        case .uint32: .uint(UInt64(random.integer(UInt32.self)))
        case .uint64: .uint(random.integer())
        case .float: .float(random.float())
        case .double: .double(random.double())
        case .string: .string(random.string())
        case .data: .data(random.data())
        case .date:
            .date(Date(timeIntervalSinceReferenceDate: random.chance(10) ? random.pick([.infinity, -.infinity, 0]) : Double(random.integer(Int32.self)) / 8))
        case .uuid: .uuid(random.uuid())
        case .decimal: .decimal(random.chance(50) ? Decimal(random.integer(Int32.self)) / 100 : Decimal(random.integer(Int64.self)))
        case .url: .url(random.pick([URL(fileURLWithPath: "/tmp/a b"), URL(fileURLWithPath: "/")]))
        }
    }

    static func randomRecord(of schema: ObjectSchema, _ random: inout SeededRandom) -> ManagedObject {
        let values = schema.properties.map { randomValue($0.kind.storedValueType ?? .bool, &random) }
        return ManagedObject(objectSchema: schema, values: values)
    }

    static func encode(_ record: ManagedObject, tagless: Bool) throws -> [UInt8] {
        var encoder = RecordEncoder(writesTagless: tagless)
        return try encoder.encode(record)
    }

    /// The values `bytes` decode to, as the tagged form writes them: bit for bit comparable (NaNs too).
    static func decoded(_ bytes: [UInt8], schema: ObjectSchema) -> Result<[UInt8], any Error> {
        Result {
            let record = ManagedObject(objectSchema: schema, values: [])
            try RecordDecoder.withoutLinks.decode(bytes, into: record)
            return try encode(record, tagless: false)
        }
    }

    /// Everything the grammar-level readers answer for `bytes`, as text, failures included.
    static func answers(_ bytes: [UInt8], schema: ObjectSchema) -> [String] {
        var answers: [String] = []
        answers.append("\(decoded(bytes, schema: schema).map { $0 })")
        let projection = RecordProjection(schema: schema, properties: Set(schema.properties.map(\.name)), schemas: NoSchemas())
        answers.append("\(Result { try projection.values(of: bytes) })")
        for position in schema.properties.indices {
            let value = Result { try projection.value(at: position, of: bytes) }
            answers.append("\(value)")
            answers.append("\(value.map { IndexKeys.keys(for: $0) })")
            if let number = StoredNumberReading(schema: schema, position: position) {
                answers.append("\(String(describing: bytes.withUnsafeBytes { number.value(in: $0) }))")
            }
        }
        return answers
    }

    // MARK: Tests

    @Test("both forms of a record read the same by every reader, and the tagless one is smaller (3,000 records)")
    func formsReadTheSame() throws {
        var random = SeededRandom(seed: Self.seed)
        for index in 0..<3_000 {
            let schema = Self.randomSchema(&random)
            let record = Self.randomRecord(of: schema, &random)
            let tagged = try Self.encode(record, tagless: false)
            let tagless = try Self.encode(record, tagless: true)
            let place = "seed \(Self.seed), case \(index), \(schema)"
            #expect(tagless.first == TaglessLayout.marker, "\(place)")
            // Smaller, but for a lone Bool, whose tag and the count give way to a marker and a bitmap.
            #expect(tagless.count < tagged.count || tagless.count == 2, "\(place)")
            #expect(try Self.decoded(tagless, schema: schema).get() == tagged, "\(place)")
            #expect(Self.answers(tagless, schema: schema) == Self.answers(tagged, schema: schema), "\(place)")
            if let position = schema.primaryKeyPosition {
                let key = try #require(try PrimaryKey.storageKey(of: record))
                try PrimaryKey.checkStored(tagless, under: key, schema: schema)
                let other = StorageKey.string("another key \(index)")
                let refusals = [tagged, tagless].map { bytes in Result { try PrimaryKey.checkStored(bytes, under: other, schema: schema) } }
                #expect("\(refusals[0])" == "\(refusals[1])", "\(place), key at \(position)")
            }
        }
    }

    @Test("a record holding null or another kind where the schema wants a value is written tagged")
    func misfitsStayTagged() throws {
        let schema = ObjectSchema(typeName: "Pair", properties: [.init(name: "a", kind: .int), .init(name: "b", kind: .bool)])
        for values: [RecordValue] in [[.null, .bool(true)], [.uint(3), .bool(false)], [.int(1), .int(1)]] {
            let bytes = try Self.encode(ManagedObject(objectSchema: schema, values: values), tagless: true)
            #expect(bytes.first == 2)
        }
        let bytes = try Self.encode(ManagedObject(objectSchema: schema, values: [.int(-1), .bool(true)]), tagless: true)
        #expect(bytes == [TaglessLayout.marker, 0b1, 1])
    }

    @Test("records written in the tagged form read as they always did")
    func taggedRecordsReadUnchanged() throws {
        // `Pair { a: Int, b: Bool, c: String }` as the encoder wrote it before the tagless form.
        let schema = ObjectSchema(typeName: "Pair", properties: [
            .init(name: "a", kind: .int, isPrimaryKey: true), .init(name: "b", kind: .bool), .init(name: "c", kind: .string),
        ])
        let old: [UInt8] = [3, ValueTag.int.rawValue, 0x54, ValueTag.true.rawValue, ValueTag.string.rawValue, 2, 0x68, 0x69]
        let record = ManagedObject(objectSchema: schema, values: [])
        try RecordDecoder.withoutLinks.decode(old, into: record)
        #expect(record.values == [.int(42), .bool(true), .string("hi")])
        try PrimaryKey.checkStored(old, under: .integer(42), schema: schema)
        let tagless = try Self.encode(record, tagless: true)
        #expect(tagless == [TaglessLayout.marker, 0b1, 0x54, 2, 0x68, 0x69])
        #expect(Self.answers(tagless, schema: schema) == Self.answers(old, schema: schema))
    }

    @Test("a tagless record cut at any byte, or with unused bitmap bits set, is a typed failure at an offset inside it")
    func truncationsAndBitmaps() throws {
        var random = SeededRandom(seed: Self.seed &+ 1)
        for index in 0..<300 {
            let schema = Self.randomSchema(&random)
            let bytes = try Self.encode(Self.randomRecord(of: schema, &random), tagless: true)
            for end in 0..<bytes.count {
                let cut = Array(bytes[..<end])
                guard case .failure(let error) = Self.decoded(cut, schema: schema) else {
                    Issue.record("seed \(Self.seed), case \(index): a record cut at \(end) of \(bytes.count) decodes")
                    continue
                }
                let failure = try #require(error as? RecordCodingFailure, "seed \(Self.seed), case \(index): \(error)")
                guard case .malformed(let offset, _) = failure.kind else {
                    Issue.record("seed \(Self.seed), case \(index): \(failure)")
                    continue
                }
                #expect(offset <= end, "seed \(Self.seed), case \(index): offset \(offset) past the cut at \(end)")
            }
            let layout = try #require(schema.taglessLayout)
            if layout.bitmapSize > 0, layout.codes.filter({ $0 >= 0x80 }).count % 8 != 0 {
                var flipped = bytes
                flipped[layout.bitmapSize] |= 0x80
                #expect(throws: RecordCodingFailure.self) { try Self.decoded(flipped, schema: schema).get() }
            }
        }
    }

    @Test("damaged tagless records: typed failures, or answers every reader agrees on (6,000 cases)")
    func damagedRecords() throws {
        var random = SeededRandom(seed: Self.seed &+ 2)
        var rejected = 0
        // No URLs: the decoder takes any text `URL(string:)` takes, which the encoder may then
        // write in another spelling (`absoluteString`), in either form.
        let types = StoredValueType.allCases.filter { $0 != .url }
        for index in 0..<6_000 {
            let schema = Self.randomSchema(&random, types: types)
            var bytes = try Self.encode(Self.randomRecord(of: schema, &random), tagless: true)
            bytes = index % 10 == 0
                ? [TaglessLayout.marker] + (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                : random.damaged(bytes)
            let place = "seed \(Self.seed), case \(index), \(schema)"
            switch Self.decoded(bytes, schema: schema) {
            case .failure(let error):
                rejected += 1
                #expect(error is RecordCodingFailure, "\(place): \(error)")
            case .success(let canonical):
                // What the decoder read is what the record says: every reader answers for the
                // damaged bytes as for the record it decoded to, written anew in either form.
                let again = try Self.decoded(canonical, schema: schema).get()
                let record = ManagedObject(objectSchema: schema, values: [])
                try RecordDecoder.withoutLinks.decode(again, into: record)
                let (found, expected) = (Self.answers(bytes, schema: schema), Self.answers(try Self.encode(record, tagless: true), schema: schema))
                #expect(found == expected, "\(place): \(bytes) \(zip(found, expected).filter { $0 != $1 })")
            }
        }
        #expect(rejected > 1_500, "seed \(Self.seed): \(rejected) rejected")
    }

    // MARK: Models

    /// Every single-value type, required, with nine Booleans (a two-byte bitmap).
    struct Gauge: Persistable {
        var id = 0
        var label = ""
        var small: Int8 = 0
        var count: UInt32 = 0
        var on = false
        var level = 0.0
        var ratio: Float = 0
        var off = false
        var at = Date(timeIntervalSinceReferenceDate: 0)
        var code = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        var amount = Decimal(0)
        var blob = Data()
        var wide: UInt = 0
        var b2 = false, b3 = false, b4 = false, b5 = false, b6 = false, b7 = false, b8 = false
        static var primaryKey: String? { "id" }
    }

    /// The projection the store reads of a gauge: some fields, the others skipped.
    struct GaugeCard: Persistable {
        var label = ""
        var off = false
        var amount = Decimal(0)
        var b8 = false
    }

    static func randomGauge(id: Int, _ random: inout SeededRandom) -> Gauge {
        var gauge = Gauge()
        gauge.id = id
        gauge.label = random.pick(["café", "CAFÉ", "cab", "", "e\u{301}"])
        // Small enough that `small * 2` never traps in `Predicate.evaluate`.
        gauge.small = Int8.random(in: -60...60, using: &random)
        gauge.count = random.integer()
        gauge.on = random.chance(50)
        gauge.level = random.double()
        gauge.ratio = random.float()
        gauge.off = random.chance(50)
        gauge.at = Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...2, using: &random)))
        gauge.code = random.uuid()
        gauge.amount = Decimal(random.integer(Int16.self)) / 10
        gauge.blob = random.data()
        gauge.wide = random.integer()
        (gauge.b2, gauge.b3, gauge.b4, gauge.b5) = (random.chance(50), random.chance(50), random.chance(50), random.chance(50))
        (gauge.b6, gauge.b7, gauge.b8) = (random.chance(50), random.chance(50), random.chance(50))
        return gauge
    }

    /// A model's record written tagged: bit for bit comparable.
    static func taggedBytes(_ model: some Persistable) throws -> [UInt8] {
        try encode(model.managedObject(), tagless: false)
    }

    @Test("both forms of a model's record, intact and damaged, read the same by the model routes, projections and byte conditions (2,000 records)")
    func modelReadersAgree() throws {
        var random = SeededRandom(seed: Self.seed &+ 3)
        let plan = try PlanCache.shared.plan(for: Gauge.self)
        #expect(plan.isFlat && plan.schema.taglessLayout?.bitmapSize == 2)
        let cardPlan = try PlanCache.shared.plan(for: GaugeCard.self)
        let shape = ProjectionShape(plan: cardPlan, fieldIndex: plan.schema.properties.map { cardPlan.schema.index(ofProperty: $0.name) })
        let store = try Store.inMemory(models: [Gauge.self])
        let (two, half, middle): (Int8, Float, Date) = (2, 2, Date(timeIntervalSinceReferenceDate: 1))
        let predicates: [Predicate<Gauge>] = [
            #Predicate { ($0.label == "café" && $0.level < 1) || $0.at != middle },
            #Predicate { $0.on == true || $0.count > 100 || $0.b8 == true },
            #Predicate { $0.small * two > 0 || $0.ratio / half != 1 },
            #Predicate { $0.off == true && $0.b5 == false && $0.wide > 7 },
        ]
        var tests = try predicates.map { predicate in
            let results = try store.objects(Gauge.self).filter(predicate)
            return try #require(ByteConditions(conditions: results.conditions.map { ($0.node, $0.root) }, schema: plan.schema))
        }
        let texts = try store.objects(Gauge.self).filter(\.label, .startsWith("ca")).filter(\.label, .equals("CAFÉ"), options: .caseInsensitive)
        tests.append(try #require(ByteConditions(conditions: texts.conditions.map { ($0.node, $0.root) }, schema: plan.schema)))

        func read(_ bytes: [UInt8], key: StorageKey) -> [String] {
            var answers = ["\(Result { try Self.taggedBytes(try ModelReader.standaloneModel(Gauge.self, plan: plan, embedding: [:], bytes: bytes, key: key)) })"]
            var context = DecodingContext()
            let general = Result {
                try ModelMapping.model(Gauge.self, plan: plan, context: &context) { sink in
                    try RecordDecoder.withoutLinks.decode(bytes, schema: plan.schema, into: &sink)
                }
            }
            answers.append("\(general.flatMap { model in Result { try Self.taggedBytes(model) } })")
            var cardContext = DecodingContext()
            let card = Result {
                try ModelMapping.model(GaugeCard.self, plan: cardPlan, context: &cardContext) { sink in
                    var projecting = ProjectionSink(fields: sink, shape: shape)
                    try RecordDecoder.withoutLinks.decode(bytes, schema: plan.schema, into: &projecting)
                    sink = projecting.fields
                }
            }
            answers.append("\(card.flatMap { model in Result { try Self.taggedBytes(model) } })")
            for test in tests {
                answers.append("\(Result { try bytes.withUnsafeBytes { try test.matches($0, key: key) } })")
            }
            return answers
        }

        var damagedRead = 0
        for index in 0..<2_000 {
            let gauge = Self.randomGauge(id: index, &random)
            let key = StorageKey.integer(Int64(index))
            let tagged = try Self.taggedBytes(gauge)
            let tagless = try Self.encode(gauge.managedObject(), tagless: true)
            let place = "seed \(Self.seed), case \(index)"
            // The count and 20 tags give way to the marker and a two-byte bitmap.
            #expect(tagless.count == tagged.count - 18, "\(place)")
            // A decimal leaves the direct fill to the general route, in both forms alike.
            var (filled, other) = (Gauge(), Gauge())
            let fast = ModelMapping.fillDirectly(&filled, plan: plan, reading: tagless, key: key)
            #expect(fast == ModelMapping.fillDirectly(&other, plan: plan, reading: tagged, key: key), "\(place)")
            let answers = read(tagless, key: key)
            #expect(answers == read(tagged, key: key), "\(place)")
            #expect(answers[0] == "\(Result<[UInt8], any Error>.success(tagged))", "\(place)")
            for (test, predicate) in zip(tests, predicates) {
                let matches = try tagless.withUnsafeBytes { try test.matches($0, key: key) }
                #expect(matches == (try predicate.evaluate(gauge)), "\(place)")
            }

            // Damaged: whatever the flat path reads, the general route reads too; and what any
            // route reads, read again from its tagless record, gives the same answers.
            let damaged = random.damaged(tagless)
            let damagedAnswers = read(damaged, key: key)
            if let model = try? ModelReader.standaloneModel(Gauge.self, plan: plan, embedding: [:], bytes: damaged, key: key) {
                damagedRead += 1
                #expect(damagedAnswers[0] == damagedAnswers[1], "\(place): damaged")
                let rewritten = try Self.encode(model.managedObject(), tagless: true)
                #expect(read(rewritten, key: key).prefix(3) == damagedAnswers.prefix(3), "\(place): damaged")
            }
        }
        #expect(damagedRead > 100, "\(damagedRead) damaged records read")
    }
}
