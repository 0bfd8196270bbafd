import Dispatch
import Foundation
import Testing
import TestSupport
@testable import MirrorStore
import MirrorStoreEngine

/// A source's indexes are placed by the model's layout, made once per model, and each is looked
/// up on first use (`TypeIndexes`): checked against the indexes found by name in the same
/// snapshot, through random commits of two types with checkpoints, reopenings and compactions,
/// on intact and damaged files, and with readers racing to look the same index up first.
@Suite struct TypeIndexesTests {
    static let seed = SeededRandom.seed(default: 0x7E_1D_E5)

    final class Ticket: Persistable {
        var id = 0
        var title = ""
        var price = 0
        var seat = ""
        var row = 0
        var label: String?
        init() {}
        static var primaryKey: String? { "id" }
        static var indexedProperties: [String] { ["title", "price"] }
        static var uniqueProperties: [String] { ["seat"] }
        static var insensitiveIndexedProperties: [String] { ["title"] }
        static var compoundIndexes: [CompoundIndex] { [["row", "label"]] }
    }

    final class Stamp: Persistable {
        var code = ""
        var kind = 0
        var note = ""
        init() {}
        static var primaryKey: String? { "code" }
        static var indexedProperties: [String] { ["kind"] }
    }

    static let titles = ["Alpha", "alpha", "Beta", "ÉTÉ", "été", "", "Gamma ray"]

    static func ticket(_ id: Int, _ random: inout SeededRandom) -> Ticket {
        let ticket = Ticket()
        ticket.id = id
        ticket.title = random.pick(titles)
        ticket.price = Int.random(in: -5...20, using: &random)
        ticket.seat = "S\(id)"
        ticket.row = Int.random(in: 0...3, using: &random)
        ticket.label = random.optional { random in random.pick(["a", "b", "c"]) }
        return ticket
    }

    static func stamp(_ code: String, _ random: inout SeededRandom) -> Stamp {
        let stamp = Stamp()
        stamp.code = code
        stamp.kind = Int.random(in: 0...6, using: &random)
        stamp.note = random.pick(titles)
        return stamp
    }

    /// What an index reads, or the error it throws, as text to compare.
    static func entries(_ index: IndexSnapshot?) -> String {
        guard let index else { return "none" }
        do {
            return "\(index.count) \(index.isUnique) \(try index.objects(from: nil, to: nil))"
        } catch {
            return "\(error)"
        }
    }

    /// Checks that `indexes`, placed by `entry`'s layout, are the indexes of `snapshot` found by
    /// name as the model asks for them (the last one asked for at a position in force).
    static func check(_ indexes: TypeIndexes, entry: ModelRegistry.Entry, snapshot: EngineSnapshot, _ context: String) {
        let count = entry.plan.schema.properties.count
        var plain = [String?](repeating: nil, count: count)
        var folded = [String?](repeating: nil, count: count)
        var compound: [(name: String, positions: [Int])] = []
        for wanted in entry.indexes where snapshot.index(named: wanted.name) != nil {
            if wanted.isFolded, let position = wanted.positions.first {
                folded[position] = wanted.name
            } else if wanted.positions.count > 1 {
                compound.append((wanted.name, wanted.positions))
            } else if let position = wanted.positions.first {
                plain[position] = wanted.name
            }
        }
        for position in -1...count {
            let expected = plain.indices.contains(position) ? plain[position] : nil
            let found = indexes[position]
            #expect(found?.name == expected, "\(context): index of position \(position)")
            #expect(entries(found?.snapshot) == entries(expected.flatMap(snapshot.index(named:))), "\(context): entries at \(position)")
            if let found, let wanted = entry.indexes.last(where: { $0.name == found.name }) {
                #expect(found.order.map(\.name) == wanted.order.map(\.name) && found.isUnique == wanted.isUnique, "\(context): \(found.name)")
            }
            let expectedFolded = folded.indices.contains(position) ? folded[position] : nil
            #expect(indexes.folded(position)?.name == expectedFolded, "\(context): folded index of position \(position)")
            #expect(entries(indexes.folded(position)?.snapshot) == entries(expectedFolded.flatMap(snapshot.index(named:))), "\(context): folded at \(position)")
            #expect(indexes.isCompoundComponent(position) == compound.contains { $0.positions.contains(position) }, "\(context): compound at \(position)")
            // Asked again: the index published the first time.
            #expect(indexes[position] === found, "\(context): the same index again at \(position)")
        }
        #expect(indexes.compound.map(\.index.name) == compound.map(\.name) && indexes.compound.map(\.positions) == compound.map(\.positions),
                "\(context): compound indexes")
        for index in indexes.compound {
            #expect(entries(index.index.snapshot) == entries(snapshot.index(named: index.index.name)), "\(context): \(index.index.name)")
        }
    }

    /// Checks the kept source of each type and a fresh `TypeIndexes` of the same snapshot.
    static func checkSources(_ store: Store, _ context: String) throws {
        for source in [try store.objects(Ticket.self).source, try store.objects(Stamp.self).source] {
            check(source.indexes, entry: source.entry, snapshot: source.snapshot, "\(context), kept source of \(source.plan.typeName)")
            check(TypeIndexes(source.entry.indexLayout, snapshot: source.snapshot), entry: source.entry, snapshot: source.snapshot,
                  "\(context), fresh indexes of \(source.plan.typeName)")
        }
    }

    @Test("Indexes placed by the layout are those found by name, and queries answer as Array.filter, across commits, checkpoints and compactions")
    func layoutMatchesLookupByName() throws {
        var random = SeededRandom(seed: Self.seed)
        var configuration = Store.Configuration()
        configuration.durability = .none
        // Checkpoints every few commits, so that indexes are read from runs and from memory.
        configuration.checkpointInterval = 3_000
        try withTemporaryDirectory { directory in
            let path = directory + "/tickets.store"
            var tickets: [Int: Ticket] = [:]
            var stamps: [String: Stamp] = [:]
            var store = try Store(path: path, models: [Ticket.self, Stamp.self], configuration: configuration)
            for phase in 0..<12 {
                for _ in 0..<Int.random(in: 1...5, using: &random) {
                    try store.write { transaction in
                        for _ in 0..<Int.random(in: 1...60, using: &random) {
                            let ticket = Self.ticket(Int.random(in: 1...300, using: &random), &random)
                            try transaction.add(ticket)
                            tickets[ticket.id] = ticket
                            if random.chance(50) {
                                let stamp = Self.stamp("c\(Int.random(in: 1...200, using: &random))", &random)
                                try transaction.add(stamp)
                                stamps[stamp.code] = stamp
                            }
                        }
                        for _ in 0..<Int.random(in: 0...8, using: &random) where !tickets.isEmpty {
                            let id = tickets.keys.sorted()[Int.random(in: 0..<tickets.count, using: &random)]
                            try transaction.delete(Ticket.self, primaryKey: id)
                            tickets[id] = nil
                        }
                    }
                    // Some states are queried before the next commit, some only after several.
                    if random.chance(50) { try Self.checkSources(store, "seed \(Self.seed), phase \(phase)") }
                }
                switch phase % 4 {
                case 1:
                    try store.close()
                    store = try Store(path: path, models: [Ticket.self, Stamp.self], configuration: configuration)
                case 3:
                    try store.compact()
                default: break
                }
                let context = "seed \(Self.seed), phase \(phase)"
                try Self.checkSources(store, context)
                let price = Int.random(in: -5...20, using: &random)
                #expect(try store.objects(Ticket.self).filter(#Predicate { $0.price == price }).map(\.id).sorted()
                    == tickets.values.filter { $0.price == price }.map(\.id).sorted(), "\(context): price \(price)")
                let kind = Int.random(in: 0...6, using: &random)
                #expect(try store.objects(Stamp.self).filter(#Predicate { $0.kind == kind }).map(\.code).sorted()
                    == stamps.values.filter { $0.kind == kind }.map(\.code).sorted(), "\(context): kind \(kind)")
                let byPrice = try store.objects(Ticket.self).sorted(using: SortDescriptor(\.price, order: .reverse))
                #expect(byPrice.plan.order == .index(name: "Ticket.price", ascending: false), "\(context): \(byPrice.plan)")
                #expect(Array(byPrice.prefix(20)).map(\.id) == tickets.values.sorted { ($1.price, $0.id) < ($0.price, $1.id) }.prefix(20).map(\.id),
                        "\(context): newest 20 by price")
            }
            try store.close()
        }
    }

    @Test("On damaged copies, the layout's indexes read what those found by name read, or throw alike")
    func damagedCopiesAgree() throws {
        var random = SeededRandom(seed: Self.seed ^ 0xDA)
        var configuration = Store.Configuration()
        configuration.durability = .none
        try withTemporaryDirectory { directory in
            let path = directory + "/tickets.store"
            let store = try Store(path: path, models: [Ticket.self, Stamp.self], configuration: configuration)
            try store.write { transaction in
                for id in 1...400 { try transaction.add(Self.ticket(id, &random)) }
                for code in 1...100 { try transaction.add(Self.stamp("c\(code)", &random)) }
            }
            // Runs on disk, then changes in memory on top of them.
            try store.compact()
            try store.write { transaction in
                for id in 390...420 { try transaction.add(Self.ticket(id, &random)) }
            }
            try store.close()
            let intact = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let damagedPath = directory + "/damaged.store"
            var opened = 0
            for round in 0..<30 {
                try? FileManager.default.removeItem(atPath: damagedPath)
                try? FileManager.default.removeItem(atPath: damagedPath + ".lock")
                try Data(random.damaged(intact)).write(to: URL(fileURLWithPath: damagedPath))
                guard let damaged = try? Store(path: damagedPath, models: [Ticket.self, Stamp.self], configuration: configuration) else { continue }
                opened += 1
                try Self.checkSources(damaged, "seed \(Self.seed), damage round \(round)")
                try? damaged.close()
            }
            #expect(opened > 0, "seed \(Self.seed): no damaged copy opened")
        }
    }

    @Test("Readers racing to look an index up first all get the one index published")
    func racingReadersShareOneIndex() throws {
        var random = SeededRandom(seed: Self.seed ^ 0x8ACE)
        let store = try Store.inMemory(models: [Ticket.self, Stamp.self])
        try store.write { transaction in
            for id in 1...50 { try transaction.add(Self.ticket(id, &random)) }
        }
        let source = try store.objects(Ticket.self).source
        let count = source.schema.properties.count
        for round in 0..<20 {
            let indexes = TypeIndexes(source.entry.indexLayout, snapshot: source.snapshot)
            let seen = Lock<[[ObjectIdentifier?]]>([])
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                let found = (0..<count).map { position in (indexes[position] ?? indexes.folded(position)).map(ObjectIdentifier.init) }
                seen.withLock { $0.append(found) }
            }
            let all = seen.withLock { $0 }
            #expect(all.count == 4 && all.allSatisfy { $0 == all[0] }, "round \(round): \(all)")
            #expect(all.first?.contains { $0 != nil } == true, "round \(round): no index found")
        }
    }
}
