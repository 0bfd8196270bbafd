import Foundation
import Testing
import TestSupport
import MirrorStoreEngine
@testable import MirrorStore

/// The file's record of the raw values each enum property holds: a case the models' enum lost is
/// found when the store opens, wherever the enum sits in a model, so that reads need not check.
@Suite struct EnumValueRecordTests {
    enum LevelBefore: Int { case low = 1, high = 2, legacy = 99 }
    enum LevelAfter: Int { case low = 1, high = 2 }

    /// An embedded value (no primary key) holding an enum.
    struct GaugeBefore: Persistable {
        var level = LevelBefore.low
        static var persistedTypeName: String { "Gauge" }
    }
    struct GaugeAfter: Persistable {
        var level = LevelAfter.low
        static var persistedTypeName: String { "Gauge" }
    }

    /// Enums in every place a model can hold one.
    struct PanelBefore: Persistable {
        var identifier = 0
        var level = LevelBefore.low
        var optional: LevelBefore?
        var list: [LevelBefore] = []
        var set: Set<LevelBefore> = []
        var byName: [String: LevelBefore] = [:]
        var gauge = GaugeBefore()
        var gauges: [GaugeBefore] = []
        static var primaryKey: String? { "identifier" }
        static var persistedTypeName: String { "Panel" }
    }
    struct PanelAfter: Persistable {
        var identifier = 0
        var level = LevelAfter.low
        var optional: LevelAfter?
        var list: [LevelAfter] = []
        var set: Set<LevelAfter> = []
        var byName: [String: LevelAfter] = [:]
        var gauge = GaugeAfter()
        var gauges: [GaugeAfter] = []
        static var primaryKey: String? { "identifier" }
        static var persistedTypeName: String { "Panel" }
    }

    static func openingError(_ path: String, configuration: Store.Configuration = .init()) -> StoreError.Kind? {
        do {
            try Store(path: path, models: [PanelAfter.self], configuration: configuration).close()
            return nil
        } catch let error as StoreError {
            return error.kind
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    @Test("a raw value without a case is found wherever the enum sits", arguments: [
        "Panel.level", "Panel.optional", "Panel.list", "Panel.set", "Panel.byName", "Gauge.level", "Gauge.level[]",
    ])
    func lostCaseIsFoundInEveryPlace(place: String) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/panels.store"
            var panel = PanelBefore(identifier: 1, level: .high, optional: .low, list: [.low, .high], set: [.high],
                                    byName: ["a": .low], gauge: GaugeBefore(level: .high), gauges: [GaugeBefore(level: .low)])
            switch place {
            case "Panel.level": panel.level = .legacy
            case "Panel.optional": panel.optional = .legacy
            case "Panel.list": panel.list.append(.legacy)
            case "Panel.set": panel.set.insert(.legacy)
            case "Panel.byName": panel.byName["b"] = .legacy
            case "Gauge.level": panel.gauge.level = .legacy
            default: panel.gauges.append(GaugeBefore(level: .legacy))
            }
            let store = try Store(path: path, models: [PanelBefore.self])
            try store.write { try $0.add(PanelBefore(identifier: 2)) }
            try store.write { try $0.add(panel) }
            try store.close()
            let property = place.hasSuffix("[]") ? String(place.dropLast(2)) : place
            #expect(Self.openingError(path) == .unknownEnumValue(property: property, enumType: "LevelAfter", rawValue: "99"))
        }
    }

    @Test("values in range open, and a value written later is recorded with its commit")
    func valuesWrittenLaterAreRecorded() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/panels.store"
            let store = try Store(path: path, models: [PanelBefore.self])
            try store.write { try $0.add(PanelBefore(identifier: 1, level: .high)) }
            try store.close()
            #expect(Self.openingError(path) == nil)
            let again = try Store(path: path, models: [PanelBefore.self])
            try again.write { try $0.update(PanelBefore.self, primaryKey: 1, set: \.level, to: .legacy) }
            try again.close()
            #expect(Self.openingError(path) == .unknownEnumValue(property: "Panel.level", enumType: "LevelAfter", rawValue: "99"))
        }
    }

    @Test("every value of concurrent writers is recorded, though their commits share a sync")
    func concurrentWritersRecordEveryValue() throws {
        enum Wide: Int, CaseIterable { case a = 1, b, c, d, e, f, g, h }
        struct Row: Persistable {
            var identifier = 0
            var wide = Wide.a
            static var primaryKey: String? { "identifier" }
        }
        try withTemporaryDirectory { directory in
            let path = directory + "/rows.store"
            let store = try Store(path: path, models: [Row.self])
            DispatchQueue.concurrentPerform(iterations: Wide.allCases.count) { index in
                try? store.write { try $0.add(Row(identifier: index, wide: Wide.allCases[index])) }
            }
            #expect(try store.objects(Row.self).count == Wide.allCases.count)
            try store.close()
            #expect(try Self.recordedEnumValues(at: path) == Set(Wide.allCases.map { "Row.wide = \($0.rawValue)" }))
        }
    }

    @Test("a property that became an enum without changing its stored kind is read once, on open")
    func propertyThatBecameAnEnumIsRecordedOnOpen() throws {
        struct Plain: Persistable {
            var identifier = 0
            var level = 0
            static var primaryKey: String? { "identifier" }
            static var persistedTypeName: String { "Panel" }
        }
        struct Narrow: Persistable {
            var identifier = 0
            var level = LevelAfter.low
            static var primaryKey: String? { "identifier" }
            static var persistedTypeName: String { "Panel" }
        }
        struct Wide: Persistable {
            var identifier = 0
            var level = LevelBefore.low
            static var primaryKey: String? { "identifier" }
            static var persistedTypeName: String { "Panel" }
        }
        try withTemporaryDirectory { directory in
            let path = directory + "/panels.store"
            let store = try Store(path: path, models: [Plain.self])
            try store.write { transaction in
                try transaction.add(Plain(identifier: 1, level: 1))
                try transaction.add(Plain(identifier: 2, level: 99))
            }
            try store.close()
            #expect(throws: StoreError(.unknownEnumValue(property: "Panel.level", enumType: "LevelAfter", rawValue: "99"))) {
                try Store(path: path, models: [Narrow.self])
            }
            // Opening with an enum that has every value records them; a later narrower enum is
            // then refused from the record alone.
            try Store(path: path, models: [Wide.self]).close()
            #expect(try Self.recordedEnumValues(at: path) == ["Panel.level = 1", "Panel.level = 99"])
            #expect(throws: StoreError(.unknownEnumValue(property: "Panel.level", enumType: "LevelAfter", rawValue: "99"))) {
                try Store(path: path, models: [Narrow.self])
            }
        }
    }

    @Test("a migration that leaves a lost value in place is refused before it replaces the file")
    func migrationLeavingLostValueIsRefused() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/panels.store"
            let store = try Store(path: path, models: [PanelBefore.self])
            try store.write { try $0.add(PanelBefore(identifier: 1, level: .legacy)) }
            try store.close()
            var configuration = Store.Configuration()
            configuration.schemaVersion = 2
            configuration.migration = { _, _ in }
            #expect(Self.openingError(path, configuration: configuration)
                == .unknownEnumValue(property: "Panel.level", enumType: "LevelAfter", rawValue: "99"))
            // The old file is untouched: the app that wrote it reads it.
            let old = try Store(path: path, models: [PanelBefore.self])
            #expect(try old.object(PanelBefore.self, primaryKey: 1)?.level == .legacy)
            // Deleting the object keeps its value in the record; a migration records anew from
            // the objects it writes.
            try old.write { try $0.delete(PanelBefore.self, primaryKey: 1) }
            try old.close()
            #expect(Self.openingError(path) == .unknownEnumValue(property: "Panel.level", enumType: "LevelAfter", rawValue: "99"))
            #expect(Self.openingError(path, configuration: configuration) == nil)
        }
    }

    @Test("results are made without reading an object: a damaged one fails where it is read")
    func resultsReadNoObjectWhenMade() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/receipts.store"
            try CraftedRecordTests.craft(at: path, receipts: [
                1: CraftedRecordTests.receipt(identifier: 1, amount: "12", when: 0),
                5: CraftedRecordTests.receipt(identifier: 5, amount: "12abc", when: 0),
            ])
            let store = try Store(path: path, models: [CraftedRecordTests.Receipt.self, Hero.self])
            defer { try? store.close() }
            let results = try store.objects(CraftedRecordTests.Receipt.self)
            #expect(results.count == 2)
            #expect(try results.object(at: 0).amount == 12)
            #expect(throws: StoreError.self) { try results.object(at: 1) }
            #expect(throws: StoreError.self) { try results.all() }
        }
    }
}

extension EnumValueRecordTests {
    /// The enum raw values the closed store at `path` records, as `Type.property = value`.
    static func recordedEnumValues(at path: String) throws -> Set<String> {
        let engine = try StorageEngine(path: path)
        defer { try? engine.close() }
        return Set(engine.snapshot().metadataKeys.compactMap { key -> String? in
            guard key.hasPrefix(StoredEnumValues.prefix) else { return nil }
            let parts = key.dropFirst(StoredEnumValues.prefix.count).split(separator: "\u{1F}", maxSplits: 1)
            guard parts.count == 2, let value = EnumValueText.value(String(parts[1])) else { return nil }
            return "\(parts[0]) = \(value.rawValueText)"
        })
    }
}

/// The text a raw value is recorded as: every value the record writes reads back exactly, and
/// any other text (a crafted file's) is refused or read as some value, never a trap.
@Suite struct EnumValueTextTests {
    @Test("every raw value round-trips through its text, bit for bit")
    func roundTrip() {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0xE0_0001))
        for _ in 0..<2_000 {
            let value: RecordValue = switch Int.random(in: 0..<8, using: &random) {
            case 0: .bool(random.chance(50))
            case 1: .int(random.integer(Int64.self))
            case 2: .uint(random.integer(UInt64.self))
            case 3: .double(random.double())
            case 4: .float(random.float())
            case 5: .string(random.pick(["", "a", "É", "E\u{301}", "\u{1F}", "s:x", "🙂", "x\u{0}y"]))
            case 6: .uuid(UUID())
            default: .data(Data((0..<Int.random(in: 0...4, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }))
            }
            let read = EnumValueText.value(EnumValueText.text(value))
            switch (value, read) {
            case (.double(let a), .double(let b)?): #expect(a.bitPattern == b.bitPattern)
            case (.float(let a), .float(let b)?): #expect(a.bitPattern == b.bitPattern)
            default: #expect(read == value, "\(value)")
            }
        }
    }

    @Test("random and mutated texts are read or refused, never trapped on")
    func fuzz() {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0xE0_0002))
        let seeds = ["b:1", "i:-5", "u:7", "f:3f800000", "d:7ff8000000000000", "s:low", "t:0", "g:00000000-0000-0000-0000-000000000000",
                     "m:1.5", "l:https://a.b", "x:0.ff", "x:"]
        let alphabet = Array("biufdstgmlx:.-0123456789abcdefABCDEF\u{1F}é🙂 ")
        var accepted = 0
        for _ in 0..<20_000 {
            var text = Array(random.pick(seeds))
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                let position = Int.random(in: 0...text.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: text.insert(random.pick(alphabet), at: position)
                case 1: if position < text.count { text.remove(at: position) }
                default: if position < text.count { text[position] = random.pick(alphabet) }
                }
            }
            if EnumValueText.value(String(text)) != nil { accepted += 1 }
        }
        #expect(accepted > 0)
    }
}
