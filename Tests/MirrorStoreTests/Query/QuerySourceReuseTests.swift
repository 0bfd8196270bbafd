import Dispatch
import Foundation
import Synchronization
import Testing
import TestSupport
@testable import MirrorStore
import MirrorStoreEngine

/// Queries of a type start from one source while the store does not change; these check that
/// a reused source never shows a state older than the newest commit.
@Suite("Query source reuse")
struct QuerySourceReuseTests {
    @Test("Queries share a source until a commit, a compaction or closing, and then see the new state")
    func sharedUntilTheStoreChanges() throws {
        let directory = TemporaryDirectory()
        let store = try Store(path: directory.file("reuse.store"), models: [QueryHero.self])
        var world = QueryWorld(seed: 0x5EED)
        try store.write { try $0.add(contentsOf: (1...40).map { world.hero($0) }) }

        let first = try store.objects(QueryHero.self)
        #expect(try store.objects(QueryHero.self).source === first.source, "nothing changed: the same source")

        try store.write { try $0.add(world.hero(41)) }
        let afterWrite = try store.objects(QueryHero.self)
        #expect(afterWrite.source !== first.source)
        #expect(afterWrite.count == 41)
        #expect(try afterWrite.filter(#Predicate { $0.identifier == 41 }).count == 1)
        #expect(first.count == 40, "results made before the write keep their snapshot")

        try store.write { _ in }
        #expect(try store.objects(QueryHero.self).source === afterWrite.source, "an empty write commits nothing")

        try store.compact()
        let afterCompaction = try store.objects(QueryHero.self)
        #expect(afterCompaction.source !== afterWrite.source)
        #expect(afterCompaction.map(\.identifier) == Array(1...41))

        try store.close()
        #expect(throws: (any Error).self) { _ = try store.objects(QueryHero.self).all() }
    }

    @Test("Each model type keeps its own source, found before the registry is asked, which still refuses other types")
    func sourcesKeptPerModelType() throws {
        let store = try Store.inMemory(models: [QueryHero.self])
        var world = QueryWorld(seed: 0xB0A7)
        try store.write { try $0.add(contentsOf: (1...12).map { world.hero($0) }) }
        let heroes = try store.objects(QueryHero.self)
        let publishers = try store.objects(QueryPublisher.self)
        let dogs = try store.objects(QueryDog.self)
        #expect(heroes.source !== publishers.source && publishers.source !== dogs.source && heroes.source !== dogs.source)
        for _ in 0..<3 {
            #expect(try store.objects(QueryHero.self).source === heroes.source)
            #expect(try store.objects(QueryPublisher.self).source === publishers.source)
            #expect(try store.objects(QueryDog.self).source === dogs.source)
        }
        #expect(try store.objects(QueryHero.self).map(\.identifier) == Array(1...12))
        // A type the store was not opened with is refused, with sources of other types kept.
        #expect(throws: StoreError(.unknownModel(typeName: "Company"))) { try store.objects(Company.self) }
        #expect(try store.objects(QueryHero.self).source === heroes.source)
    }

    @Test("A source is not reused once the engine changed, even by a commit the store did not make")
    func staleSourcesAreNotReused() throws {
        let store = try Store.inMemory(models: [QueryHero.self])
        var world = QueryWorld(seed: 0xF00D)
        try store.write { try $0.add(contentsOf: (1...5).map { world.hero($0) }) }
        let before = try store.objects(QueryHero.self)
        // Straight to the engine: what a reader caching a snapshot between the store emptying the
        // cache and the engine publishing its commit would leave behind.
        var batch = WriteBatch()
        batch.setMetadata(key: "test.marker", value: [1])
        try store.observation.engine.commit(batch)
        let after = try store.objects(QueryHero.self)
        #expect(after.source !== before.source)
        #expect(after.source.snapshot.metadata(key: "test.marker") == [1])
    }

    @Test("Readers racing a writer see every commit in order and never an older state")
    func readersRacingAWriter() throws {
        let store = try Store.inMemory(models: [QueryHero.self])
        let total = 120
        let problems = Lock<[String]>([])
        let written = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 3) { worker in
            if worker == 0 {
                var world = QueryWorld(seed: 0xACE)
                for identifier in 1...total {
                    do {
                        try store.write { try $0.add(world.hero(identifier)) }
                    } catch {
                        problems.withLock { $0.append("write \(identifier): \(error)") }
                    }
                    written.store(identifier, ordering: .releasing)
                }
                return
            }
            // Bounded: the last round starts after the writer finished, so a reader stuck on an
            // old state fails the test instead of hanging it.
            var last = 0
            var finished = false
            while !finished {
                let acknowledged = written.load(ordering: .acquiring)
                finished = acknowledged == total
                do {
                    let identifiers = try store.objects(QueryHero.self).filter(#Predicate { $0.identifier > 0 }).map(\.identifier)
                    if identifiers != (0..<identifiers.count).map({ $0 + 1 }) {
                        problems.withLock { $0.append("reader \(worker) saw \(identifiers.prefix(5))… of \(identifiers.count)") }
                    }
                    if identifiers.count < acknowledged || identifiers.count < last {
                        problems.withLock { $0.append("reader \(worker) saw \(identifiers.count) after \(acknowledged) were written and \(last) read") }
                    }
                    last = identifiers.count
                } catch {
                    problems.withLock { $0.append("reader \(worker): \(error)") }
                    return
                }
            }
        }
        #expect(problems.withLock { $0 }.isEmpty, "\(problems.withLock { $0.prefix(3) })")
    }
}
