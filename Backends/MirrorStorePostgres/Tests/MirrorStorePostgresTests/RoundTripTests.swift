import Foundation
import MirrorStore
import MirrorStorePostgres
import Testing

extension ServerTests {
@Suite("Round trips of every kind")
struct RoundTripTests {
    static func sample(_ id: Int, _ random: inout SeededRandom) -> Sample {
        var sample = Sample()
        sample.id = id
        sample.flag = random.chance(50)
        sample.int8 = random.integer()
        sample.int16 = random.integer()
        sample.int32 = random.integer()
        sample.int64 = random.integer()
        sample.uint = random.integer()
        sample.uint8 = random.integer()
        sample.uint16 = random.integer()
        sample.uint32 = random.integer()
        sample.uint64 = random.integer()
        sample.float = random.pick([0, -0.0, 1.5, .greatestFiniteMagnitude, -.infinity, .leastNonzeroMagnitude, Float(random.integer(Int32.self)) / 7])
        sample.double = random.pick([0, 1.0 / 3, -1e300, .infinity, .leastNonzeroMagnitude, Double(random.integer(Int64.self)) / 3])
        sample.text = random.string()
        sample.data = Data((0..<Int.random(in: 0...40, using: &random)).map { _ in random.integer(UInt8.self) })
        // Past microseconds, which timestamptz would round away.
        sample.date = Date(timeIntervalSinceReferenceDate: Double(random.integer(Int32.self)) + 0.123_456_789)
        sample.uuid = UUID(uuid: (random.integer(), random.integer(), 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, random.integer()))
        sample.decimal = random.pick([Decimal(0), Decimal(string: "3.14159265358979323846264338327950288")!, Decimal(-42), Decimal(string: "1e-30")!, Decimal(string: "12345678901234567890123456789")!])
        sample.url = random.pick([URL(string: "https://example.com/a?b=c#d")!, URL(fileURLWithPath: "/tmp/x y"), URL(string: "mailto:a@b.c")!])
        sample.mood = random.pick([.happy, .sad, .calm])
        sample.optionalText = random.chance(50) ? random.string() : nil
        sample.optionalInt = random.chance(50) ? random.integer() : nil
        sample.optionalDate = random.chance(50) ? Date(timeIntervalSinceReferenceDate: 1.5) : nil
        sample.optionalMood = random.chance(50) ? .calm : nil
        sample.optionalUUID = random.chance(50) ? UUID() : nil
        sample.numbers = (0..<Int.random(in: 0...5, using: &random)).map { _ in random.integer() }
        sample.names = (0..<Int.random(in: 0...5, using: &random)).map { _ in random.string() }
        sample.tags = Set((0..<Int.random(in: 0...5, using: &random)).map { _ in random.string() })
        sample.doubles = [0.1, -0.0, .infinity, .leastNonzeroMagnitude * 3]
        sample.floats = [0.1, -0.0, -.infinity]
        sample.flags = [true, false, random.chance(50)]
        sample.uuids = random.chance(50) ? [UUID(), UUID()] : []
        sample.dates = [Date(timeIntervalSinceReferenceDate: -1e9 + 0.000_000_1)]
        sample.moods = [.sad, .happy]
        sample.blobs = [Data(), Data([0, 255, 1])]
        sample.decimals = [Decimal(string: "-0.000001")!, 10]
        sample.unsigneds = [UInt64.max, 0]
        sample.optionalNumbers = [1, nil, 3]
        sample.maybeNames = random.chance(50) ? [random.string()] : nil
        sample.scores = ["a": 1.25, "é": -.infinity, "": 0]
        sample.nested = random.chance(50) ? ["x": [1, 2], "y": []] : [:]
        sample.address = Address(street: random.string(), number: random.integer(), geo: Geo(latitude: 1.5, longitude: -2.25, label: random.chance(50) ? "home" : nil), previous: [Geo(latitude: 3, longitude: 4, label: nil)], since: random.chance(50) ? Date(timeIntervalSinceReferenceDate: 99.999_999_9) : nil)
        sample.addresses = random.chance(50) ? [Address(), Address(street: "x", number: -1, geo: Geo(), previous: [], since: nil)] : []
        sample.optionalAddress = random.chance(50) ? Address(street: "opt") : nil
        sample.publisher = random.chance(50) ? Publisher(identifier: Int.random(in: 1...3, using: &random), name: "P") : nil
        sample.level = random.pick([.low, .mid, .high])
        sample.levels = [.high, .low]
        sample.places = random.chance(50) ? ["home": Geo(latitude: -0.0, longitude: .infinity, label: "h")] : [:]
        sample.maybeCounts = random.chance(50) ? ["a": Int.min, "b": Int.max] : nil
        sample.numberSet = Set((0..<Int.random(in: 0...4, using: &random)).map { _ in random.integer(Int.self) })
        sample.maybeFlags = random.chance(50) ? [true] : nil
        return sample
    }

    @Test func everyKindReadsBackAsWritten() async throws {
        let store = try await emptyStore(models: [Sample.self], clearing: [Sample.self, Publisher.self])
        var random = SeededRandom(seed: 30)
        let samples = (1...40).map { Self.sample($0, &random) }
        try await store.write { transaction in
            try await transaction.add(contentsOf: samples)
        }
        for written in samples {
            let read = try await store.object(Sample.self, primaryKey: written.id)
            #expect(read == written)
        }
        let all = try await store.objects(Sample.self).all()
        #expect(all == samples)
        await store.close()
    }

    @Test func immutableStructsReadBackAsWritten() async throws {
        let store = try await emptyStore(models: [Frozen.self], clearing: [Frozen.self])
        let frozen = [Frozen(id: 1, name: "Ice", tags: ["cold"], geo: Geo(latitude: 1, longitude: 2, label: nil)),
                      Frozen(id: 2, name: "", tags: [], geo: nil)]
        try await store.write { try await $0.add(contentsOf: frozen) }
        #expect(try await store.objects(Frozen.self).all() == frozen)
        await store.close()
    }

    @Test func signedZeroesInfinitiesAndNaNKeepTheirBits() async throws {
        let store = try await emptyStore(models: [Sample.self], clearing: [Sample.self, Publisher.self])
        let doubles: [Double] = [-0.0, .nan, -.infinity, .leastNonzeroMagnitude, .ulpOfOne]
        let floats: [Float] = [-0.0, .nan, .infinity, .leastNonzeroMagnitude]
        var samples: [Sample] = []
        for (index, value) in doubles.enumerated() {
            var sample = Sample()
            sample.id = index
            sample.double = value
            sample.float = floats[index % floats.count]
            sample.scores = ["v": value]
            samples.append(sample)
        }
        try await store.write { try await $0.add(contentsOf: samples) }
        for sample in samples {
            let read = try #require(try await store.object(Sample.self, primaryKey: sample.id))
            #expect(read.double.bitPattern == sample.double.bitPattern || (read.double.isNaN && sample.double.isNaN))
            #expect(read.float.bitPattern == sample.float.bitPattern || (read.float.isNaN && sample.float.isNaN))
            let score = try #require(read.scores["v"])
            #expect(score.bitPattern == sample.double.bitPattern || (score.isNaN && sample.double.isNaN))
        }
        await store.close()
    }

    @Test func stringsWithNULAreRefusedNotCut() async throws {
        let store = try await emptyStore(models: [Sample.self], clearing: [Sample.self, Publisher.self])
        var sample = Sample()
        sample.text = "a\u{0}b"
        await #expect(throws: PostgresStoreError(.unstorableValue(typeName: "Sample", property: "text", reason: "a string with a NUL character"))) {
            try await store.write { try await $0.add(sample) }
        }
        #expect(try await store.objects(Sample.self).count() == 0)
        await store.close()
    }
}
}
