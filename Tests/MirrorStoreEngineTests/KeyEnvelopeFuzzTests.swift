import Testing
import TestSupport
@testable import MirrorStoreEngine

/// The envelope decoder on bytes nobody wrote: random, and mutations of real envelopes (some with
/// their checksum made to match, to reach the field checks). Each ends in a typed error or an
/// envelope that encodes back to the same bytes; none traps. Replay with MIRRORSTORE_SEED.
@Suite struct KeyEnvelopeFuzzTests {
    @Test func randomBytesNeverTrap() {
        let seed = SeededRandom.seed(default: 0x5EED_E4E1)
        var generator = SeededRandom(seed: seed)
        for round in 0..<20_000 {
            let count = generator.chance(50) ? Int.random(in: 0...200, using: &generator) : Int.random(in: 70...100, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Most random bytes fail at the tag; give half of them the tag, and a quarter a checksum.
            if generator.chance(50), bytes.count >= 4 { bytes.replaceSubrange(0..<4, with: KeyEnvelope.formatTag) }
            if generator.chance(50), bytes.count >= 4 { bytes = withChecksum(bytes) }
            check(bytes, "seed \(seed), round \(round)")
        }
    }

    @Test func mutatedEnvelopesNeverTrap() throws {
        let seed = SeededRandom.seed(default: 0xE4E1_0FE5)
        var generator = SeededRandom(seed: seed)
        let originals = [
            try KeyEnvelope.create(for: .passphrase("fuzz"), iterations: 100).envelope.encoded(),
            try KeyEnvelope.create(for: .key([UInt8](repeating: 1, count: 32))).envelope.encoded(),
        ]
        var opened = 0
        for round in 0..<20_000 {
            var bytes = generator.pick(originals)
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                bytes = generator.damaged(bytes)
            }
            if generator.chance(60), bytes.count >= 4 { bytes = withChecksum(bytes) }
            if let envelope = check(bytes, "seed \(seed), round \(round)") {
                // Opening runs PBKDF2 with the envelope's own count: only small ones, to stay fast.
                if case .pbkdf2SHA256(let iterations, _) = envelope.derivation, iterations > 2_000 { continue }
                opened += 1
                for secret: EncryptionSecret in [.passphrase("fuzz"), .key([UInt8](repeating: 1, count: 32))] {
                    do {
                        _ = try envelope.open(with: secret, path: "fuzz.store")
                    } catch {
                        #expect(error.kind == .wrongKey(path: "fuzz.store"), "seed \(seed), round \(round): \(error)")
                    }
                }
            }
        }
        #expect(opened > 0, "some mutations decode, so the open path is exercised")
    }

    /// Decodes `bytes`: a `corrupted` error, or an envelope that encodes to exactly `bytes`.
    @discardableResult
    private func check(_ bytes: [UInt8], _ comment: String) -> KeyEnvelope? {
        do {
            let envelope = try KeyEnvelope.decode(bytes, path: "fuzz.store", fileOffset: 64)
            #expect(envelope.encoded() == bytes, "\(comment)")
            return envelope
        } catch {
            guard case .corrupted(let path, let offset, _) = error.kind else {
                Issue.record("\(comment): \(error)")
                return nil
            }
            #expect(path == "fuzz.store")
            #expect(offset >= 64 && offset <= 64 + UInt64(bytes.count), "\(comment)")
            return nil
        }
    }
}
