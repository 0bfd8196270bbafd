import Dispatch
import Foundation
import Synchronization
import Testing
import TestSupport
@testable import MirrorStore
import MirrorStoreEngine

/// Readers on many threads while writers commit: every read sees whole transactions only.
@Suite("Store concurrency")
struct StoreConcurrencyTests {
    /// A store of `Model` filled by `seed`, then 2 writers each committing `write`
    /// `writesPerWriter` times beside 8 readers each calling `read` 200 times; `read` returns
    /// what it saw wrong, if anything. Returns the open store and every problem.
    private func runReadersBesideWriters<Model: Persistable>(
        of model: Model.Type, in directory: String, writesPerWriter: Int,
        seed: (WriteTransaction) throws -> Void,
        write: @Sendable (WriteTransaction) throws -> Void,
        read: @Sendable (Store, Int) throws -> String?
    ) throws -> (store: Store, problems: [String]) {
        var configuration = Store.Configuration()
        configuration.durability = .none
        let store = try Store(path: directory + "/concurrent.store", models: [model], configuration: configuration)
        try store.write(seed)
        let problems = Lock<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 10) { worker in
            do {
                if worker < 2 {
                    for _ in 0..<writesPerWriter { try store.write(write) }
                } else {
                    for _ in 0..<200 {
                        if let problem = try read(store, worker) { problems.withLock { $0.append(problem) } }
                    }
                }
            } catch {
                problems.withLock { $0.append("worker \(worker): \(error)") }
            }
        }
        return (store, problems.withLock { $0 })
    }

    /// Four counters, each transaction setting all four to one new value.
    private func runCounterReadersBesideWriters(
        in directory: String, writesPerWriter: Int, read: @Sendable (Store, Int) throws -> String?
    ) throws -> (store: Store, problems: [String]) {
        try runReadersBesideWriters(of: Counter.self, in: directory, writesPerWriter: writesPerWriter, seed: { transaction in
            for slot in 0..<4 {
                var counter = Counter()
                counter.slot = UInt8(slot)
                try transaction.add(counter)
            }
        }, write: { transaction in
            let next = (try transaction.object(Counter.self, primaryKey: UInt8(0))?.count ?? 0) + 1
            for slot in 0..<4 {
                try transaction.update(Counter.self, primaryKey: UInt8(slot), set: \.count, to: next)
            }
        }, read: read)
    }

    @Test("8 readers never see part of a transaction while 2 writers commit")
    func readersBesideWriters() throws {
        try withTemporaryDirectory { directory in
            let reads = Atomic<Int>(0)
            let writesPerWriter = 150
            let (store, problems) = try runCounterReadersBesideWriters(in: directory, writesPerWriter: writesPerWriter) { store, worker in
                let counts = try store.objects(Counter.self).all().map(\.count)
                reads.add(1, ordering: .relaxed)
                return counts.count != 4 || Set(counts).count != 1 ? "reader \(worker) saw \(counts)" : nil
            }
            #expect(problems == [])
            #expect(reads.load(ordering: .relaxed) == 8 * 200)
            #expect(try store.objects(Counter.self).all().map(\.count) == Array(repeating: 2 * writesPerWriter, count: 4),
                    "writes are serialized: no increment is lost")
            try store.close()
        }
    }

    /// Scans share one kept file order per state of a type's objects: readers filling and
    /// reading it at once, while commits replace it, still see whole transactions.
    @Test("8 scanning readers beside 2 writers see whole transactions")
    func scanningReadersBesideWriters() throws {
        try withTemporaryDirectory { directory in
            let (store, problems) = try runCounterReadersBesideWriters(in: directory, writesPerWriter: 100) { store, worker in
                let scanned = try store.objects(Counter.self).filter(#Predicate { $0.count >= 0 })
                let counts = try scanned.all().map(\.count)
                let whole = scanned.plan.filter == .storedBytes && counts.count == 4 && Set(counts).count == 1
                return whole ? nil : "reader \(worker) saw \(counts) with \(scanned.plan)"
            }
            #expect(problems == [])
            try store.close()
        }
    }

    /// Four objects whose indexed `rank` every transaction raises together.
    private struct Ranked: Persistable {
        var id = 0
        var rank = 0
        init() {}
        static var primaryKey: String? { "id" }
        static var indexedProperties: [String] { ["rank"] }
    }

    /// Reads in index order share one version's chunk starts (`OrderedIndex.chunkStarts`):
    /// readers filling and reading them at once, while commits make new versions, still see
    /// whole transactions.
    @Test("8 readers in index order beside 2 writers see whole transactions")
    func indexOrderedReadersBesideWriters() throws {
        try withTemporaryDirectory { directory in
            let (store, problems) = try runReadersBesideWriters(of: Ranked.self, in: directory, writesPerWriter: 100, seed: { transaction in
                for id in 0..<4 {
                    var ranked = Ranked()
                    ranked.id = id
                    ranked.rank = id
                    try transaction.add(ranked)
                }
            }, write: { transaction in
                for id in 0..<4 {
                    let rank = (try transaction.object(Ranked.self, primaryKey: id)?.rank ?? 0) + 1
                    try transaction.update(Ranked.self, primaryKey: id, set: \.rank, to: rank)
                }
            }, read: { store, worker in
                let ordered = try store.objects(Ranked.self).sorted(using: SortDescriptor(\.rank))
                let read = Array(ordered)
                let offsets = Set(read.map { $0.rank - $0.id })
                guard case .index = ordered.plan.order, read.map(\.id) == [0, 1, 2, 3], offsets.count == 1 else {
                    return "reader \(worker) saw \(read.map { ($0.id, $0.rank) }) with \(ordered.plan)"
                }
                return nil
            })
            #expect(problems == [])
            #expect(try store.objects(Ranked.self).all().map(\.rank) == [200, 201, 202, 203])
            try store.close()
        }
    }

    @Test("models read out are detached values that cross threads")
    func detachedValues() async throws {
        let store = try Store.inMemory(models: [Person.self])
        try await store.write { try $0.add(Person.named("Ada", 1)) }
        let names = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let person = try store.object(Person.self, primaryKey: 1)
                    person?.name += "!"
                    return person?.name ?? ""
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(names == Array(repeating: "Ada!", count: 8), "each reader got its own copy")
        #expect(try store.object(Person.self, primaryKey: 1)?.name == "Ada")
    }
}
