import Foundation
import MirrorStore
import MirrorStoreBehaviorSuite
@testable import MirrorStorePostgres
import PostgresNIO
import Synchronization
import Testing

extension ServerTests {
/// Observers in one store see commits made through another store, with a pool of connections of
/// its own, as another process would make them. Every wait has a timeout.
@Suite("Observation")
struct ObservationTests {
    /// The store that observes, and another one on the same database that writes.
    private func stores() async throws -> (observer: PostgresStore, writer: PostgresStore) {
        let observer = try await emptyStore(models: [Watched.self, Item.self], clearing: [Watched.self, WatchOwner.self])
        let writer = try await PostgresStore.open(try #require(serverSettings), models: [Watched.self, Item.self])
        return (observer, writer)
    }

    @Test func resultsSeeCommitsOfAnotherStoreAndSkipCommitsThatChangeNothing() async throws {
        let (observer, writer) = try await stores()
        try await observer.write { try await $0.add(Watched(id: 1, n: 5, label: "one")) }
        let results = try observer.objects(Watched.self).filter(#Predicate { $0.n >= 5 }).sorted(byProperty: "n")
        let changes = try await within(10, "the changes of the results") {
            var iterator = results.changes.makeAsyncIterator()
            var seen: [PostgresResultsChange<Watched>] = []
            seen.append(try #require(try await iterator.next()))           // as it is now
            try await writer.write { transaction in
                try await transaction.add(Watched(id: 2, n: 7, label: "two"))
                try await transaction.add(Watched(id: 3, n: 1, label: "left out"))
            }
            seen.append(try #require(try await iterator.next()))
            // Neither changes the results: no element for them.
            try await writer.write { try await $0.add(Watched(id: 3, n: 2, label: "still left out")) }
            try await writer.write { try await $0.add(Item(id: 99)) }
            try await writer.write { try await $0.update(Watched.self, primaryKey: 1) { $0.label = "changed" } }
            seen.append(try #require(try await iterator.next()))
            try await writer.write { try await $0.delete(Watched.self, primaryKey: 1) }
            seen.append(try #require(try await iterator.next()))
            return seen
        }
        #expect(changes.map { $0.results.map(\.id) } == [[1], [1, 2], [1, 2], [2]])
        #expect(changes.map(\.insertions) == [IndexSet([0]), IndexSet([1]), [], []])
        #expect(changes.map(\.deletions) == [[], [], [], IndexSet([0])])
        #expect(changes.map(\.modifications) == [[], [], IndexSet([0]), []])
        #expect(changes[2].results.first?.label == "changed")
        await writer.close()
        await observer.close()
    }

    @Test func oneObjectIsSeenWhenItOrAModelItLinksToChanges() async throws {
        let (observer, writer) = try await stores()
        try await observer.write { try await $0.add(Watched(id: 1, n: 1, owner: WatchOwner(id: 10, name: "Stan"))) }
        let sequence = try observer.changes(Watched.self, primaryKey: 1)
        let seen = try await within(10, "the changes of one object") {
            var iterator = sequence.makeAsyncIterator()
            var seen: [Watched?] = []
            seen.append(try #require(try await iterator.next()))
            // Another object of the type: not this one's change.
            try await writer.write { try await $0.add(Watched(id: 2, n: 2)) }
            try await writer.write { try await $0.add(WatchOwner(id: 10, name: "Jack")) }
            seen.append(try #require(try await iterator.next()))
            try await writer.write { try await $0.delete(Watched.self, primaryKey: 1) }
            seen.append(try #require(try await iterator.next()))
            try await writer.write { try await $0.add(Watched(id: 1, n: 3)) }
            seen.append(try #require(try await iterator.next()))
            return seen
        }
        #expect(seen.map { $0?.owner?.name } == ["Stan", "Jack", nil, nil])
        #expect(seen.map { $0?.n } == [1, 1, nil, 3])
        await writer.close()
        await observer.close()
    }

    @Test func oneObjectIsSeenWhenTheObjectsItsInverseListsChange() async throws {
        let observer = try await emptyStore(models: [BehaviorCoach.self], clearing: [BehaviorSquad.self, BehaviorCoach.self])
        let writer = try await PostgresStore.open(try #require(serverSettings), models: [BehaviorCoach.self])
        let bob = BehaviorCoach(id: 2, name: "Bob")
        try await observer.write { try await $0.add(BehaviorSquad(id: 1, coaches: [bob])) }
        let sequence = try observer.changes(BehaviorCoach.self, primaryKey: 2)
        let seen = try await within(10, "the changes of a coach's inverse") {
            var iterator = sequence.makeAsyncIterator()
            var seen: [[Int]?] = []
            seen.append(try #require(try await iterator.next())?.squads.map(\.id))
            // Only squads change: the coach's row is not written.
            try await writer.write { _ = try await $0.delete(BehaviorSquad.self, primaryKey: 1) }
            seen.append(try #require(try await iterator.next())?.squads.map(\.id))
            return seen
        }
        // MirrorStore's file store does not wake an object's observer for this yet.
        #expect(seen == [[1], []])
        await writer.close()
        await observer.close()
    }

    @Test func watchedKeyPathsLeaveOutChangesOfOtherProperties() async throws {
        let (observer, writer) = try await stores()
        try await observer.write { try await $0.add(Watched(id: 1, n: 1, label: "one", owner: WatchOwner(id: 10, name: "Stan"))) }
        let results = try observer.objects(Watched.self).changes(keyPaths: [\.n, \.owner])
        let object = try observer.changes(Watched.self, primaryKey: 1, keyPaths: [\.label])
        let seen = try await within(10, "the watched changes") {
            var resultsIterator = results.makeAsyncIterator()
            var objectIterator = object.makeAsyncIterator()
            var modifications: [IndexSet] = [try #require(try await resultsIterator.next()).modifications]
            var labels: [String?] = [try #require(try await objectIterator.next())?.label]
            // Not watched by the results: no element for it; watched by the object.
            try await writer.write { try await $0.update(Watched.self, primaryKey: 1) { $0.label = "changed" } }
            labels.append(try #require(try await objectIterator.next())?.label)
            // Not watched by the results, which watch the link, not the linked owner's values.
            try await writer.write { try await $0.add(WatchOwner(id: 10, name: "Stan Lee")) }
            // Watched by the results: the link, to another owner; not by the object.
            try await writer.write { try await $0.update(Watched.self, primaryKey: 1) { $0.owner = WatchOwner(id: 11, name: "Jack") } }
            let change = try #require(try await resultsIterator.next())
            modifications.append(change.modifications)
            try await writer.write { try await $0.update(Watched.self, primaryKey: 1) { $0.label = "again" } }
            labels.append(try #require(try await objectIterator.next())?.label)
            return (modifications, labels, change.results.first?.owner?.name)
        }
        #expect(seen.0 == [[], IndexSet([0])])
        #expect(seen.1 == ["one", "changed", "again"])
        #expect(seen.2 == "Jack")
        #expect(throws: QueryError.self) { _ = try observer.objects(Watched.self).changes(keyPaths: [\.label.count]) }
        await writer.close()
        await observer.close()
    }

    @Test func watchedKeyPathsThroughLinksSeeOnlyTheLinkedProperty() async throws {
        let (observer, writer) = try await stores()
        try await observer.write { transaction in
            try await transaction.add(Watched(id: 1, n: 1, label: "one", owner: WatchOwner(id: 10, name: "Stan", city: "New York")))
            try await transaction.add(Watched(id: 2, n: 2, label: "two"))
        }
        let results = try observer.objects(Watched.self).changes(keyPaths: [\.owner?.name])
        let object = try observer.changes(Watched.self, primaryKey: 1, keyPaths: [\.owner?.name])
        let seen = try await within(10, "the changes through the link") {
            var resultsIterator = results.makeAsyncIterator()
            var objectIterator = object.makeAsyncIterator()
            var modifications: [IndexSet] = [try #require(try await resultsIterator.next()).modifications]
            var names: [String?] = [try #require(try await objectIterator.next())?.owner?.name]
            // Not watched: the owner's city, the object's own label. Then watched: the owner's name.
            try await writer.write { try await $0.update(WatchOwner.self, primaryKey: 10) { $0.city = "Los Angeles" } }
            try await writer.write { try await $0.update(Watched.self, primaryKey: 1) { $0.label = "changed" } }
            try await writer.write { try await $0.update(WatchOwner.self, primaryKey: 10) { $0.name = "Jack" } }
            let renamed = try #require(try await resultsIterator.next())
            modifications.append(renamed.modifications)
            let owner = try #require(try await objectIterator.next())?.owner
            names.append(owner?.name)
            // A link set to nil on the way: the path reads nil.
            try await writer.write { try await $0.update(Watched.self, primaryKey: 1) { $0.owner = nil } }
            modifications.append(try #require(try await resultsIterator.next()).modifications)
            names.append(try #require(try await objectIterator.next())?.owner?.name)
            return (modifications, names, renamed.results.first?.owner?.city, renamed.results.first?.label)
        }
        // The element after the name change is the first after the unwatched commits: they made none.
        #expect(seen.0 == [[], IndexSet([0]), IndexSet([0])])
        #expect(seen.1 == ["Stan", "Jack", nil])
        #expect(seen.2 == "Los Angeles")
        #expect(seen.3 == "changed")
        await writer.close()
        await observer.close()
    }

    @Test func observationsOfOneStoreShareOneListeningConnection() async throws {
        let (observer, writer) = try await stores()
        /// The server's connections whose last statement was a LISTEN on the store's channel.
        @Sendable func listening() async throws -> Int {
            let pattern = "LISTEN \"\(observer.changeChannel)\"%"
            return try await writer.withConnection { connection in
                let rows = try await connection.query(
                    "SELECT count(*)::bigint FROM pg_stat_activity WHERE query LIKE \(pattern)", logger: PostgresStore.logger)
                var count = 0
                for try await value in rows.decode(Int64.self) { count = Int(value) }
                return count
            }
        }
        // The listening connections of the stores earlier tests closed may take a moment to leave.
        let before = try await within(10, "earlier listening connections to close") {
            while try await listening() != 0 { try await Task.sleep(for: .milliseconds(20)) }
            return 0
        }
        #expect(before == 0)
        let results = try observer.objects(Watched.self)
        let object = try observer.changes(Watched.self, primaryKey: 1)
        let counted = try await within(10, "three observations to start") {
            var first = results.changes.makeAsyncIterator()
            var second = try results.filter(#Predicate { $0.n > 3 }).changes.makeAsyncIterator()
            var third = object.makeAsyncIterator()
            _ = try await first.next()
            _ = try await second.next()
            _ = try await third.next()
            return try await listening()
        }
        #expect(counted == 1)
        await observer.close()
        let after = try await within(10, "the listening connection to close") {
            while try await listening() != 0 { try await Task.sleep(for: .milliseconds(20)) }
            return 0
        }
        #expect(after == 0)
        await writer.close()
    }

    @Test func aRolledBackWriteNotifiesNobody() async throws {
        let (observer, writer) = try await stores()
        struct Refusal: Error {}
        let received = Mutex<[ChangeNotice]>([])
        let notices = try await within(10, "the notice of a committed write") {
            let subscription = try await observer.listener.subscribe { notice in
                received.withLock { $0.append(notice) }
                return true
            }
            var iterator = subscription.stream.makeAsyncIterator()
            _ = try? await writer.write { transaction in
                try await transaction.add(Watched(id: 5, n: 5))
                throw Refusal()
            }
            try await writer.write { try await $0.add(Watched(id: 6, n: 6)) }
            _ = try await iterator.next()
            return received.withLock { $0 }
        }
        var expected = ChangeNotice()
        expected.note("Watched", key: "6")
        #expect(notices == [expected])
        await writer.close()
        await observer.close()
    }

    @Test func cancellingTheConsumerOrClosingTheStoreEndsTheSequence() async throws {
        let (observer, writer) = try await stores()
        let results = try observer.objects(Watched.self)
        let (started, signal) = AsyncStream.makeStream(of: Void.self)
        let consumer = Task {
            var count = 0
            for try await _ in results.changes {
                count += 1
                signal.yield()
            }
            return count
        }
        _ = try await within(10, "the first element") { for await _ in started { return true }; return false }
        consumer.cancel()
        let count = try await within(10, "the cancelled sequence to end", task: consumer)
        #expect(count == 1)
        // The last observation stopped: so did the listening connection.
        #expect(!observer.listener.isRunning)

        let object = try observer.changes(Watched.self, primaryKey: 1)
        let (objectStarted, objectSignal) = AsyncStream.makeStream(of: Void.self)
        let objectConsumer = Task {
            var count = 0
            for try await _ in object {
                count += 1
                objectSignal.yield()
            }
            return count
        }
        _ = try await within(10, "the object's first element") { for await _ in objectStarted { return true }; return false }
        await observer.close()
        let objectCount = try await within(10, "the sequence to end when the store closes", task: objectConsumer)
        #expect(objectCount == 1)
        // After closing, a new observation ends at once.
        let ended = try await within(10, "an observation of a closed store") {
            var iterator = results.changes.makeAsyncIterator()
            return try await iterator.next() == nil
        }
        #expect(ended)
        await writer.close()
    }

    @Test func everyStatementOfALongWriteIsAnnounced() async throws {
        let (observer, writer) = try await stores()
        // Past the statements that announce themselves, the others' changes go before COMMIT.
        let count = PostgresWriteTransaction.inlineNoticeLimit + 3
        let received = Mutex<[ChangeNotice]>([])
        let covered = try await within(10, "the notices of a long write") {
            let subscription = try await observer.listener.subscribe { notice in
                received.withLock { $0.append(notice) }
                return true
            }
            var iterator = subscription.stream.makeAsyncIterator()
            try await writer.write { transaction in
                for id in 0..<count { try await transaction.add(Watched(id: id, n: id)) }
                try await transaction.delete(Watched.self, primaryKey: 0)
            }
            func announced(_ key: Int) -> Bool {
                received.withLock { notices in notices.contains { $0.touches("Watched", key: "\(key)") } }
            }
            while !(0..<count).allSatisfy(announced) { _ = try await iterator.next() }
            return true
        }
        #expect(covered)
        #expect(received.withLock { $0.count } <= PostgresWriteTransaction.inlineNoticeLimit + 1)
        await writer.close()
        await observer.close()
    }

    @Test func aWriteOfManyKeysNotifiesItsTypesOnly() async throws {
        let (observer, writer) = try await stores()
        let sequence = try observer.changes(Watched.self, primaryKey: 1_999)
        let seen = try await within(10, "the object among 2,000 written at once") {
            var iterator = sequence.makeAsyncIterator()
            var seen: [Watched?] = [try #require(try await iterator.next())]
            try await writer.write { try await $0.add(contentsOf: (0..<2_000).map { Watched(id: $0, n: $0) }) }
            seen.append(try #require(try await iterator.next()))
            return seen
        }
        #expect(seen.map { $0?.n } == [nil, 1_999])
        await writer.close()
        await observer.close()
    }
}
}

@Suite("Change notices")
struct ChangeNoticeTests {
    @Test func payloadsCarryKeysWhenTheyFitAndTypesOnlyOtherwise() {
        var notice = ChangeNotice()
        notice.note("Hero", key: "1455")
        notice.note("Hero", key: "7")
        notice.note("Publisher", key: nil)
        notice.note("Publisher", key: "1")
        #expect(notice.payload == #"{"Hero":["1455","7"],"Publisher":null}"#)
        let read = ChangeNotice(payload: notice.payload)
        #expect(read == notice)
        #expect(read.touches("Hero", key: "7") && !read.touches("Hero", key: "8") && read.touches("Hero"))
        #expect(read.touches("Publisher", key: "anything") && !read.touches("Article"))

        var many = ChangeNotice()
        for key in 0..<2_000 { many.note("Hero", key: "\(key)") }
        #expect(many.payload == #"{"Hero":null}"#)
        #expect(ChangeNotice(payload: many.payload).touches("Hero", key: "1"))

        // Not this backend's payload: everything may have changed.
        let foreign = ChangeNotice(payload: "hello")
        #expect(foreign.touches("Anything", key: "1"))
        #expect(ChangeNotice(payload: #"{"*":null}"#).touches("Hero"))
    }

    @Test func aNoticeOfOneChangeIsSpelledAsTheEncoderSpellsIt() {
        let changes: [(type: String, key: String?)] = [
            ("Hero", "1455"), ("Hero", nil), ("Odd \"Type\"", "a\\b\n\u{1}é🦸\u{7F}"), ("Hero", String(repeating: "k", count: 8_000)),
        ]
        for change in changes {
            var notice = ChangeNotice()
            notice.note(change.type, key: change.key)
            let payload = ChangeNotice.payload(of: change.type, key: change.key)
            #expect(ChangeNotice(payload: payload) == ChangeNotice(payload: notice.payload), "\(payload)")
            #expect(payload.utf8.count <= ChangeNotice.payloadLimit)
        }
        #expect(ChangeNotice.payload(of: "Hero", key: "1455") == #"{"Hero":["1455"]}"#)
        #expect(ChangeNotice.payload(of: "Hero", key: String(repeating: "k", count: 8_000)) == #"{"Hero":null}"#)
    }

    @Test func theChannelIsNamedFromTheSchema() {
        #expect(ChangeListener.channel(schema: "public") == "mirrorstore_changes_public")
        let odd = ChangeListener.channel(schema: "My \"Schema\"")
        #expect(odd.hasPrefix("mirrorstore_changes_") && odd.utf8.count <= 63 && !odd.contains("\""))
    }
}
