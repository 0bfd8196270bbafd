import Foundation
import Testing
import TestSupport
@testable import MirrorStore
import MirrorStoreEngine

/// Each route `ModelReader` chooses for a type (standalone, linking, record graph) against the
/// general route (the record graph, which any type can take), on the zoo's models: every stored
/// object intact, then with damaged bytes put in its place as a transaction's pending write. On
/// intact bytes both routes give the same model; on damaged bytes both fail, or both give the
/// same model.
@Suite("Model reader routes")
struct ModelReaderRouteTests {
    static let seed = SeededRandom.seed(default: 0x200_2403)
    static let count = 120

    @Test("the chosen route and the general route read the same models, intact and damaged")
    func routesAgree() throws {
        var generator = ZooGenerator(seed: Self.seed)
        let store = try Store.inMemory(models: ReadRouteTests.models)
        var chains: [ZooChain] = []
        defer { for chain in chains { chain.next = nil } }
        try store.write { transaction in
            for id in 0..<Self.count {
                try transaction.add(generator.classRoot(id: id))
                try transaction.add(generator.structRoot(id: id))
                try transaction.add(generator.frozen(id: id))
            }
            chains = generator.chains
            for chain in chains { try transaction.add(chain) }
        }
        var random = SeededRandom(seed: Self.seed)
        var compared = 0
        compared += try compareRoutes(ZooClassRoot.self, in: store, random: &random)
        compared += try compareRoutes(ZooStructRoot.self, in: store, random: &random)
        compared += try compareRoutes(ZooFrozen.self, in: store, random: &random)
        compared += try compareRoutes(ZooLeaf.self, in: store, random: &random)
        compared += try compareRoutes(ZooChain.self, in: store, random: &random)
        #expect(compared > 2_000)
        #expect(try compareProjections(in: store, random: &random) > 500)
    }

    /// A projection of each ZooClassRoot, intact and damaged, against the model read by the same
    /// route: where the model reads, the projection reads too and holds the model's values; where
    /// it fails, the projection may still read (the damage may lie in a value it skips).
    private func compareProjections(in store: Store, random: inout SeededRandom) throws -> Int {
        let registry = store.observation.registry
        let entry = try registry.entry(for: ZooClassRoot.self)
        let plan = try PlanCache.shared.plan(for: ProjectionTests.RootCard.self)
        let shape = ProjectionShape(plan: plan, fieldIndex: entry.plan.schema.properties.map { plan.schema.index(ofProperty: $0.name) })
        let snapshot = store.observation.engine.snapshot()
        var compared = 0
        for key in try snapshot.keys(type: entry.plan.typeName) {
            let bytes = try #require(try snapshot.value(type: entry.plan.typeName, key: key))
            for damage in 0..<5 {
                let stored = damage == 0 ? bytes : random.damaged(bytes)
                let reader = ModelReader(entry: entry, snapshot: snapshot, registry: registry)
                let model = Result { try reader.model(ZooClassRoot.self, key: key, bytes: stored) }
                let projection = Result { try reader.projection(ProjectionTests.RootCard.self, shape: shape, key: key, bytes: stored) }
                let place = "seed \(Self.seed), ZooClassRoot \(key), damage \(damage)"
                compared += 1
                guard case .success(let model) = model else { continue }
                defer { ReadRouteTests.breakChains(in: model) }
                switch projection {
                case .failure(let error):
                    Issue.record("\(place): the model reads but its projection failed: \(error)")
                case .success(let card):
                    if let difference = firstDifference(ProjectionTests.RootCard(projecting: model), card) { Issue.record("\(place): \(difference)") }
                }
            }
        }
        return compared
    }

    /// Reads every object of `Model` by both routes, then a damaged copy of each; returns how
    /// many readings were compared.
    private func compareRoutes<Model: Persistable>(_ type: Model.Type, in store: Store, random: inout SeededRandom) throws -> Int {
        let registry = store.observation.registry
        let entry = try registry.entry(for: type)
        let snapshot = store.observation.engine.snapshot()
        let typeName = entry.plan.typeName
        var compared = 0
        for key in try snapshot.keys(type: typeName).sorted(by: StorageKey.precedes) {
            let place = "seed \(Self.seed), \(typeName) \(key)"
            let chosen = ModelReader(entry: entry, snapshot: snapshot, registry: registry)
            let general = ModelReader.general(entry: entry, snapshot: snapshot, registry: registry)
            compared += agree(Result { try chosen.model(type, key: key) }, Result { try general.model(type, key: key) }, place)

            let bytes = try #require(try snapshot.value(type: typeName, key: key))
            for damage in 0..<4 {
                let pending = PendingWrites()
                try pending.put(type: typeName, key: key, value: random.damaged(bytes))
                let chosen = ModelReader(entry: entry, snapshot: snapshot, registry: registry, pending: pending)
                let general = ModelReader.general(entry: entry, snapshot: snapshot, registry: registry, pending: pending)
                compared += agree(Result { try chosen.model(type, key: key) }, Result { try general.model(type, key: key) },
                                  "\(place), damage \(damage)")
            }
        }
        return compared
    }

    /// Records a difference between two readings of one object; returns 1.
    private func agree<Model>(_ chosen: Result<Model?, any Error>, _ general: Result<Model?, any Error>, _ place: String) -> Int {
        defer {
            for reading in [chosen, general] {
                if case .success(let model?) = reading { ReadRouteTests.breakChains(in: model) }
            }
        }
        switch (chosen, general) {
        case (.success(let fast), .success(let slow)):
            switch (fast, slow) {
            case (nil, nil): break
            case (let fast?, let slow?):
                if let difference = firstDifference(slow, fast, skip: ReadRouteTests.isInverse) {
                    Issue.record("\(place): the routes read different models: \(difference)")
                }
            default:
                Issue.record("\(place): one route found the object, the other did not")
            }
        case (.failure, .failure): break
        case (.success, .failure(let error)):
            Issue.record("\(place): the chosen route read a model where the general one failed: \(error)")
        case (.failure(let error), .success):
            Issue.record("\(place): the chosen route failed where the general one read a model: \(error)")
        }
        return 1
    }
}
