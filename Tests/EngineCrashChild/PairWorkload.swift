#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import MirrorStoreEngine
import Synchronization
import TestSupport

/// The readers-beside-a-writer workload (issue 28): a writer commits pairs `a == b == n` with `n`
/// rising, one pair per transaction, and readers in other processes check on every refresh that
/// they never see a torn pair or an older one.
enum PairWorkload {
    static let type = "Pair"

    /// Transaction `n`: both halves of the pair, and an item that keeps the file growing.
    static func batch(_ n: Int) -> WriteBatch {
        var batch = WriteBatch()
        batch.put(type: type, key: .integer(0), value: CrashWorkload.encode(n))
        batch.put(type: type, key: .integer(1), value: CrashWorkload.encode(n))
        batch.put(type: "Item", key: .integer(Int64(n % 64)), value: CrashWorkload.itemValue(n % 9 + 1))
        return batch
    }

    /// The pair a snapshot shows: (a, b), zeros before the first commit.
    static func pair(_ snapshot: EngineSnapshot) throws -> (Int, Int) {
        (CrashWorkload.decode(try snapshot.value(type: type, key: .integer(0))),
         CrashWorkload.decode(try snapshot.value(type: type, key: .integer(1))))
    }

    /// `pairs <store>`: commits pairs forever, checkpointing every few hundred bytes and
    /// compacting every 40th commit, printing "ack <n>" after each.
    static func write(path: String, encrypted: Bool) throws -> Never {
        var configuration = EngineConfiguration(durability: .none, autoCompaction: .disabled)
        if encrypted { configuration.encryption = .key(CrashWorkload.encryptionKeys[0]) }
        configuration.checkpointInterval = 700
        configuration.lockTimeout = .seconds(5)
        let engine = try StorageEngine(path: path, configuration: configuration)
        say("ready \(getpid())")
        var n = try pair(engine.snapshot()).0
        while true {
            n += 1
            try engine.commit(batch(n))
            say("ack \(n)")
            if n % 40 == 0 { try engine.compact() }
        }
    }

    /// `reader <store>`: refreshes in a loop until stdin closes, checking each state, then
    /// prints "done <refreshes> <reopens> <last n>". Prints "torn a b" or "older n than m" at once.
    static func read(path: String, encrypted: Bool) throws -> Int32 {
        var configuration = EngineConfiguration()
        configuration.readsBesideWriter = true
        if encrypted { configuration.encryption = .key(CrashWorkload.encryptionKeys[0]) }
        let engine = try StorageEngine(path: path, configuration: configuration)
        let stop = Atomic<Bool>(false)
        Thread.detachNewThread {
            while getchar() != EOF {}
            stop.store(true, ordering: .releasing)
        }
        say("ready \(getpid())")
        var last = 0, refreshes = 0, reopens = 0, failures = 0
        while !stop.load(ordering: .acquiring) {
            let outcome = try engine.refresh()
            refreshes += 1
            if outcome.reopened { reopens += 1 }
            let (a, b) = try pair(engine.snapshot())
            if a != b {
                failures += 1
                say("torn \(a) \(b)")
            }
            if a < last {
                failures += 1
                say("older \(a) than \(last)")
            }
            last = max(last, a)
            if engine.snapshot().count(type: "Item") > 64 { say("torn items") }
        }
        try engine.close()
        say("done \(refreshes) \(reopens) \(last)")
        return failures == 0 ? 0 : 1
    }
}
