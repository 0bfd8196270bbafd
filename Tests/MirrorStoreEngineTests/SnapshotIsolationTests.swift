import Testing
import TestSupport
@testable import MirrorStoreEngine

/// A snapshot answers as of its commit whatever the writer changes after it, and the writer never
/// changes in place a type's fields that a snapshot showed (`TypeIndex.markShown()`), even once
/// no snapshot holds them: ThreadSanitizer cannot see the reference count that orders such a
/// change after the readers' reads, and reported a race in `readersRunBesideWriters`.
@Suite struct SnapshotIsolationTests {
    @Test func changesCopyTheFieldsASnapshotShowed() throws {
        var index = KeyIndex()
        try index.put(type: "Log", key: .integer(1), offset: 100, length: 4)
        let unshown = index.types["Log"]?.storageIdentity
        try index.put(type: "Log", key: .integer(2), offset: 104, length: 4)
        #expect(index.types["Log"]?.storageIdentity == unshown, "fields no snapshot showed change in place")

        index.markShown()
        let shown = index.types["Log"]?.storageIdentity
        try index.put(type: "Log", key: .integer(3), offset: 108, length: 4)
        let changed = index.types["Log"]?.storageIdentity
        #expect(changed != shown, "a change after a snapshot showed the fields writes a copy of them")
        try index.delete(type: "Log", key: .integer(1))
        #expect(index.types["Log"]?.storageIdentity == changed, "the copy was shown by no snapshot: changed in place")
        #expect(index.types["Log"]?.count == 2)

        index.markShown()
        let before = index.types["Log"]?.storageIdentity
        try index.delete(type: "Log", key: .integer(2))
        #expect(index.types["Log"]?.storageIdentity != before, "a removal copies shown fields too")
        #expect(try index.location(type: "Log", key: .integer(3)) != nil)
        #expect(try index.location(type: "Log", key: .integer(2)) == nil)
    }

    /// Seeded rounds of commits to the same types (puts, deletes, on a file a checkpoint every KiB,
    /// now and then a compaction), snapshots taken between them, some kept and some let go at
    /// once: every kept snapshot keeps answering as the reference did at its commit.
    @Test(arguments: [false, true]) func keptSnapshotsAnswerAsOfTheirCommit(onFile: Bool) throws {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x5A17_0B5E))
        let directory = TemporaryDirectory()
        var configuration = fastConfiguration()
        configuration.checkpointInterval = 1 << 10
        let engine = onFile
            ? try StorageEngine(path: directory.file("isolation.store"), configuration: configuration)
            : StorageEngine(inMemoryWith: configuration)
        typealias State = [String: [StorageKey: [UInt8]]]
        let types = ["Log", "Pair"]
        func key(_ type: String, _ number: Int) -> StorageKey {
            type == "Log" ? .integer(Int64(number)) : .string("k\(number)")
        }
        func check(_ snapshot: EngineSnapshot, against expected: State, _ round: Int) throws {
            for type in types {
                let objects = expected[type] ?? [:]
                #expect(snapshot.count(type: type) == objects.count, "round \(round), \(type): count")
                for number in 0..<40 {
                    let stored = key(type, number)
                    #expect(try snapshot.value(type: type, key: stored) == objects[stored], "round \(round), \(type) \(stored)")
                }
                var seen = 0
                try snapshot.forEachEntry(type: type) { stored, value in
                    seen += 1
                    #expect(objects[stored] == value, "round \(round), \(type) \(stored): in a pass over all")
                }
                #expect(seen == objects.count, "round \(round), \(type): a pass over all")
            }
        }
        var reference: State = [:]
        var kept: [(snapshot: EngineSnapshot, expected: State)] = []
        for round in 0..<150 {
            var batch = WriteBatch()
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let type = random.pick(types)
                let stored = key(type, Int.random(in: 0..<40, using: &random))
                if random.chance(25) {
                    batch.delete(type: type, key: stored)
                    reference[type]?[stored] = nil
                } else {
                    let value = (0..<Int.random(in: 1...24, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                    batch.put(type: type, key: stored, value: value)
                    reference[type, default: [:]][stored] = value
                }
            }
            try engine.commit(batch)
            if random.chance(5) { try engine.compact() }
            // A snapshot read and let go at once: its fields are shown, held by nothing.
            try check(engine.snapshot(), against: reference, round)
            if random.chance(30) { kept.append((engine.snapshot(), reference)) }
            if kept.count > 6 { kept.remove(at: Int.random(in: 0..<kept.count, using: &random)) }
            for (snapshot, expected) in kept { try check(snapshot, against: expected, round) }
        }
        if onFile { #expect(engine.statistics.checkpoints > 0, "the rounds reach the persisted runs too") }
        try engine.close()
    }
}
