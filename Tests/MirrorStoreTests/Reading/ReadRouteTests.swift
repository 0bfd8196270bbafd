import Foundation
import MirrorStore
import Testing
import TestSupport

/// Every model shape of the zoo, with random values from a seed, written and read back through
/// every public read route, compared field by field with what was written. A failure names the
/// seed, the route, the key and the path of the first difference; replay it with
/// `MIRRORSTORE_SEED=<seed>`.
@Suite("Read routes")
struct ReadRouteTests {
    static let seed = SeededRandom.seed(default: 0x200_0024)
    /// Objects of each root type: with the pool they link to, about 1,560 objects per store.
    static let count = 500
    nonisolated(unsafe) static let models: [any Persistable.Type] = [ZooClassRoot.self, ZooStructRoot.self, ZooFrozen.self, ZooChain.self, ZooLeaf.self]

    /// What was written, by type and key.
    struct Written {
        var classRoots: [Int: ZooClassRoot] = [:]
        var structRoots: [Int: ZooStructRoot] = [:]
        var frozen: [Int: ZooFrozen] = [:]
        var chains: [Int: ZooChain] = [:]
    }

    @Test("every shape reads back as written by every route: file, reopened, compacted, in memory")
    func everyRoute() async throws {
        var generator = ZooGenerator(seed: Self.seed)
        var written = Written()
        for id in 0..<Self.count {
            written.classRoots[id] = generator.classRoot(id: id)
            written.structRoots[id] = generator.structRoot(id: id)
            written.frozen[id] = generator.frozen(id: id)
        }
        for chain in generator.chains { written.chains[chain.id] = chain }
        defer { for chain in generator.chains { chain.next = nil } }

        try mappingAlone(written)
        let directory = TemporaryDirectory()
        let path = directory.file("zoo.store")
        do {
            let store = try Store(path: path, models: Self.models)
            try write(written, to: store)
            try await checkEveryRoute(written, store: store, context: "file")
            try store.close()
        }
        do {
            let store = try Store(path: path, models: Self.models)
            try await checkEveryRoute(written, store: store, context: "reopened")
            try store.compact()
            try await checkEveryRoute(written, store: store, context: "compacted")
            try store.close()
        }
        do {
            let store = try Store(path: path, models: Self.models)
            try await checkEveryRoute(written, store: store, context: "reopened after compaction")
            try store.close()
        }
        let memory = try Store.inMemory(models: Self.models)
        try write(written, to: memory)
        try await checkEveryRoute(written, store: memory, context: "in memory")
    }

    /// Writes in a few transactions, each of which reads back through its own view too.
    private func write(_ written: Written, to store: Store) throws {
        for part in 0..<4 {
            try store.write { transaction in
                for id in stride(from: part, to: Self.count, by: 4) {
                    try transaction.add(written.classRoots[id]!)
                    try transaction.add(written.structRoots[id]!)
                    try transaction.add(written.frozen[id]!)
                }
                for chain in written.chains.values { try transaction.add(chain) }
                for id in stride(from: part, to: Self.count, by: 20) {
                    try compare(written.classRoots[id], try transaction.object(ZooClassRoot.self, primaryKey: id), "transaction", id)
                    try compare(written.structRoots[id], try transaction.object(ZooStructRoot.self, primaryKey: id), "transaction", id)
                    try compare(written.frozen[id], try transaction.object(ZooFrozen.self, primaryKey: id), "transaction", id)
                }
            }
        }
    }

    private func mappingAlone(_ written: Written) throws {
        for (id, model) in written.classRoots {
            let record = try model.managedObject()
            defer { record.releaseGraph() }
            try compare(model, try ZooClassRoot.modelInstance(managedObject: record), "mapping alone", id)
        }
        for (id, model) in written.structRoots {
            let record = try model.managedObject()
            defer { record.releaseGraph() }
            try compare(model, try ZooStructRoot.modelInstance(managedObject: record), "mapping alone", id)
        }
        for (id, model) in written.frozen {
            let record = try model.managedObject()
            defer { record.releaseGraph() }
            try compare(model, try ZooFrozen.modelInstance(managedObject: record), "mapping alone", id)
        }
    }

    private func checkEveryRoute(_ written: Written, store: Store, context: String) async throws {
        do {
            try await checkRoutes(of: written.classRoots, in: store, context: context)
            try await checkRoutes(of: written.structRoots, in: store, context: context)
            try await checkRoutes(of: written.frozen, in: store, context: context)
            try await checkRoutes(of: written.chains, in: store, context: context)
            try checkInverses(written.chains, in: store, context: context)
        } catch let failure as ReadRouteFailure {
            throw failure
        } catch {
            Issue.record("seed \(Self.seed), \(context): a read threw \(error)")
            throw ReadRouteFailure()
        }
    }

    private func checkRoutes<Model: ZooRoot>(of written: [Int: Model], in store: Store, context: String) async throws {
        let keys = written.keys.sorted()
        let route = "\(context), \(Model.self)"
        for key in keys {
            try compare(written[key], try store.object(Model.self, primaryKey: key), "\(route), object(_:primaryKey:)", key)
        }
        let results = try store.objects(Model.self)
        try #require(results.count == keys.count, "seed \(Self.seed), \(route): \(results.count) results for \(keys.count) objects")
        // Models read together share the instances they link to: unlinked once all are compared.
        let all = try results.all()
        defer { for model in all { Self.breakChains(in: model) } }
        for (model, key) in zip(all, keys) {
            try compare(written[key], model, "\(route), all()", key, unlinking: false)
        }
        try compareSampled(written, Array(results.indices.lazy.map { results[$0] }), keys, "\(route), subscript")
        try compareSampled(written, Array(results), keys, "\(route), iteration")
        let limit = keys.count / 3
        try compareSampled(written, Array(try results.filter(Model.keys(below: limit))), keys.filter { $0 < limit }, "\(route), filter")
        try compareSampled(written, try results.sorted(using: Model.descendingKeys).all(), keys.reversed(), "\(route), sorted(using:)")
        var changes = results.changes.makeAsyncIterator()
        let first = try #require(try await changes.next())
        try compareSampled(written, Array(first.results), keys, "\(route), first change")
    }

    /// The models read by a route hold exactly `keys`, in that order; every seventh is compared
    /// field by field (every one is on the by-key and `all()` routes), since comparing through
    /// `Mirror` costs far more than reading.
    private func compareSampled<Model: ZooRoot>(_ written: [Int: Model], _ read: [Model], _ keys: [Int], _ route: String) throws {
        defer { for model in read { Self.breakChains(in: model) } }
        let readKeys = read.map(\.id)
        guard readKeys == keys else {
            let position = zip(readKeys, keys).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(readKeys.count, keys.count)
            Issue.record("seed \(Self.seed), \(route): \(readKeys.count) models read for \(keys.count) keys, first wrong at position \(position)")
            throw ReadRouteFailure()
        }
        for position in stride(from: 0, to: read.count, by: 7) {
            try compare(written[keys[position]], read[position], route, keys[position], unlinking: false)
        }
    }

    /// Each chain node lists, as its inverse, the nodes whose `next` it is, in key order.
    private func checkInverses(_ chains: [Int: ZooChain], in store: Store, context: String) throws {
        for (id, node) in chains {
            let expected = chains.values.filter { $0.next === node }.map(\.id).sorted()
            let read = try #require(try store.object(ZooChain.self, primaryKey: id))
            defer { Self.breakChains(in: read) }
            #expect(read.previous.map(\.id) == expected, "seed \(Self.seed), \(context), inverse of chain \(id)")
            for source in read.previous {
                try compare(chains[source.id], source, "\(context), inverse of chain \(id)", source.id, unlinking: false)
            }
        }
    }

    /// `unlinking`: whether `actual` was read alone, so its chain nodes are unlinked once compared;
    /// models read together are unlinked by their caller once all are compared.
    private func compare<Model>(_ expected: Model?, _ actual: Model?, _ route: String, _ key: Int, unlinking: Bool = true) throws {
        let expected = try #require(expected, "seed \(Self.seed), \(route): nothing was written under \(key)")
        let actual = try #require(actual, "seed \(Self.seed), \(route): nothing read under \(key)")
        defer { if unlinking { Self.breakChains(in: actual) } }
        if let difference = firstDifference(expected, actual, skip: Self.isInverse) {
            Issue.record("seed \(Self.seed), \(route), key \(key): \(difference)")
            throw ReadRouteFailure()
        }
    }

    /// Unlinks the chain nodes a model read from the store reaches, which may form cycles that
    /// reference counting never frees (as they do in the models written).
    static func breakChains(in model: Any) {
        var pending: [ZooChain] = switch model {
        case let chain as ZooChain: [chain]
        case let root as ZooClassRoot: root.chain.map { [$0] } ?? []
        case let root as ZooStructRoot: root.chain.map { [$0] } ?? []
        default: []
        }
        var seen = Set<ObjectIdentifier>()
        while let chain = pending.popLast() {
            guard seen.insert(ObjectIdentifier(chain)).inserted else { continue }
            if let next = chain.next { pending.append(next) }
            pending.append(contentsOf: chain.previous)
            chain.next = nil
        }
    }

    /// Inverses are filled by the store and empty in a model made in code: compared apart.
    static func isInverse(_ value: Any) -> Bool {
        String(describing: type(of: value)).hasPrefix("LinkingObjects<")
    }

    /// Stops at the first difference, which `compare` has recorded.
    struct ReadRouteFailure: Error {}
}
