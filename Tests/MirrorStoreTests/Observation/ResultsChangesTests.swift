import Foundation
import Testing
@_spi(Testing) import MirrorStore
import MirrorStoreEngine
import TestSupport

private final class Score: Persistable {
    var identifier = 0
    var points = 0
    var label = ""
    init() {}
    static var primaryKey: String? { "identifier" }
    static var indexedProperties: [String] { ["points"] }

    static func make(_ identifier: Int, points: Int, label: String = "") -> Score {
        let score = Score()
        score.identifier = identifier
        score.points = points
        score.label = label
        return score
    }
}

private final class Team: Persistable {
    var identifier = 0
    var name = ""
    var captain: Player?
    init() {}
    static var primaryKey: String? { "identifier" }
}

private final class Player: Persistable {
    var identifier = 0
    var name = ""
    init() {}
    static var primaryKey: String? { "identifier" }
}

/// The scores with at least 50 points, by points then identifier.
private func highScores(_ store: Store) throws -> Results<Score> {
    try store.objects(Score.self)
        .filter(#Predicate { $0.points >= 50 })
        .sorted(using: [SortDescriptor(\Score.points), SortDescriptor(\Score.identifier)])
}

/// A score as the consumer of changes holds it.
private struct Row: Equatable {
    let identifier: Int
    let points: Int
    let label: String

    init(_ score: Score) {
        identifier = score.identifier
        points = score.points
        label = score.label
    }
}

private func keys(_ identifiers: [Int]) -> [StorageKey] {
    identifiers.map { .integer(Int64($0)) }
}

@Suite("Results changes")
struct ResultsChangesTests {
    @Test("The first element holds the current results and no differences")
    func firstElement() async throws {
        let store = try Store.inMemory(models: [Score.self])
        try await store.write { transaction in
            for (identifier, points) in [(1, 70), (2, 10), (3, 55)] { try transaction.add(Score.make(identifier, points: points)) }
        }
        var iterator = try highScores(store).changes.makeAsyncIterator()
        let first = try #require(try await iterator.next())
        #expect(try first.results.storageKeys == keys([3, 1]))
        #expect(first.deletions.isEmpty && first.insertions.isEmpty && first.modifications.isEmpty)
    }

    /// 500 seeded random transactions of inserts, deletes, moves and plain changes, against a
    /// dictionary: after each one that changes the filtered, sorted results, the next element's
    /// deletions and insertions turn the previous keys into the new ones, and its modifications
    /// are exactly the objects that stayed in place and changed.
    @Test("Deletions, insertions, moves and modifications carry the right indices")
    func modelBased() async throws {
        let store = try Store.inMemory(models: [Score.self])
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x5EED_1201))
        var reference: [Int: (points: Int, label: String)] = [:]
        func expected() -> [Int] {
            reference.filter { $0.value.points >= 50 }
                .sorted { ($0.value.points, $0.key) < ($1.value.points, $1.key) }.map(\.key)
        }
        var iterator = try highScores(store).changes.makeAsyncIterator()
        var previous = try #require(try await iterator.next()).results.storageKeys
        #expect(previous.isEmpty)
        var elements = 0
        for step in 0..<500 {
            let before = reference
            var writes: [(Int, (points: Int, label: String)?)] = []
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let existing = reference.keys.sorted()
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<4 where existing.count < 60, 0 where existing.isEmpty:
                    let identifier = Int.random(in: 1...200, using: &random)
                    reference[identifier] = (Int.random(in: 0..<100, using: &random), "")
                case 4..<6 where !existing.isEmpty:
                    let identifier = random.pick(existing)
                    reference[identifier] = nil
                case 6..<8 where !existing.isEmpty:
                    let identifier = random.pick(existing)
                    reference[identifier]?.points = Int.random(in: 0..<100, using: &random)
                default:
                    guard let identifier = existing.isEmpty ? nil : random.pick(existing) else { continue }
                    reference[identifier]?.label = "label \(step)"
                }
            }
            for identifier in Set(before.keys).union(reference.keys) {
                let now = reference[identifier]
                if before[identifier].map({ [$0.points: $0.label] }) != now.map({ [$0.points: $0.label] }) { writes.append((identifier, now)) }
            }
            let written = writes
            try await store.write { transaction in
                for (identifier, value) in written {
                    if let value {
                        try transaction.add(Score.make(identifier, points: value.points, label: value.label))
                    } else {
                        try transaction.delete(Score.self, primaryKey: identifier)
                    }
                }
            }
            let newKeys = keys(expected())
            let changedInResults = Set(written.map(\.0)).intersection(expected()).union(Set(written.map(\.0)).intersection(previous.compactMap {
                if case .integer(let value) = $0 { Int(value) } else { nil }
            }))
            // No element comes for a transaction that leaves the results as they were.
            guard newKeys != previous || !changedInResults.isEmpty else { continue }
            let change = try #require(try await iterator.next(), "step \(step)")
            elements += 1
            #expect(try change.results.storageKeys == newKeys, "step \(step): results")
            var applied = previous
            for index in change.deletions.reversed() { applied.remove(at: index) }
            for index in change.insertions { applied.insert(newKeys[index], at: index) }
            #expect(applied == newKeys, "step \(step): deletions and insertions do not turn the old keys into the new")
            let stayed = IndexSet(newKeys.indices).subtracting(change.insertions)
            let changedAndStayed = IndexSet(stayed.filter { index in
                guard case .integer(let identifier) = newKeys[index] else { return false }
                return written.contains { $0.0 == Int(identifier) }
            })
            #expect(change.modifications == changedAndStayed, "step \(step): modifications")
            previous = newKeys
        }
        #expect(elements > 200, "the sequence should see most transactions")
    }

    /// Results sorted by one stored property keep the sort key it resolved to, not the
    /// descriptor: made again on each change, ascending and descending, by an index and by record
    /// values, they list what a sort of the reference lists.
    @Test("A sort by one stored property is made again on each change", arguments: [false, true])
    func singleSortMadeAgain(ascending: Bool) async throws {
        let store = try Store.inMemory(models: [Score.self])
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x5EED_2602))
        var reference: [Int: Score] = [:]
        let order: SortOrder = ascending ? .forward : .reverse
        let descriptors = [SortDescriptor(\Score.points, order: order), SortDescriptor(\Score.label, order: order)]
        for (place, descriptor) in descriptors.enumerated() {
            let results = try store.objects(Score.self).sorted(using: descriptor)
            #expect(results.plan.order == (place == 1 ? .records(properties: ["label"]) : .index(name: "Score.points", ascending: ascending)),
                    "descriptor \(place): \(results.plan)")
            var iterator = results.changes.makeAsyncIterator()
            _ = try #require(try await iterator.next())
            for step in 0..<12 {
                // A new object each time, so each write changes the results.
                let (identifier, points) = (place * 100 + step, Int.random(in: 0..<4, using: &random))
                let label = "label \(Int.random(in: 0..<4, using: &random))"
                reference[identifier] = Score.make(identifier, points: points, label: label)
                try await store.write { try $0.add(Score.make(identifier, points: points, label: label)) }
                let change = try #require(try await iterator.next(), "descriptor \(place), step \(step)")
                let expected = reference.values.sorted { $0.identifier < $1.identifier }.sorted(using: descriptor)
                #expect(try change.results.storageKeys == keys(expected.map(\.identifier)), "descriptor \(place), step \(step)")
                #expect(change.results.plan == results.plan, "descriptor \(place), step \(step)")
            }
        }
    }

    /// 8 writers commit at once while one consumer applies every element to the results it
    /// held: deletions and insertions must turn the old rows into the new ones, every row that
    /// stayed and changed must be in modifications, no other row may be, and no element may
    /// repeat the one before. The engine publishes a commit before it signals its observers, so
    /// a consumer can see a commit before its signal arrives (issue 31).
    @Test("Change sets are exact under 8 concurrent writers", arguments: [false, true])
    func concurrentWriters(onFile: Bool) async throws {
        let directory = TemporaryDirectory()
        var configuration = Store.Configuration()
        configuration.durability = .none
        let store = onFile
            ? try Store(path: directory.file("scores.store"), models: [Score.self], configuration: configuration)
            : try Store.inMemory(models: [Score.self])
        defer { try? store.close() }
        let seed = SeededRandom.seed(default: 0x5EED_3101)
        let marker = 1_000
        let consumer = Task {
            var iterator = try highScores(store).changes.makeAsyncIterator()
            var rows = try #require(try await iterator.next()).results.map(Row.init)
            var elements = 0
            var problems: [String] = []
            while let change = try await iterator.next() {
                elements += 1
                let new = change.results.map(Row.init)
                if new == rows { problems.append("element \(elements) repeats the one before") }
                var applied = rows
                for index in change.deletions.reversed() { applied.remove(at: index) }
                for index in change.insertions { applied.insert(new[index], at: index) }
                if applied.map(\.identifier) != new.map(\.identifier) {
                    problems.append("element \(elements): deletions and insertions do not give the new rows")
                } else {
                    for index in new.indices where !change.insertions.contains(index) {
                        let changed = applied[index] != new[index]
                        if changed != change.modifications.contains(index) {
                            problems.append("element \(elements): row \(new[index].identifier) \(changed ? "changed but is not" : "did not change but is") in modifications")
                        }
                    }
                }
                rows = new
                if new.contains(where: { $0.identifier == marker }) { break }
            }
            return (elements, problems)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    var random = SeededRandom(seed: seed &+ UInt64(writer))
                    for step in 0..<60 {
                        let identifier = Int.random(in: 0..<24, using: &random)
                        let points = Int.random(in: 0..<100, using: &random)
                        let deletes = random.chance(15)
                        try await store.write { transaction in
                            if deletes {
                                try transaction.delete(Score.self, primaryKey: identifier)
                            } else {
                                try transaction.add(Score.make(identifier, points: points, label: "w\(writer) s\(step)"))
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        try await store.write { try $0.add(Score.make(marker, points: 99)) }
        let (elements, problems) = try await consumer.value
        #expect(problems == [], "seed \(seed)")
        #expect(elements > 0)
    }

    @Test("Commits while the consumer is busy coalesce into one element")
    func slowConsumerCoalesces() async throws {
        let store = try Store.inMemory(models: [Score.self])
        var iterator = try highScores(store).changes.makeAsyncIterator()
        _ = try await iterator.next()
        for identifier in 1...50 {
            try await store.write { try $0.add(Score.make(identifier, points: 40 + identifier)) }
        }
        let change = try #require(try await iterator.next())
        #expect(change.insertions == IndexSet(0..<41))
        #expect(try change.results.storageKeys == keys(Array(10...50)))
        // Nothing more is queued: the next element is the next commit's.
        try await store.write { try $0.delete(Score.self, primaryKey: 50) }
        let next = try #require(try await iterator.next())
        #expect(next.deletions == IndexSet(integer: 40))
        #expect(next.insertions.isEmpty)
    }

    @Test("A commit to another type does not wake the results")
    func otherTypesDoNotWake() async throws {
        let store = try Store.inMemory(models: [Score.self, Team.self])
        var iterator = try highScores(store).changes.makeAsyncIterator()
        _ = try await iterator.next()
        try await store.write { try $0.add(Team()) }
        try await store.write { try $0.add(Score.make(1, points: 90)) }
        let change = try #require(try await iterator.next())
        #expect(change.insertions == IndexSet(integer: 0))
    }

    @Test("Cancelling the consuming task ends the sequence and frees the observer")
    func cancellation() async throws {
        let store = try Store.inMemory(models: [Score.self])
        let started = AsyncStream<Void>.makeStream()
        let consumer = Task {
            var count = 0
            for try await _ in try highScores(store).changes {
                count += 1
                if count == 1 { started.continuation.yield() }
            }
            return count
        }
        for await _ in started.stream { break }
        #expect(store.observerCount == 1)
        consumer.cancel()
        #expect(try await consumer.value == 1)
        #expect(store.observerCount == 0)
    }

    @Test("Closing the store ends its sequences")
    func closeEnds() async throws {
        let store = try Store.inMemory(models: [Score.self])
        var iterator = try highScores(store).changes.makeAsyncIterator()
        _ = try await iterator.next()
        try await store.read { try $0.close() }
        #expect(try await iterator.next() == nil)
    }

    @Test("An object observer sees the object, its linked objects' changes, and its deletion")
    func objectThroughLink() async throws {
        let store = try Store.inMemory(models: [Team.self])
        let team = Team()
        team.identifier = 1
        team.name = "Reds"
        team.captain = Player()
        team.captain?.identifier = 7
        team.captain?.name = "Ada"
        try await store.write { try $0.add(team) }
        var iterator = try store.changes(Team.self, primaryKey: 1).makeAsyncIterator()
        #expect(try await iterator.next()??.captain?.name == "Ada")
        try await store.write { try $0.update(Player.self, primaryKey: 7, set: \.name, to: "Grace") }
        #expect(try await iterator.next()??.captain?.name == "Grace")
        try await store.write { try $0.update(Team.self, primaryKey: 1, set: \.name, to: "Blues") }
        #expect(try await iterator.next()??.name == "Blues")
        try await store.write { try $0.delete(Team.self, primaryKey: 1) }
        let deleted = try await iterator.next()
        #expect(deleted != nil && deleted! == nil)
    }

    @Test("An object observer sees objects that link to it come and go, as its inverse lists them")
    func objectThroughInverse() async throws {
        let store = try Store.inMemory(models: [Owner.self, Pet.self])
        try await store.write { try $0.add(Owner.named("Ann", 1)) }
        var iterator = try store.changes(Owner.self, primaryKey: 1).makeAsyncIterator()
        #expect(try await iterator.next()??.pets.map(\.identifier) == [])
        /// The next element, or (when the last commit woke nothing) the one a rename to `name`
        /// wakes, so that the test fails rather than waits.
        func nextElement(orRenamed name: String) async throws -> Owner?? {
            let rename = Task {
                try await Task.sleep(for: .seconds(5))
                try await store.write { try $0.update(Owner.self, primaryKey: 1, set: \.name, to: name) }
            }
            defer { rename.cancel() }
            return try await iterator.next()
        }
        let pet = Pet()
        pet.identifier = 3
        pet.owner = try store.object(Owner.self, primaryKey: 1)
        try await store.write { try $0.add(pet) }
        let added = try await nextElement(orRenamed: "Bea")
        #expect(added??.name == "Ann" && added??.pets.map(\.identifier) == [3])
        try await store.write { try $0.delete(Pet.self, primaryKey: 3) }
        let deleted = try await nextElement(orRenamed: "Cy")
        #expect(deleted??.name == "Ann" && deleted??.pets.map(\.identifier) == [])
    }

    @Test("Async writes and reads")
    func asyncAccess() async throws {
        let store = try Store.inMemory(models: [Score.self])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for identifier in 1...16 {
                group.addTask {
                    try await store.write { try $0.add(Score.make(identifier, points: identifier)) }
                }
            }
            try await group.waitForAll()
        }
        let count = try await store.read { try $0.objects(Score.self).count }
        #expect(count == 16)
    }
}
