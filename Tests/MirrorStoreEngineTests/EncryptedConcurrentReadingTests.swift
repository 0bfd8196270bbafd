import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// Readers of an encrypted log's cached pages take no lock and no reference per page
/// (`PublishedPages`): threads that read while another writes, so that pages are decrypted,
/// replaced, evicted and freed under them, always read the bytes the log holds. Run under
/// `--sanitize=thread` and `--sanitize=address` too.
@Suite struct EncryptedConcurrentReadingTests {
    /// The byte at `offset` in every version of the test's log: a write puts back what was there.
    static func byte(at offset: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: (offset &* 2_654_435_761) >> 13 ^ offset)
    }

    static func bytes(_ range: Range<Int>) -> [UInt8] {
        range.map(byte(at:))
    }

    /// A scratch log (256 cached pages) grows to several times what its cache holds while three
    /// threads read it every way a reader can (a copy, a value lent in place, two pieces, a pass's
    /// lent page): every read gives the log's bytes, and the cache ends within its bound with
    /// nothing left waiting once no reading is in progress.
    @Test("threads reading while a writer appends and rewrites pages read the log's bytes")
    func readersBesideAWriter() throws {
        let file = try #require(ScratchFile.make())
        let log = try EncryptedLog.scratch(in: file)
        let pageCount = 3 * EncryptedLog.cachedScratchPages
        let total = pageCount * EncryptedLog.dataPageCapacity
        try log.write(Self.bytes(0..<(8 * EncryptedLog.dataPageCapacity)), at: 0)
        let done = Lock(false)
        let failures = Lock<[String]>([])
        let reads = Lock(0)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            var random = SeededRandom(seed: SeededRandom.seed(default: 0xC0_4C_0000 + UInt64(thread)))
            if thread == 0 {
                // The writer: appends, and now and then writes a stretch again (new pages,
                // sealed anew, in place of cached ones).
                do {
                    while try log.size() < UInt64(total) {
                        let size = Int(try log.size())
                        if random.chance(25), size > 2 {
                            let start = Int.random(in: 0..<(size - 1), using: &random)
                            let end = min(size, start + Int.random(in: 1...(3 * EncryptedLog.dataPageCapacity), using: &random))
                            try log.write(Self.bytes(start..<end), at: UInt64(start))
                        } else {
                            let end = min(total, size + Int.random(in: 1...(2 * EncryptedLog.dataPageCapacity), using: &random))
                            try log.write(Self.bytes(size..<end), at: UInt64(size))
                        }
                    }
                } catch {
                    failures.withLock { $0.append("writer: \(error)") }
                }
                done.withLock { $0 = true }
                return
            }
            var lent: LentPage?
            var count = 0
            while !done.withLock({ $0 }) || count < 2_000 {
                count += 1
                do {
                    let size = Int(try log.size())
                    let offset = Int.random(in: 0..<size, using: &random)
                    let length = Int.random(in: 1...min(size - offset, 2 * EncryptedLog.dataPageCapacity), using: &random)
                    let expected = Self.bytes(offset..<(offset + length))
                    var got: [UInt8] = []
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0:
                        got = try log.read(at: UInt64(offset), count: length)
                    case 1:
                        got = try log.withBytes(at: UInt64(offset), count: length) { Array($0) }
                    case 2:
                        try log.withPieces(at: UInt64(offset), count: length) { head, tail in got = Array(head) + Array(tail) }
                    default:
                        try log.withBytes(at: UInt64(offset), count: length, lent: &lent) { got = Array($0) }
                    }
                    // Pieces give what the two pages hold of a longer read.
                    if got != Array(expected.prefix(got.count)) || got.isEmpty {
                        failures.withLock { $0.append("thread \(thread): \(length) bytes at \(offset) read wrong") }
                    }
                } catch {
                    failures.withLock { $0.append("thread \(thread): \(error)") }
                }
            }
            reads.withLock { $0 += count }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(reads.withLock { $0 } >= 6_000)
        #expect(try log.read(at: 0, count: total) == Self.bytes(0..<total))
    }

    static func value(key: Int64, round: Int) -> [UInt8] {
        Array("key \(key) round \(round) ".utf8) + [UInt8](repeating: UInt8(truncatingIfNeeded: key &+ Int64(round)), count: Int((key &* 7 &+ Int64(round)) % 300))
    }

    /// An encrypted and a plain engine take the same commits (each rewrites every key, with
    /// checkpoints often and a compaction midway) while three threads read each of them: every
    /// snapshot reads one round's values throughout, and in the end both hold the same values.
    @Test("readers of an encrypted store beside commits and checkpoints read what a plain store reads")
    func encryptedReadersMatchPlain() throws {
        let directory = TemporaryDirectory()
        var configuration = fastConfiguration()
        configuration.checkpointInterval = 64 << 10
        let engines = [
            try StorageEngine(path: directory.file("encrypted.store"), configuration: encrypting(configuration)),
            try StorageEngine(path: directory.file("plain.store"), configuration: configuration),
        ]
        let keys = Int64(0)..<600
        let rounds = 30
        let done = Lock(false)
        let failures = Lock<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            var random = SeededRandom(seed: SeededRandom.seed(default: 0xE4C_0000 + UInt64(thread)))
            if thread == 0 {
                do {
                    for round in 0..<rounds {
                        var batch = WriteBatch()
                        for key in keys { batch.put(type: "Item", key: .integer(key), value: Self.value(key: key, round: round)) }
                        for engine in engines { try engine.commit(batch) }
                        if round == rounds / 2 { for engine in engines { try engine.compact() } }
                    }
                } catch {
                    failures.withLock { $0.append("writer: \(error)") }
                }
                done.withLock { $0 = true }
                return
            }
            while !done.withLock({ $0 }) {
                for (number, engine) in engines.enumerated() {
                    let snapshot = engine.snapshot()
                    var round: Int?
                    for _ in 0..<40 {
                        let key = Int64.random(in: keys, using: &random)
                        do {
                            guard let value = try snapshot.value(type: "Item", key: .integer(key)) else {
                                if round != nil { failures.withLock { $0.append("engine \(number): key \(key) missing") } }
                                continue
                            }
                            let text = String(decoding: value.prefix { $0 != 0 && $0 < 128 }, as: UTF8.self)
                            let found = text.split(separator: " ").dropFirst(3).first.flatMap { Int($0) }
                            if round == nil { round = found }
                            guard let round, found == round, value == Self.value(key: key, round: round) else {
                                failures.withLock { $0.append("engine \(number): key \(key) read \(text) in round \(round ?? -1)") }
                                continue
                            }
                        } catch {
                            failures.withLock { $0.append("engine \(number): \(error)") }
                        }
                    }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let encrypted = engines[0].snapshot()
        let plain = engines[1].snapshot()
        for key in keys {
            let value = try encrypted.value(type: "Item", key: .integer(key))
            #expect(value == (try plain.value(type: "Item", key: .integer(key))), "key \(key)")
            #expect(value == Self.value(key: key, round: rounds - 1), "key \(key)")
        }
        #expect(engines[0].statistics.checkpoints > 0)
        for engine in engines { try engine.close() }
    }
}
