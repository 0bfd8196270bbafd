import Foundation
import Testing
import TestSupport
@_spi(Testing) import MirrorStore

final class SlotLabel: Persistable, Equatable {
    var identifier = 0
    var name = ""
    init() {}
    static var primaryKey: String? { "identifier" }
    static var indexedProperties: [String] { ["name"] }
    static func == (lhs: SlotLabel, rhs: SlotLabel) -> Bool { lhs.identifier == rhs.identifier }
}

final class SlotBoard: Persistable {
    var identifier = 0
    var slots: [SlotLabel?] = []
    var labels: [SlotLabel] = []
    var main: SlotLabel?
    init() {}
    static var primaryKey: String? { "identifier" }
}

/// Queries on arrays of optional links, arrays of links and optional links answer what
/// `Array.filter` answers on the models as read back, whatever plan they take: explicit `nil`
/// elements, links to deleted objects and empty arrays included.
@Suite("Queries on lists of links against Array.filter")
struct LinkListDifferentialTests {
    /// Boards linking at random to a few labels (some elements an explicit `nil`), then some
    /// labels deleted.
    static func world(seed: UInt64) throws -> Store {
        var random = SeededRandom(seed: seed)
        let labels = (1...8).map { identifier in
            let label = SlotLabel()
            label.identifier = identifier
            label.name = "L\(identifier % 4)"
            return label
        }
        let boards = (1...150).map { identifier in
            let board = SlotBoard()
            board.identifier = identifier
            board.slots = (0..<Int.random(in: 0...3, using: &random)).map { _ in random.chance(30) ? nil : random.pick(labels) }
            board.labels = (0..<Int.random(in: 0...3, using: &random)).map { _ in random.pick(labels) }
            board.main = random.chance(30) ? nil : random.pick(labels)
            return board
        }
        let store = try Store.inMemory(models: [SlotBoard.self])
        try store.write { try $0.add(contentsOf: boards) }
        let deleted = labels.map(\.identifier).filter { _ in random.chance(30) }
        try store.write { transaction in
            for identifier in deleted { try transaction.delete(SlotLabel.self, primaryKey: identifier) }
        }
        return store
    }

    static let predicates: [(String, Predicate<SlotBoard>)] = [
        ("slots contain nil", #Predicate<SlotBoard> { $0.slots.contains { $0 == nil } }),
        ("slots contain nil, by contains(_:)", #Predicate<SlotBoard> { $0.slots.contains(nil) }),
        ("slots contain a label", #Predicate<SlotBoard> { $0.slots.contains { $0 != nil } }),
        ("no slot is nil", #Predicate<SlotBoard> { !$0.slots.contains { $0 == nil } }),
        ("a slot named L1", #Predicate<SlotBoard> { $0.slots.contains { $0?.name == "L1" } }),
        ("a slot not named L1", #Predicate<SlotBoard> { $0.slots.contains { $0?.name != "L1" } }),
        ("slots empty", #Predicate<SlotBoard> { $0.slots.isEmpty }),
        ("two slots", #Predicate<SlotBoard> { $0.slots.count == 2 }),
        ("a nil slot and a main", #Predicate<SlotBoard> { $0.slots.contains { $0 == nil } && $0.main != nil }),
        ("a nil slot or label L2", #Predicate<SlotBoard> { $0.slots.contains { (slot: SlotLabel?) in slot == nil } || $0.labels.contains { (label: SlotLabel) in label.name == "L2" } }),
        ("a label named L1", #Predicate<SlotBoard> { $0.labels.contains { $0.name == "L1" } }),
        ("a label not named L1", #Predicate<SlotBoard> { $0.labels.contains { $0.name != "L1" } }),
        ("labels empty", #Predicate<SlotBoard> { $0.labels.isEmpty }),
        ("more than one label", #Predicate<SlotBoard> { $0.labels.count > 1 }),
        ("no main", #Predicate<SlotBoard> { $0.main == nil }),
        ("a main", #Predicate<SlotBoard> { $0.main != nil }),
        ("main named L1", #Predicate<SlotBoard> { $0.main?.name == "L1" }),
    ]

    @Test("each shape matches Array.filter on the models read back, over seeded worlds")
    func matchesFilter() throws {
        let seed = SeededRandom.seed(default: 0x5107)
        for round in 0..<4 {
            let store = try Self.world(seed: seed &+ UInt64(round))
            let models = try store.objects(SlotBoard.self).all()
            #expect(models.contains { $0.slots.contains { $0 == nil } }, "seed \(seed), round \(round): no nil slot to find")
            for (name, predicate) in Self.predicates {
                let results = try store.objects(SlotBoard.self).filter(predicate)
                let expected = try models.filter { try predicate.evaluate($0) }.map(\.identifier)
                #expect(results.map(\.identifier) == expected,
                        "seed \(seed), round \(round), \(name): plan \(results.plan)")
            }
            // A write block's delete by predicate decides on the same records.
            let nilSlots = models.filter { $0.slots.contains { $0 == nil } }.count
            try store.write { transaction in
                let deleted = try transaction.delete(SlotBoard.self, where: #Predicate { $0.slots.contains { $0 == nil } })
                #expect(deleted == nilSlots, "seed \(seed), round \(round)")
            }
        }
    }
}
