import Foundation
import Testing
import TestSupport
import MirrorStore

/// `values(_:)` and `projected(as:)` against the same reads of the array of models, on the zoo's
/// random models (embedded classes and structs, links, sets, nested arrays), unfiltered, filtered
/// and sorted, fresh and reopened; and the typed errors for projections that do not fit.
@Suite struct ProjectionTests {
    static let seed = SeededRandom.seed(default: 0x290_0003)
    static let count = 150

    /// Some of ZooClassRoot's properties: embedded classes and structs, links to-one and to-many,
    /// a set, optionals, nested arrays.
    struct RootCard: Persistable {
        var grid: [[ZooPoint]] = []
        var id = 0
        var second: ZooNote?
        var leaf: ZooLeaf?
        var labels: Set<String> = []
        var leaves: [ZooLeaf] = []
        var amount: Decimal?
        var mood: ZooMood?
        init() {}

        /// The card of `model`: what a projection of it reads.
        init(projecting model: ZooClassRoot) {
            grid = model.grid
            id = model.id
            second = model.second
            leaf = model.leaf
            labels = model.labels
            leaves = model.leaves
            amount = model.amount
            mood = model.mood
        }
    }

    /// An immutable projection of a struct model, made fresh from the stored values.
    struct FrozenCard: Persistable {
        let id: Int
    }

    struct Misnamed: Persistable {
        var id = 0
        var nickname = ""
        init() {}
    }

    struct Mistyped: Persistable {
        var id = ""
        init() {}
    }

    @Test("values and projections equal the models' properties, in the results' order")
    func matchesTheModels() throws {
        var generator = ZooGenerator(seed: Self.seed)
        let directory = TemporaryDirectory()
        let path = directory.file("projection.store")
        var chains: [ZooChain] = []
        defer { for chain in chains { chain.next = nil } }
        do {
            let store = try Store(path: path, models: ReadRouteTests.models)
            try store.write { transaction in
                for id in 0..<Self.count {
                    try transaction.add(generator.classRoot(id: id))
                    try transaction.add(generator.frozen(id: id))
                }
                chains = generator.chains
            }
            try check(store, context: "fresh")
            try store.close()
        }
        let store = try Store(path: path, models: ReadRouteTests.models)
        try check(store, context: "reopened")
        try store.close()
    }

    private func check(_ store: Store, context: String) throws {
        let place = "seed \(Self.seed), \(context)"
        let limit = Self.count / 2
        let every = try store.objects(ZooClassRoot.self)
        let shapes = [
            ("every object", every),
            ("filtered", try every.filter(#Predicate { $0.id < limit })),
            ("sorted", try every.sorted(using: SortDescriptor(\.id, order: .reverse))),
        ]
        for (shape, results) in shapes {
            let models = try results.all()
            defer { for model in models { ReadRouteTests.breakChains(in: model) } }
            #expect(try results.values(\.id) == models.map(\.id), "\(place), \(shape): values(\\.id)")
            #expect(try results.values(\.uuid) == models.map(\.uuid), "\(place), \(shape): values(\\.uuid)")
            #expect(try results.values(\.amount) == models.map(\.amount), "\(place), \(shape): values(\\.amount)")
            #expect(try results.values(\.stamp) == models.map(\.stamp), "\(place), \(shape): values(\\.stamp)")

            let cards = try results.projected(as: RootCard.self)
            try #require(cards.count == models.count, "\(place), \(shape): \(cards.count) projections for \(models.count) models")
            for (card, model) in zip(cards, models) {
                if let difference = firstDifference(RootCard(projecting: model), card) {
                    Issue.record("\(place), \(shape), key \(model.id): \(difference)")
                }
            }
            // A leaf linked from several results is one instance, as it is among the models.
            var leaves: [Int: ObjectIdentifier] = [:]
            for leaf in cards.flatMap({ [$0.leaf].compactMap { $0 } + $0.leaves }) {
                let known = leaves[leaf.id, default: ObjectIdentifier(leaf)]
                #expect(known == ObjectIdentifier(leaf), "\(place), \(shape): leaf \(leaf.id) read twice")
                leaves[leaf.id] = known
            }
        }
        let frozen = try store.objects(ZooFrozen.self)
        #expect(try frozen.projected(as: FrozenCard.self).map(\.id) == frozen.map(\.id), "\(place): immutable projection")
    }

    @Test("a projection that does not fit the model is a typed error naming the property")
    func mismatches() throws {
        let store = try Store.inMemory(models: ReadRouteTests.models)
        let roots = try store.objects(ZooClassRoot.self)
        #expect(throws: QueryError.self) { try roots.projected(as: Misnamed.self) }
        do {
            _ = try roots.projected(as: Misnamed.self)
        } catch let error as QueryError {
            #expect(error.description == "Misnamed.nickname cannot be read from a ZooClassRoot: ZooClassRoot stores no such property.")
        }
        do {
            _ = try roots.projected(as: Mistyped.self)
            Issue.record("a projection with another type was read")
        } catch let error as QueryError {
            #expect(error.description == "Mistyped.id cannot be read from a ZooClassRoot: it is String in Mistyped but Int in ZooClassRoot.")
        }
    }
}
