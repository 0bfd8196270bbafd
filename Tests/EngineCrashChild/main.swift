// A child process for the kill -9 tests. Modes:
//   commit <store>    commit CrashWorkload transactions forever, printing "ack <sequence> <n>" after each
//   compact <store>   the same, compacting after every third commit
//   checkpoint <store> the same, with two secondary indexes, writing a checkpoint (key runs and
//                     index runs) after every few hundred bytes of commits
//   group <store>     8 threads commit at once (sharing syncs), each its own numbered keys,
//                     printing "ack <thread> <n>" after each
//   stream <store>    the checkpoint mode's transactions, two in three as streamed commits (a
//                     piece that the transaction later overwrites, then the transaction), with a
//                     stream abandoned before every fifth one; printing "ack <sequence> <n>"
//   stream-spill <store>  the stream mode, each commit publishing its stream's keys past the
//                     first of a type, and its index entries past the first of an index, into
//                     scratch files' runs (`streamKeysInMemory` 1); after each commit it checks
//                     that the indexes agree with the objects, printing "error ..." if not
//   stream-spill-encrypted <store>  the same on an encrypted store, whose scratch files are sealed
//   hold <store>      open the store, print "ready <pid>", and keep it open until stdin closes
//   pairs <store>     commit PairWorkload pairs forever (checkpoints, compaction), printing "ack <n>"
//   reader <store>    read beside the writer, refreshing in a loop until stdin closes (PairWorkload)
//   pairs-encrypted, reader-encrypted <store>   the same on an encrypted store
//   encrypted <store> the checkpoint mode on an encrypted store, compacting (a new data key)
//                     after every fifth commit
//   rekey <store>     commit on an encrypted store, changing its key after each commit, printing
//                     "rekeyed <key>" once a change returned
//   convert <store>   commit, encrypting the store after one commit and decrypting it after the
//                     next (each a rewrite into a new file), printing "converted" after each
// Every line is flushed as soon as it is printed, so the parent sees exactly the acknowledged commits.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
@_spi(Testing) import MirrorStoreEngine
import TestSupport

func run() -> Int32 {
    let arguments = CommandLine.arguments
    guard arguments.count == 3 else {
        say("usage: EngineCrashChild commit|compact|checkpoint|group|hold <store>")
        return 2
    }
    let mode = arguments[1]
    let path = arguments[2]
    do {
        if mode == "pairs" || mode == "pairs-encrypted" { try PairWorkload.write(path: path, encrypted: mode != "pairs") }
        if mode == "reader" || mode == "reader-encrypted" { return try PairWorkload.read(path: path, encrypted: mode != "reader") }
        var configuration = EngineConfiguration()
        if mode == "compact" {
            configuration.autoCompaction = .whenDeadBytesExceed(ratio: 0.3, minimumFileSize: 64 << 10)
        }
        let spills = mode == "stream-spill" || mode == "stream-spill-encrypted"
        if mode == "checkpoint" || mode == "encrypted" || mode == "stream" || spills {
            configuration.checkpointInterval = 400
        }
        if spills { configuration.streamKeysInMemory = 1 }
        let encrypted = mode == "encrypted" || mode == "rekey" || mode == "stream-spill-encrypted"
        let engine: StorageEngine
        var key = 0
        var isEncrypted = encrypted
        if encrypted {
            let opened = try CrashWorkload.openEncrypted(path: path, configuration: configuration)
            engine = opened.0
            key = opened.key
        } else if mode == "convert" {
            let opened = try CrashWorkload.openPlainOrEncrypted(path: path, configuration: configuration)
            engine = opened.0
            isEncrypted = opened.encrypted
        } else {
            engine = try StorageEngine(path: path, configuration: configuration)
        }
        if mode == "checkpoint" || mode == "encrypted" || mode == "stream" || spills {
            try engine.defineIndexes(CrashWorkload.indexes)
        }
        say("ready \(getpid())")
        switch mode {
        case "commit", "compact", "checkpoint", "encrypted", "rekey", "convert":
            var n = CrashWorkload.decode(engine.snapshot().metadata(key: CrashWorkload.counterKey))
            while true {
                n += 1
                let sequence = try engine.commit(CrashWorkload.batch(n))
                say("ack \(sequence) \(n)")
                if mode == "compact", n % 3 == 0 {
                    try engine.compact()
                }
                if mode == "encrypted", n % 5 == 0 {
                    try engine.compact()
                }
                if mode == "rekey" {
                    key = 1 - key
                    try engine.changeEncryption(to: .key(CrashWorkload.encryptionKeys[key]))
                    say("rekeyed \(key)")
                }
                if mode == "convert" {
                    isEncrypted.toggle()
                    try engine.changeEncryption(to: isEncrypted ? .key(CrashWorkload.encryptionKeys[0]) : nil)
                    say("converted")
                }
            }
        case "stream", "stream-spill", "stream-spill-encrypted":
            var n = CrashWorkload.decode(engine.snapshot().metadata(key: CrashWorkload.counterKey))
            while true {
                n += 1
                if n % 5 == 0, let abandoned = try engine.beginStream() {
                    _ = try abandoned.write(CrashWorkload.abandonedBatch(n))
                    abandoned.abandon()
                }
                let sequence: UInt64
                if n % 3 != 0, let stream = try engine.beginStream() {
                    _ = try stream.write(CrashWorkload.overwrittenBatch(n))
                    _ = try stream.write(CrashWorkload.batch(n))
                    sequence = try engine.wait(for: engine.submit(WriteBatch(), completing: stream))
                } else {
                    sequence = try engine.commit(CrashWorkload.batch(n))
                }
                say("ack \(sequence) \(n)")
                if spills, let disagreement = try CrashWorkload.indexDisagreement(engine.snapshot()) {
                    say("error after transaction \(n): \(disagreement)")
                }
            }
        case "group":
            // Threads of their own: concurrentPerform would run only as many as there are cores.
            for thread in 0..<CrashWorkload.groupThreads {
                Thread.detachNewThread {
                    var n = CrashWorkload.committedCount(ofThread: thread, in: engine.snapshot())
                    while true {
                        n += 1
                        do {
                            try engine.commit(CrashWorkload.groupBatch(thread: thread, n))
                        } catch {
                            say("error \(error)")
                            return
                        }
                        say("ack \(thread) \(n)")
                    }
                }
            }
            while true { pause() }
        case "hold":
            while getchar() != EOF {}
            try engine.close()
            return 0
        default:
            say("unknown mode \(mode)")
            return 2
        }
    } catch {
        say("error \(error)")
        return 1
    }
}

exit(run())
