import Foundation
import Testing
import TestSupport
@testable import MirrorStoreEngine
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The encrypted log's page cache (`EncryptedPageCache`) and the reads a pass borrows from it
/// (`withBytes(at:count:lent:_:)`), each against a plain reference.
@Suite struct EncryptedPageReadingTests {
    /// Random keeps and forgets against a dictionary that forgets only when told: the cache holds
    /// a page's last bytes or nothing, never more pages than its capacity, and never loses the page
    /// just kept or the pinned one. Readers without the lock (`PublishedPages`) find exactly the
    /// pages the cache holds, and with no reading in progress nothing it let go waits to be freed;
    /// while a reading lasts, what it may read is held, within the bound, and freed once it ends.
    @Test("the page cache holds a page's last bytes or nothing, within its capacity, pinned pages kept, published alike")
    func cacheAgainstReference() {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0xCAC4E))
        for capacity in [2, 3, 8, 64] {
            var cache = EncryptedPageCache(capacity: capacity)
            var held: [Int: [UInt8]] = [:]
            var pinned: Int?
            for step in 0..<4_000 {
                let page = Int.random(in: 0..<(capacity * 3), using: &random)
                // Sometimes the change is made while a reading is in progress, which then still
                // finds the page it found before.
                let duringReading = random.chance(10)
                func change() {
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0:
                        cache.forget(page)
                        held[page] = nil
                    case 1:
                        cache.forget(from: page)
                        held = held.filter { $0.key < page }
                        if let kept = pinned, kept >= page { pinned = nil }
                    default:
                        let bytes = [UInt8(truncatingIfNeeded: step), UInt8(truncatingIfNeeded: page)]
                        if random.chance(20) { pinned = page }
                        cache.keep(bytes, page: page, pinned: pinned)
                        held[page] = bytes
                        #expect(cache[page]?.array == bytes)
                    }
                }
                if duringReading {
                    let published = cache.published
                    published.withReading { reading in
                        let before = reading.page(page).map { Array($0) }
                        change()
                        #expect(reading.page(page).map { Array($0) } == before || reading.page(page).map { Array($0) } == held[page])
                        // Pages added while a reading lasts stop at `capacity` waiting.
                        #expect(cache.waitingCount <= 2 * capacity + 2)
                    }
                } else {
                    change()
                }
                // The next change frees what the reading held.
                if !duringReading { #expect(cache.waitingCount == 0, "step \(step)") }
                if let pinned, let bytes = held[pinned] { #expect(cache[pinned]?.array == bytes) }
                cache.published.withReading { reading in
                    for candidate in 0..<(capacity * 3) {
                        if let bytes = cache[candidate] { #expect(bytes.array == held[candidate], "page \(candidate) at step \(step)") }
                        #expect(reading.page(candidate).map { Array($0) } == cache[candidate]?.array, "published page \(candidate) at step \(step)")
                    }
                }
                let count = (0..<(capacity * 3)).count { cache[$0] != nil }
                #expect(count <= capacity)
            }
        }
    }

    /// Every read a pass borrows equals `read(at:count:)`, whether its page is held, cached or
    /// neither; on a file with a flipped byte both throw for the damaged page and agree elsewhere.
    @Test("a borrowed read gives what read(at:count:) gives, intact and damaged")
    func lentReadsEqualReads() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("pages.store")
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x1E_47))
        let payload = (0..<60_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        try withEncryptedLog(at: path, holding: payload) { log, _ in
            let size = try log.size()
            var lent: LentPage?
            for _ in 0..<3_000 {
                let offset = UInt64.random(in: 0..<size, using: &random)
                let count = Int.random(in: 0...min(300, Int(size - offset)), using: &random)
                let expected = Result { try log.read(at: offset, count: count) }
                let got = Result { () throws -> [UInt8] in
                    var copy: [UInt8] = []
                    try log.withBytes(at: offset, count: count, lent: &lent) { copy = Array($0) }
                    return copy
                }
                switch (expected, got) {
                case (.success(let a), .success(let b)): #expect(a == b, "\(count) bytes at \(offset)")
                case (.failure, .failure): break
                default: Issue.record("at \(offset), \(count) bytes: read \(expected), borrowed \(got)")
                }
                if random.chance(5) { lent = nil }
            }
        }
    }
    /// A single read lent in place (`withBytes(at:count:_:)`, a lookup's value) equals
    /// `read(at:count:)`, whether it comes first and decrypts its page or finds it cached; a
    /// value across two pages is copied. On a file with a flipped byte both throw for the
    /// damaged page and agree elsewhere, and some read meets the damage.
    @Test("a value lent in place gives what read(at:count:) gives, intact and damaged")
    func lentValueEqualsRead() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("values.store")
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x5E_1F))
        let payload = (0..<60_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        try withEncryptedLog(at: path, holding: payload) { log, damaged in
            let size = try log.size()
            var failures = 0
            for _ in 0..<3_000 {
                let offset = UInt64.random(in: 0...size, using: &random)
                let count = Int.random(in: 0...min(300, Int(size - offset) + 2), using: &random)
                let lent = { Result { try log.withBytes(at: offset, count: count) { Array($0) } } }
                // Lent first half the time, so that the lent read is the one that decrypts the page.
                let lentFirst = random.chance(50)
                let got = lentFirst ? lent() : nil
                let expected = Result { try log.read(at: offset, count: count) }
                switch (expected, got ?? lent()) {
                case (.success(let a), .success(let b)): #expect(a == b, "\(count) bytes at \(offset)")
                case (.failure, .failure): if UInt64(count) <= size - offset { failures += 1 }
                case (let a, let b): Issue.record("at \(offset), \(count) bytes: read \(a), lent \(b)")
                }
            }
            // Only past the end does an intact file refuse a read.
            #expect(damaged ? failures > 0 : failures == 0)
        }
    }

    /// A read once (`readOnce(at:count:)`: a checkpoint at open, a merge's runs), whose pages
    /// taken whole are decrypted straight into the result (`PlaintextAssembly`) and not kept,
    /// gives the bytes written; on a file with a flipped byte it agrees with `read(at:count:)`,
    /// both throwing for the damaged page, and some read meets the damage.
    @Test("a read once, its whole pages decrypted in place, gives the bytes written, intact and damaged")
    func readOnceEqualsRead() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("once.store")
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x0_4CE))
        let payload = (0..<60_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        try withEncryptedLog(at: path, holding: payload) { log, damaged in
            let size = try log.size()
            var failures = 0
            for _ in 0..<200 {
                let offset = UInt64.random(in: 0...size, using: &random)
                let count = Int.random(in: 0...min(16_000, Int(size - offset) + 2), using: &random)
                let got = Result { try log.readOnce(at: offset, count: count) }
                // Intact, no page is cached (no `read` is made): every page is decrypted by the read once.
                let expected: Result<[UInt8], any Error> = damaged
                    ? Result { try log.read(at: offset, count: count) }
                    : UInt64(count) <= size - offset
                        ? .success(Array(payload[Int(offset)..<(Int(offset) + count)])) : .failure(StorageError(.closed))
                switch (expected, got) {
                case (.success(let a), .success(let b)): #expect(a == b, "\(count) bytes at \(offset)")
                case (.failure, .failure): if UInt64(count) <= size - offset { failures += 1 }
                case (let a, let b): Issue.record("at \(offset), \(count) bytes: expected \(a), read once \(b)")
                }
            }
            // Only past the end does an intact file refuse a read.
            #expect(damaged ? failures > 0 : failures == 0)
        }
    }
}
