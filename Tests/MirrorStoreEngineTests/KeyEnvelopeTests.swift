import Testing
import TestSupport
@testable import MirrorStoreEngine

/// The wrapped data key: round trips, wrong and invalid secrets, passphrase changes, and damage
/// told apart from a wrong key. Passphrase envelopes use 1,000 iterations here to stay fast; one
/// test runs the default once.
@Suite struct KeyEnvelopeTests {
    static let fast: UInt32 = 1_000
    static let path = "/data/secret.store"
    let rawKey: [UInt8] = (0..<32).map { UInt8($0 * 7 + 3) }

    @Test func aPassphraseEnvelopeRoundTrips() throws {
        let (envelope, dataKey) = try KeyEnvelope.create(for: .passphrase("correct horse battery staple"), iterations: Self.fast)
        #expect(dataKey.count == 32)
        guard case .pbkdf2SHA256(let iterations, let salt) = envelope.derivation else {
            Issue.record("a passphrase envelope derives with PBKDF2: \(envelope.derivation)")
            return
        }
        #expect(iterations == Self.fast)
        #expect(salt.count == 16)
        let bytes = envelope.encoded()
        #expect(bytes.count == 91)
        #expect(Array(bytes.prefix(4)) == Array("MSKE".utf8))
        let decoded = try KeyEnvelope.decode(bytes, path: Self.path)
        #expect(decoded == envelope)
        let opened = try decoded.open(with: .passphrase("correct horse battery staple"), path: Self.path)
        #expect(opened.isEqual(to: dataKey))
    }

    @Test func aRawKeyEnvelopeRoundTrips() throws {
        let (envelope, dataKey) = try KeyEnvelope.create(for: .key(rawKey))
        #expect(envelope.derivation == .rawKey)
        let bytes = envelope.encoded()
        #expect(bytes.count == KeyEnvelope.minimumByteCount)
        #expect(bytes.count == 75)
        let opened = try KeyEnvelope.decode(bytes, path: Self.path).open(with: .key(rawKey), path: Self.path)
        #expect(opened.isEqual(to: dataKey))
        #expect(!dataKey.isEqual(to: SecretBytes(copying: rawKey)), "the data key is random, not the app's key")
    }

    @Test func everyEnvelopeHasItsOwnDataKeySaltAndNonce() throws {
        let first = try KeyEnvelope.create(for: .passphrase("same"), iterations: Self.fast)
        let second = try KeyEnvelope.create(for: .passphrase("same"), iterations: Self.fast)
        #expect(!first.dataKey.isEqual(to: second.dataKey))
        #expect(first.envelope.derivation != second.envelope.derivation, "salts differ")
        #expect(first.envelope.nonce != second.envelope.nonce)
    }

    @Test func aWrongPassphraseOrKeyIsWrongKeyNeverCorrupted() throws {
        let passphraseEnvelope = try KeyEnvelope.create(for: .passphrase("open sesame"), iterations: Self.fast).envelope
        let keyEnvelope = try KeyEnvelope.create(for: .key(rawKey)).envelope
        let wrongKey = StorageError(.wrongKey(path: Self.path))
        for secret: EncryptionSecret in [.passphrase("open sesamE"), .passphrase("open sesame "), .passphrase("x"), .key(rawKey)] {
            #expect(throws: wrongKey, "\(secret)") { try passphraseEnvelope.open(with: secret, path: Self.path) }
        }
        var otherKey = rawKey
        otherKey[31] ^= 1
        for secret: EncryptionSecret in [.key(otherKey), .key([UInt8](repeating: 0, count: 32)), .passphrase("open sesame")] {
            #expect(throws: wrongKey, "\(secret)") { try keyEnvelope.open(with: secret, path: Self.path) }
        }
        #expect(wrongKey.description == "The passphrase or key given does not open the store at '/data/secret.store': it is not the one the store was encrypted with.")
    }

    @Test func anEmptyPassphraseIsRefusedEverywhere() throws {
        let refused = StorageError(.emptyPassphrase)
        #expect(throws: refused) { try KeyEnvelope.create(for: .passphrase(""), iterations: Self.fast) }
        let envelope = try KeyEnvelope.create(for: .passphrase("p"), iterations: Self.fast).envelope
        #expect(throws: refused) { try envelope.open(with: .passphrase(""), path: Self.path) }
        #expect(throws: refused) { try envelope.rewrapped(from: .passphrase("p"), to: .passphrase(""), iterations: Self.fast, path: Self.path) }
        #expect(refused.description == "The encryption passphrase is empty; give a passphrase of at least one character, or a 32-byte key.")
    }

    @Test func aKeyOfAnotherLengthIsRefusedEverywhere() throws {
        let envelope = try KeyEnvelope.create(for: .key(rawKey)).envelope
        for count in [0, 1, 16, 24, 31, 33, 64] {
            let key = [UInt8](repeating: 9, count: count)
            let refused = StorageError(.invalidKeyLength(found: count, expected: 32))
            #expect(throws: refused) { try KeyEnvelope.create(for: .key(key)) }
            #expect(throws: refused) { try envelope.open(with: .key(key), path: Self.path) }
            #expect(throws: refused) { try envelope.rewrapped(from: .key(rawKey), to: .key(key), path: Self.path) }
            #expect(throws: refused) { try KeyEnvelope.wrapping(SecretBytes(copying: key), for: .key(rawKey)) }
        }
        #expect(StorageError(.invalidKeyLength(found: 31, expected: 32)).description
            == "The encryption key is 31 bytes long, but AES-256 needs a key of exactly 32 bytes.")
    }

    @Test func aPassphraseChangeKeepsTheDataKey() throws {
        let (old, dataKey) = try KeyEnvelope.create(for: .passphrase("old passphrase"), iterations: Self.fast)
        let new = try old.rewrapped(from: .passphrase("old passphrase"), to: .passphrase("new passphrase"), iterations: 2_000, path: Self.path)
        #expect(try new.open(with: .passphrase("new passphrase"), path: Self.path).isEqual(to: dataKey))
        #expect(throws: StorageError(.wrongKey(path: Self.path))) { try new.open(with: .passphrase("old passphrase"), path: Self.path) }
        guard case .pbkdf2SHA256(let oldIterations, let oldSalt) = old.derivation,
              case .pbkdf2SHA256(let newIterations, let newSalt) = new.derivation else {
            Issue.record("both derive with PBKDF2")
            return
        }
        #expect(oldSalt != newSalt)
        #expect((oldIterations, newIterations) == (Self.fast, 2_000))
        #expect(old.nonce != new.nonce)
        // The same passphrase again still gets a new salt: rewrapping never reuses a wrap.
        let again = try new.rewrapped(from: .passphrase("new passphrase"), to: .passphrase("new passphrase"), iterations: Self.fast, path: Self.path)
        #expect(again.derivation != new.derivation)
        #expect(try again.open(with: .passphrase("new passphrase"), path: Self.path).isEqual(to: dataKey))

        // A wrong old passphrase changes nothing.
        #expect(throws: StorageError(.wrongKey(path: Self.path))) {
            try old.rewrapped(from: .passphrase("guess"), to: .passphrase("mine now"), iterations: Self.fast, path: Self.path)
        }
    }

    @Test func switchingBetweenPassphraseAndKeyKeepsTheDataKey() throws {
        let (start, dataKey) = try KeyEnvelope.create(for: .passphrase("p"), iterations: Self.fast)
        let keyed = try start.rewrapped(from: .passphrase("p"), to: .key(rawKey), path: Self.path)
        #expect(keyed.derivation == .rawKey)
        #expect(try keyed.open(with: .key(rawKey), path: Self.path).isEqual(to: dataKey))
        let back = try keyed.rewrapped(from: .key(rawKey), to: .passphrase("q"), iterations: Self.fast, path: Self.path)
        #expect(try back.open(with: .passphrase("q"), path: Self.path).isEqual(to: dataKey))
    }

    /// The default is what issue 27 asks for, and it is what a new passphrase envelope gets; this
    /// runs it once (two derivations: create and open).
    @Test func theDefaultIterationCountIsAtLeast600000() throws {
        #expect(KeyEnvelope.defaultIterations >= 600_000)
        let (envelope, dataKey) = try KeyEnvelope.create(for: .passphrase("slow on purpose"))
        guard case .pbkdf2SHA256(let iterations, _) = envelope.derivation else {
            Issue.record("a passphrase envelope derives with PBKDF2: \(envelope.derivation)")
            return
        }
        #expect(iterations == KeyEnvelope.defaultIterations)
        #expect(try envelope.open(with: .passphrase("slow on purpose"), path: Self.path).isEqual(to: dataKey))
    }

    @Test func iterationCountsOutsideTheRangeAreRefusedWhenWrapping() throws {
        for iterations: UInt32 in [0, 10_000_001, .max] {
            #expect(throws: StorageError(.encryptionFailed(reason: "a PBKDF2 iteration count of \(iterations) is outside 1...10000000"))) {
                try KeyEnvelope.create(for: .passphrase("p"), iterations: iterations)
            }
        }
    }

    // MARK: Damage

    /// A flipped bit anywhere is caught by the checksum: damage, never a wrong key.
    @Test func everyFlippedBitIsCorruptionNotAWrongKey() throws {
        for secret: EncryptionSecret in [.passphrase("p"), .key(rawKey)] {
            let bytes = try KeyEnvelope.create(for: secret, iterations: Self.fast).envelope.encoded()
            for bit in 0..<(bytes.count * 8) {
                var damaged = bytes
                damaged[bit / 8] ^= UInt8(1 << (bit % 8))
                let error = try #require(throws: StorageError.self, "bit \(bit)") { try KeyEnvelope.decode(damaged, path: Self.path, fileOffset: 1000) }
                guard case .corrupted(let path, let offset, _) = error.kind else {
                    Issue.record("bit \(bit): \(error)")
                    continue
                }
                #expect(path == Self.path)
                #expect(offset >= 1000 && offset < 1000 + UInt64(bytes.count), "bit \(bit)")
            }
        }
    }

    /// Bytes whose checksum was made to match (a crafted envelope): a changed parameter is in the
    /// wrap's associated data, so the passphrase no longer opens it, and nothing opens it with a
    /// weaker derivation.
    @Test func aCraftedParameterWithAValidChecksumDoesNotOpen() throws {
        let bytes = try KeyEnvelope.create(for: .passphrase("p"), iterations: Self.fast).envelope.encoded()
        for (offset, change) in [(6, UInt8(0x01)), (7, 0x01), (11, 0x80), (26, 0x01)] {
            var crafted = bytes
            crafted[offset] ^= change
            let envelope = try KeyEnvelope.decode(withChecksum(crafted), path: Self.path)
            #expect(throws: StorageError(.wrongKey(path: Self.path)), "byte \(offset)") {
                try envelope.open(with: .passphrase("p"), path: Self.path)
            }
        }
    }

    @Test func malformedFieldsAreCorruptionAtTheirOffset() throws {
        let passphraseBytes = try KeyEnvelope.create(for: .passphrase("p"), iterations: Self.fast).envelope.encoded()
        let keyBytes = try KeyEnvelope.create(for: .key(rawKey)).envelope.encoded()
        func corruption(_ bytes: [UInt8], fileOffset: UInt64 = 0) -> StorageError.Kind? {
            do {
                _ = try KeyEnvelope.decode(bytes, path: Self.path, fileOffset: fileOffset)
                return nil
            } catch {
                return error.kind
            }
        }
        func edited(_ bytes: [UInt8], _ edit: (inout [UInt8]) -> Void) -> [UInt8] {
            var copy = bytes
            edit(&copy)
            return withChecksum(copy)
        }
        func corrupted(_ offset: UInt64, _ reason: String) -> StorageError.Kind {
            .corrupted(path: Self.path, offset: offset, reason: reason)
        }
        func littleEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

        #expect(corruption([]) == corrupted(0, "the key envelope does not start with its format tag"))
        #expect(corruption(Array("MSK".utf8)) == corrupted(0, "the key envelope does not start with its format tag"))
        #expect(corruption(Array("NOPE and more bytes than that".utf8)) == corrupted(0, "the key envelope does not start with its format tag"))
        #expect(corruption(Array(keyBytes.prefix(74))) == corrupted(0, "the key envelope is 74 bytes long, shorter than the 75 of the smallest one"))
        #expect(corruption(keyBytes, fileOffset: 4096) == nil)
        var badChecksum = keyBytes
        badChecksum[74] ^= 0xFF
        #expect(corruption(badChecksum, fileOffset: 4096) == corrupted(4096 + 71, "the key envelope's checksum does not match"))
        #expect(corruption(edited(keyBytes) { $0[4] = 2 }) == corrupted(4, "the key envelope has version 2, which this MirrorStore does not know"))
        #expect(corruption(edited(keyBytes) { $0[5] = 7 }) == corrupted(5, "the key envelope names key derivation 7, which this MirrorStore does not know"))
        #expect(corruption(edited(keyBytes) { $0[6] = 1 }) == corrupted(6, "a raw-key envelope gives an iteration count (1)"))
        #expect(corruption(edited(keyBytes) { $0[10] = 16 }) == corrupted(10, "a raw-key envelope gives a salt (16 bytes)"))
        for iterations: UInt32 in [0, 10_000_001, .max] {
            #expect(corruption(edited(passphraseBytes) { $0.replaceSubrange(6..<10, with: littleEndian(iterations)) })
                == corrupted(6, "the key envelope's iteration count \(iterations) is outside 1...10000000"))
        }
        for saltLength: UInt8 in [0, 15, 65, 255] {
            #expect(corruption(edited(passphraseBytes) { $0[10] = saltLength })
                == corrupted(10, "the key envelope's salt length \(saltLength) is outside 16...64"))
        }
        // A salt length the bytes do not match, either way.
        #expect(corruption(edited(passphraseBytes) { $0[10] = 17 }) == corrupted(91, "the key envelope is 91 bytes long where its salt length makes it 92"))
        #expect(corruption(withChecksum(Array(passphraseBytes.dropLast(4)) + [0] + [0, 0, 0, 0]))
            == corrupted(91, "the key envelope is 92 bytes long where its salt length makes it 91"))
        // The largest salt decodes.
        var longSalt = Array(passphraseBytes.prefix(11)) + [UInt8](repeating: 0xA5, count: 64) + Array(passphraseBytes[27..<87])
        longSalt[10] = 64
        let decoded = try KeyEnvelope.decode(withChecksum(longSalt + [0, 0, 0, 0]), path: Self.path)
        #expect(decoded.derivation == .pbkdf2SHA256(iterations: Self.fast, salt: [UInt8](repeating: 0xA5, count: 64)))
    }

    @Test func aSecretNeverPrintsItself() {
        let passphrase = EncryptionSecret.passphrase("hunter2")
        let key = EncryptionSecret.key(rawKey)
        #expect("\(passphrase)" == "a passphrase")
        #expect("\(key)" == "a 32-byte key")
        var dumped = ""
        dump(passphrase, to: &dumped)
        #expect(!dumped.contains("hunter2"), "\(dumped)")
        #expect(!String(reflecting: passphrase).contains("hunter2"))
    }

    @Test func theNewErrorsReadAsOneSentence() {
        #expect(StorageError(.encryptionFailed(reason: "RAND_bytes failed")).description == "Encryption failed: RAND_bytes failed.")
        #expect(StorageError(.authenticationFailed).description
            == "The encrypted bytes did not authenticate: they were changed, or sealed with another key, nonce or associated data, so nothing of them was decrypted.")
        #expect(StorageError(.nonceLimitReached(limit: 4_294_967_296)).description
            == "The data key has sealed 4294967296 chunks, the most one key may seal with random nonces (NIST SP 800-38D), so it seals no more; rotate the data key.")
    }
}

/// `bytes` with its last four bytes replaced by the masked CRC32C of the others, as an envelope's.
func withChecksum(_ bytes: [UInt8]) -> [UInt8] {
    var body = Array(bytes.dropLast(4))
    let crc = CRC32C.mask(CRC32C.checksum(body))
    body.append(contentsOf: (0..<4).map { UInt8(truncatingIfNeeded: crc >> (8 * UInt32($0))) })
    return body
}
