import Foundation
import Testing
import TestSupport
@testable import MirrorStore
import MirrorStoreEngine

/// A model whose single-value properties cover every kind byte tests compare (an optional
/// too), an array they test, and one they leave to the general path (a property stored after
/// the array).
struct Sample: Persistable, Sendable {
    var identifier = 0
    var label = ""
    var value = 0.0
    var small: Int8 = 0
    var count: UInt16 = 0
    var ratio: Float = 0
    var at = Date(timeIntervalSinceReferenceDate: 0)
    var on = false
    var note: String?
    var tags: [String] = []
    var after = 0
    static var primaryKey: String? { "identifier" }
}

/// Scans whose conditions compile to tests on the stored bytes answer exactly as plain Swift
/// does on the models, including where `String` equality is not byte equality and where `Double`
/// comparisons meet NaN; damaged records are reported, never trapped on.
@Suite("Conditions tested on stored bytes")
struct ByteConditionTests {
    /// Precomposed and decomposed "é" are equal `String`s with different bytes; `"\r\n"` is one
    /// `Character`, so `"ab\r"` is no prefix of `"ab\r\n"` though its bytes are.
    static let labels = ["", "a", "ab", "b", "Apple", "apple", "café", "cafe\u{301}", "Zoë", "zoo", "\u{1F600}", "ab\r", "ab\r\n", "AB\r\nc", "Ca"]
    static let values: [Double] = [-.infinity, -2.5, -0.0, 0.0, 1.0, 2.5, .nan, .infinity]
    static let dates = (0..<5).map { Date(timeIntervalSinceReferenceDate: Double($0) * 1_000) }

    static func samples(_ random: inout SeededRandom) -> [Sample] {
        (1...300).map { identifier in
            var sample = Sample()
            sample.identifier = identifier
            sample.label = random.pick(labels)
            sample.value = random.pick(values)
            sample.small = Int8.random(in: .min ... .max, using: &random)
            sample.count = UInt16.random(in: 0...20, using: &random)
            sample.ratio = Float(random.pick(values))
            sample.at = random.pick(dates)
            sample.on = random.chance(50)
            sample.note = random.chance(50) ? random.pick(labels) : nil
            sample.tags = (0..<Int.random(in: 0...3, using: &random)).map { _ in random.pick(labels) }
            sample.after = Int.random(in: 0...3, using: &random)
            return sample
        }
    }

    /// One random predicate, and whether a scan can test it on the stored bytes.
    static func predicate(_ random: inout SeededRandom) -> (Predicate<Sample>, bytes: Bool) {
        let label = random.pick(labels)
        let value = random.pick(values)
        let small = Int8.random(in: .min ... .max, using: &random)
        let count = UInt16.random(in: 0...20, using: &random)
        let ratio = Float(random.pick(values))
        let date = random.pick(dates)
        let flag = random.chance(50)
        let after = Int.random(in: 0...3, using: &random)
        let tags = (0..<Int.random(in: 0...2, using: &random)).map { _ in random.pick(labels) }
        let size = Int.random(in: 0...3, using: &random)
        switch Int.random(in: 0..<34, using: &random) {
        // The array, the last property read, is tested where it lies.
        case 25: return (#Predicate { $0.tags.isEmpty || $0.label == label }, true)
        case 26: return (#Predicate { $0.tags.contains(label) }, true)
        case 27: return (#Predicate { $0.tags.count > size && !$0.tags.contains(label) }, true)
        case 28: return (#Predicate { $0.tags == tags }, true)
        case 29: return (#Predicate { $0.tags != tags && size >= $0.tags.count }, true)
        case 30: return (#Predicate { $0.tags.contains(label) && $0.after == after }, false)
        case 0: return (#Predicate { $0.label == label }, true)
        case 1: return (#Predicate { $0.label < label }, true)
        case 2: return (#Predicate { $0.label >= label && $0.value < value }, true)
        case 3: return (#Predicate { $0.value == value }, true)
        case 4: return (#Predicate { $0.value != value || $0.label != label }, true)
        case 5: return (#Predicate { !($0.small > small) || $0.on == flag }, true)
        case 6: return (#Predicate { $0.count <= count }, true)
        case 7: return (#Predicate { $0.ratio > ratio }, true)
        case 8: return (#Predicate { $0.at < date && $0.count != count }, true)
        case 9: return (#Predicate { label > $0.label }, true)
        case 10: return (#Predicate { $0.value >= value && !($0.on == flag) }, true)
        // Negative literals and arithmetic that cannot trap on these values (the suite's own
        // Array.filter would stop the program where Swift traps).
        case 14: return (#Predicate { $0.small < -50 || $0.value == -0.0 }, true)
        case 15: return (#Predicate { $0.count * 2 > count || $0.count + 1 == count }, true)
        case 16: return (#Predicate { $0.value * 2 < value && -$0.value != value }, true)
        case 17: return (#Predicate { $0.ratio / ratio >= 1 || $0.ratio + ratio == 0 }, true)
        case 18: return (#Predicate { $0.small / 2 > small || $0.small % 3 == -1 }, true)
        case 19: return (#Predicate { $0.value - $0.value == 0 }, true)
        case 20: return (#Predicate { ($0.note?.count ?? -1) < 2 }, false)
        case 21: return (#Predicate { $0.after * 2 > -after }, false)
        case 11: return (#Predicate { $0.note == label }, true)
        case 22: return (#Predicate { ($0.note ?? label) < "b" || $0.note != label }, true)
        case 23: return (#Predicate { ($0.note ?? "") == label && !($0.note == nil) }, false)
        case 24: return (#Predicate { !(($0.note ?? "zz") >= label) }, true)
        case 12: return (#Predicate { $0.after == after }, false)
        case 31: return (#Predicate { $0.label.starts(with: label) }, true)
        case 32: return (#Predicate { !$0.label.starts(with: label) && $0.on == flag }, true)
        case 33: return (#Predicate { ($0.note ?? "").starts(with: label) }, false)
        default: return (#Predicate { $0.label == label && $0.after > after }, false)
        }
    }

    @Test("1,000 random scans agree with plain Swift and use the byte tests where they apply")
    func scansAgreeWithSwift() throws {
        let seed = SeededRandom.seed(default: 0xB17E5)
        var random = SeededRandom(seed: seed)
        let samples = Self.samples(&random)
        try withTemporaryDirectory { directory in
            // A file store: the byte tests read the file's memory mapping.
            let store = try Store(path: directory + "/samples.store", models: [Sample.self])
            try store.write { try $0.add(contentsOf: samples) }
            for round in 0..<1_000 {
                let (predicate, bytes) = Self.predicate(&random)
                let results = try store.objects(Sample.self).filter(predicate)
                let expected = try samples.filter { try predicate.evaluate($0) }.map(\.identifier)
                #expect(results.map(\.identifier) == expected, "seed \(seed), round \(round): \(results.plan)")
                #expect(results.plan.filter == (bytes ? .storedBytes : .records), "seed \(seed), round \(round): \(results.plan)")
            }
            try store.close()
        }
    }

    @Test("the same answers from an in-memory store, whose log is not mapped")
    func inMemoryStore() throws {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0xB17E6))
        let samples = Self.samples(&random)
        let store = try Store.inMemory(models: [Sample.self])
        try store.write { try $0.add(contentsOf: samples) }
        for _ in 0..<200 {
            let (predicate, _) = Self.predicate(&random)
            let expected = try samples.filter { try predicate.evaluate($0) }.map(\.identifier)
            #expect(try store.objects(Sample.self).filter(predicate).map(\.identifier) == expected)
        }
    }

    @Test("damaged record bytes never trap: a match, a miss, or a StoreError (a QueryError for arithmetic) naming the record (4,000 cases)")
    func damagedBytes() throws {
        let seed = SeededRandom.seed(default: 0xB17E7)
        var random = SeededRandom(seed: seed)
        let schema = try Sample.objectSchema()
        let middle = Self.dates[1]
        let store = try Store.inMemory(models: [Sample.self])
        let results = try store.objects(Sample.self)
            .filter(#Predicate<Sample> { ($0.label == "café" && $0.value < 1) || $0.at != middle })
        let conditions = try #require(ByteConditions(conditions: results.conditions.map { ($0.node, $0.root) }, schema: schema))
        // Arithmetic reads its values through its own path, and may meet an overflow.
        let (two, half): (Int8, Float) = (2, 2)
        let computed = try store.objects(Sample.self).filter(#Predicate<Sample> { $0.small * two > 0 || $0.ratio / half != 1 })
        let computing = try #require(ByteConditions(conditions: computed.conditions.map { ($0.node, $0.root) }, schema: schema))
        let tagged = try store.objects(Sample.self).filter(#Predicate<Sample> { $0.tags.contains("café") || $0.tags == ["a", "b"] || $0.tags.count > 2 })
        let containing = try #require(ByteConditions(conditions: tagged.conditions.map { ($0.node, $0.root) }, schema: schema))
        // Text matches, folded and not, read the stored string whole.
        let texts = try store.objects(Sample.self).filter(\.label, .startsWith("ca")).filter(\.label, .equals("CAFÉ"), options: .caseInsensitive)
        let matching = try #require(ByteConditions(conditions: texts.conditions.map { ($0.node, $0.root) }, schema: schema))
        var trapped = 0
        var encoder = RecordEncoder(writesTagless: false)
        let valid = try Self.samples(&random).prefix(20).map { try encoder.encode($0.managedObject()) }
        var rejected = 0
        for index in 0..<4_000 {
            var bytes = random.pick(valid)
            let position = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: bytes[position] ^= UInt8(1) << UInt8.random(in: 0...7, using: &random)
            case 1: bytes.removeLast(bytes.count - position)
            default: bytes[position] = UInt8.random(in: 0...255, using: &random)
            }
            let tested = [conditions, computing, containing, matching][index % 4]
            do {
                _ = try bytes.withUnsafeBytes { try tested.matches($0, key: StorageKey.integer(Int64(index))) }
            } catch let error as StoreError {
                rejected += 1
                #expect(error.description.contains("Sample"), "seed \(seed), case \(index): \(error)")
            } catch let error as QueryError {
                trapped += 1
                #expect(error.description.contains("Sample"), "seed \(seed), case \(index): \(error)")
            } catch {
                Issue.record("seed \(seed), case \(index): untyped failure \(error)")
            }
        }
        #expect(rejected > 500, "seed \(seed): truncations and bad tags must be caught")
        #expect(trapped > 0, "seed \(seed): small values of 64 or more overflow small * 2")
    }
}

/// A model with a set, tested on its stored bytes whatever order the set listed its elements in.
struct Shelf: Persistable, Sendable {
    var identifier = 0
    var label = ""
    var labels: Set<String> = []
    var ratios: [Float] = []
    static var primaryKey: String? { "identifier" }
}

@Suite("Set conditions tested on stored bytes")
struct SetByteConditionTests {
    static let words = ["", "a", "b", "café", "cafe\u{301}", "Zoë", "\u{1F600}"]

    /// A set of `elements` built with a random capacity, so equal sets list their elements in
    /// different orders.
    static func set(_ random: inout SeededRandom) -> Set<String> {
        var set = Set<String>(minimumCapacity: random.pick([0, 8, 64, 300]))
        for _ in 0..<Int.random(in: 0...4, using: &random) { set.insert(random.pick(words)) }
        return set
    }

    @Test("==, contains, isEmpty and count of a set agree with Swift on the stored bytes, in any stored order")
    func setsAgreeWithSwift() throws {
        let seed = SeededRandom.seed(default: 0x5E7)
        var random = SeededRandom(seed: seed)
        let shelves = (1...300).map { identifier in
            var shelf = Shelf()
            shelf.identifier = identifier
            shelf.label = random.pick(Self.words)
            shelf.labels = Self.set(&random)
            shelf.ratios = (0..<Int.random(in: 0...2, using: &random)).map { _ in random.pick([-0.0, 0, 1, .nan, .infinity]) }
            return shelf
        }
        let store = try Store.inMemory(models: [Shelf.self])
        try store.write { try $0.add(contentsOf: shelves) }
        for round in 0..<300 {
            let wanted = Self.set(&random), word = random.pick(Self.words), size = Int.random(in: 0...3, using: &random)
            let predicate: Predicate<Shelf>
            switch round % 6 {
            case 0: predicate = #Predicate { $0.labels == wanted }
            case 1: predicate = #Predicate { $0.labels != wanted || $0.label == word }
            case 2: predicate = #Predicate { $0.labels.contains(word) }
            case 3: predicate = #Predicate { !$0.labels.isEmpty && $0.label != word }
            case 4: predicate = #Predicate { $0.labels.count <= size }
            default: predicate = #Predicate { size < $0.labels.count || $0.labels.contains(word) }
            }
            let results = try store.objects(Shelf.self).filter(predicate)
            let expected = try shelves.filter { try predicate.evaluate($0) }.map(\.identifier)
            #expect(results.map(\.identifier) == expected, "seed \(seed), round \(round): \(results.plan)")
            #expect(results.plan.filter == .storedBytes, "seed \(seed), round \(round): \(results.plan)")
        }
        // A property stored after the set: the set would have to be skipped, which the byte
        // tests do not do.
        let zero: Float = 0, nan = Float.nan
        for predicate in [#Predicate<Shelf> { $0.ratios.contains(zero) }, #Predicate<Shelf> { $0.ratios.contains(nan) },
                          #Predicate<Shelf> { $0.ratios.isEmpty || $0.labels.isEmpty }] {
            let results = try store.objects(Shelf.self).filter(predicate)
            #expect(results.map(\.identifier) == (try shelves.filter { try predicate.evaluate($0) }.map(\.identifier)))
            #expect(results.plan.filter == .records, "\(results.plan)")
        }
    }
}

/// A model whose records may be tagless (every property a required single value; two `Bool`s,
/// so a bitmap), so that byte tests meet both forms of one record.
struct Probe: Persistable, Sendable {
    var identifier = 0
    var label = ""
    var small: Int8 = 0
    var value = 0.0
    var on = false
    var count: UInt16 = 0
    var ratio: Float = 0
    var at = Date(timeIntervalSinceReferenceDate: 0)
    var off = false
    static var primaryKey: String? { "identifier" }
}

/// Byte tests read a record in either form, tagged or tagless, as plain Swift reads its model,
/// and report damage to either as a typed error naming the record.
@Suite("Conditions tested on both forms of stored bytes")
struct TaglessByteConditionTests {
    static func probe(_ identifier: Int, _ random: inout SeededRandom) -> Probe {
        var probe = Probe()
        probe.identifier = identifier
        probe.label = random.pick(ByteConditionTests.labels)
        probe.small = Int8.random(in: .min ... .max, using: &random)
        probe.value = random.pick(ByteConditionTests.values)
        probe.on = random.chance(50)
        probe.count = UInt16.random(in: 0...20, using: &random)
        probe.ratio = Float(random.pick(ByteConditionTests.values))
        probe.at = random.pick(ByteConditionTests.dates)
        probe.off = random.chance(50)
        return probe
    }

    /// One random predicate, every one of which a byte test can answer, with no arithmetic that
    /// traps on any stored value (damaged records hold any).
    static func predicate(_ random: inout SeededRandom) -> Predicate<Probe> {
        let label = random.pick(ByteConditionTests.labels)
        let value = random.pick(ByteConditionTests.values)
        let small = Int8.random(in: .min ... .max, using: &random)
        let count = UInt16.random(in: 0...20, using: &random)
        let ratio = Float(random.pick(ByteConditionTests.values))
        let date = random.pick(ByteConditionTests.dates)
        let (flag, other) = (random.chance(50), random.chance(50))
        switch Int.random(in: 0..<12, using: &random) {
        case 0: return #Predicate { $0.small < -50 || $0.label == label }
        case 1: return #Predicate { $0.label >= label && $0.value < value }
        case 2: return #Predicate { !($0.small > small) || $0.on == flag }
        case 3: return #Predicate { $0.off == flag && $0.count <= count }
        case 4: return #Predicate { $0.ratio > ratio || $0.at < date }
        case 5: return #Predicate { $0.on != flag && $0.off == other && $0.value != value }
        case 6: return #Predicate { $0.value * 2 < value || -$0.value == value }
        case 7: return #Predicate { $0.ratio / ratio >= 1 && $0.label != label }
        case 8: return #Predicate { $0.label.starts(with: label) || $0.at != date }
        case 9: return #Predicate { $0.identifier > 20 && $0.off == flag }
        case 10: return #Predicate { label > $0.label && $0.count != count }
        default: return #Predicate { $0.at == date || ($0.small >= small && $0.on == flag) }
        }
    }

    @Test("random conditions answer alike on both forms of a record, intact as plain Swift does, damaged as the decoder reads it or with a typed error (300 conditions x 40 records)")
    func formsAgree() throws {
        let seed = SeededRandom.seed(default: 0x7A61E55)
        var random = SeededRandom(seed: seed)
        let plan = try PlanCache.shared.plan(for: Probe.self)
        #expect(plan.schema.taglessLayout?.bitmapSize == 1)
        let store = try Store.inMemory(models: [Probe.self])
        var (tagged, tagless) = (RecordEncoder(writesTagless: false), RecordEncoder(writesTagless: true))
        var (agreed, rejected) = (0, 0)
        for round in 0..<300 {
            let predicate = Self.predicate(&random)
            let results = try store.objects(Probe.self).filter(predicate)
            let conditions = try #require(ByteConditions(conditions: results.conditions.map { ($0.node, $0.root) }, schema: plan.schema))
            for index in 0..<40 {
                let probe = Self.probe(index, &random)
                let key = StorageKey.integer(Int64(index))
                let place = "seed \(seed), round \(round), record \(index)"
                let record = try probe.managedObject()
                let forms = (try tagged.encode(record), try tagless.encode(record))
                #expect(forms.1.first == TaglessLayout.marker, "\(place)")
                let expected = try predicate.evaluate(probe)
                for bytes in [forms.0, forms.1] {
                    #expect(try bytes.withUnsafeBytes { try conditions.matches($0, key: key) } == expected, "\(place)")
                    let damaged = random.damaged(bytes)
                    var context = DecodingContext()
                    let decoded = Result {
                        try ModelMapping.model(Probe.self, plan: plan, context: &context) { sink in
                            try RecordDecoder.withoutLinks.decode(damaged, schema: plan.schema, into: &sink)
                        }
                    }
                    do {
                        let matches = try damaged.withUnsafeBytes { try conditions.matches($0, key: key) }
                        // Bytes the decoder reads are read alike; the byte tests check less
                        // (skipped text is not validated), so they may answer where it fails.
                        if case .success(let model) = decoded {
                            agreed += 1
                            #expect(matches == (try predicate.evaluate(model)), "\(place): \(damaged)")
                        }
                    } catch let error as StoreError {
                        rejected += 1
                        #expect(error.description.contains("Probe"), "\(place): \(error)")
                        #expect(throws: (any Error).self, "\(place): \(damaged)") { try decoded.get() }
                    }
                }
            }
        }
        #expect(agreed > 1_000 && rejected > 1_000, "seed \(seed): \(agreed) damaged records read, \(rejected) rejected")
    }
}
