import Dispatch
import Testing
import TestSupport
@testable import MirrorStoreEngine

/// `AES256GCM.Opener` (the cipher keyed once, its contexts reused) against `AES256GCM.open`
/// (a context per message), on the published vectors and on random messages, intact and changed.
@Suite struct KeyedOpenerTests {
    @Test("an opener opens the published vectors")
    func opensThePublishedVectors() throws {
        for vector in CryptoVectorTests.gcmVectors {
            let opener = try AES256GCM.Opener(key: SecretBytes(copying: try hexBytes(vector.key)))
            let sealed = try hexBytes(vector.ciphertext) + hexBytes(vector.tag)
            let opened = try opener.open(sealed[...], nonce: try hexBytes(vector.nonce), associatedData: try hexBytes(vector.associatedData))
            #expect(opened == (try hexBytes(vector.plaintext)), "\(vector.name)")
        }
    }

    /// Random messages, each sealed once, opened by one opener in a random order, a changed byte
    /// of the sealed bytes, nonce or associated data in a third of them: the opener gives what
    /// `open` gives, and refuses (`authenticationFailed`) every changed one, also right after
    /// another refusal, whose context it reuses.
    @Test("an opener gives what open gives, intact and changed, one context reused after refusals")
    func opensAsOpenDoes() throws {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x0BE4E))
        let key = SecretBytes(copying: (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })
        let opener = try AES256GCM.Opener(key: key)
        var refused = 0
        for _ in 0..<600 {
            let plaintext = (0..<Int.random(in: 0...4_100, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            var nonce = (0..<12).map { _ in UInt8.random(in: 0...255, using: &random) }
            var associatedData = (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            var sealed = try AES256GCM.seal(plaintext, key: key, nonce: nonce, associatedData: associatedData)
            let changed = random.chance(33)
            if changed {
                switch Int.random(in: 0..<3, using: &random) {
                case 0: sealed[Int.random(in: sealed.indices, using: &random)] ^= UInt8(1) << UInt8.random(in: 0...7, using: &random)
                case 1: nonce[Int.random(in: nonce.indices, using: &random)] ^= 0x01
                default: associatedData.append(UInt8.random(in: 0...255, using: &random))
                }
            }
            // A slice of a larger buffer, as pages lie in the bytes read at once.
            let buffer = [0x5A] + sealed + [0xA5]
            let expected = Result { () throws(StorageError) in try AES256GCM.open(sealed, key: key, nonce: nonce, associatedData: associatedData) }
            let got = Result { () throws(StorageError) in try opener.open(buffer[1..<(buffer.count - 1)], nonce: nonce, associatedData: associatedData) }
            switch (expected, got) {
            case (.success(let a), .success(let b)):
                #expect(!changed)
                #expect(a == b && a == plaintext)
            case (.failure(let a), .failure(let b)):
                #expect(changed)
                #expect(a.kind == .authenticationFailed && b.kind == .authenticationFailed)
                refused += 1
            default: Issue.record("open gave \(expected), the opener \(got)")
            }
        }
        #expect(refused > 100)
    }

    /// Threads opening at once, each taking a context of its own: every message opens to its plaintext.
    @Test("an opener opens from many threads at once")
    func opensConcurrently() throws {
        let key = SecretBytes(copying: (0..<32).map { UInt8($0) })
        let opener = try AES256GCM.Opener(key: key)
        let messages = try (0..<64).map { index -> (nonce: [UInt8], plaintext: [UInt8], sealed: [UInt8]) in
            let nonce = (0..<12).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
            let plaintext = (0..<(index * 61)).map { UInt8(truncatingIfNeeded: $0 ^ index) }
            return (nonce, plaintext, try AES256GCM.seal(plaintext, key: key, nonce: nonce))
        }
        let failures = Lock(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<200 {
                let message = messages[(thread * 7 + round) % messages.count]
                let opened = try? opener.open(message.sealed[...], nonce: message.nonce)
                if opened != message.plaintext { failures.withLock { $0 += 1 } }
            }
        }
        #expect(failures.withLock { $0 } == 0)
    }
}
