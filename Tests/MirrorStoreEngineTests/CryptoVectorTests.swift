import Testing
@testable import MirrorStoreEngine

/// Known answers of the primitives, through our wrapper, from published vectors.
@Suite struct CryptoVectorTests {
    /// AES-256-GCM test cases 13–16 of McGrew and Viega, "The Galois/Counter Mode of Operation
    /// (GCM)" (revised 2005), appendix B: the 256-bit-key cases with 96-bit nonces (17 and 18 use
    /// other nonce lengths, which the wrapper refuses). NIST's GCM validation uses the same cases.
    static let gcmVectors: [(name: String, key: String, nonce: String, plaintext: String, associatedData: String, ciphertext: String, tag: String)] = [
        ("test case 13: empty plaintext, no associated data",
         String(repeating: "00", count: 32), String(repeating: "00", count: 12), "", "",
         "", "530f8afbc74536b9a963b4f1c4cb738b"),
        ("test case 14: one zero block",
         String(repeating: "00", count: 32), String(repeating: "00", count: 12), String(repeating: "00", count: 16), "",
         "cea7403d4d606b6e074ec5d3baf39d18", "d0d1c8a799996bf0265b98b5d48ab919"),
        ("test case 15: 64 bytes, no associated data",
         "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
         "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
         "",
         "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
         "b094dac5d93471bdec1a502270e3cc6c"),
        ("test case 16: 60 bytes (a partial last block), 20 bytes of associated data",
         "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
         "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
         "feedfacedeadbeeffeedfacedeadbeefabaddad2",
         "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
         "76fc6ece0f4e1768cddf8853bb2d551b"),
    ]

    @Test func aes256GCMSealsAndOpensThePublishedVectors() throws {
        for vector in Self.gcmVectors {
            let key = SecretBytes(copying: try hexBytes(vector.key))
            let nonce = try hexBytes(vector.nonce)
            let plaintext = try hexBytes(vector.plaintext)
            let associatedData = try hexBytes(vector.associatedData)
            let expected = try hexBytes(vector.ciphertext) + hexBytes(vector.tag)

            let sealed = try AES256GCM.seal(plaintext, key: key, nonce: nonce, associatedData: associatedData)
            #expect(sealed == expected, "\(vector.name)")
            let opened = try AES256GCM.open(expected, key: key, nonce: nonce, associatedData: associatedData)
            #expect(opened == plaintext, "\(vector.name)")
        }
    }

    /// PBKDF2-HMAC-SHA256: RFC 7914 §11 (the two vectors it gives for the PBKDF2 step of scrypt),
    /// and the widely published "password"/"salt" vectors for c = 1, 2, 4096 (the SHA-256
    /// counterparts of RFC 6070's, as in draft-josefsson-pbkdf2-test-vectors), with the 40-byte one.
    static let pbkdf2Vectors: [(password: String, salt: String, iterations: UInt32, derived: String)] = [
        ("passwd", "salt", 1,
         "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"),
        ("Password", "NaCl", 80_000,
         "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d"),
        ("password", "salt", 1, "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b"),
        ("password", "salt", 2, "ae4d0c95af6b46d32d0adff928f06dd02a303f8ef3c251dfd6e2d85a95474c43"),
        ("password", "salt", 4096, "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a"),
        ("passwordPASSWORDpassword", "saltSALTsaltSALTsaltSALTsaltSALTsalt", 4096,
         "348c89dbcbd32b2f32d814b8116e84cf2b17347ebc1800181c4e2a1fb8dd53e1c635518c7dac47e9"),
    ]

    @Test func pbkdf2DerivesThePublishedVectors() throws {
        for vector in Self.pbkdf2Vectors {
            let expected = try hexBytes(vector.derived)
            let derived = try PBKDF2.sha256(
                password: Array(vector.password.utf8), salt: Array(vector.salt.utf8),
                iterations: vector.iterations, byteCount: expected.count)
            #expect(derived.withUnsafeBytes { Array($0) } == expected, "\(vector.password)/\(vector.salt)/\(vector.iterations)")
        }
    }

    @Test func pbkdf2RefusesWhatItCannotDerive() {
        #expect(throws: StorageError(.emptyPassphrase)) {
            try PBKDF2.sha256(password: [], salt: Array("salt".utf8), iterations: 1, byteCount: 32)
        }
        for iterations: UInt32 in [0, 10_000_001, .max] {
            #expect(throws: StorageError(.encryptionFailed(reason: "a PBKDF2 iteration count of \(iterations) is outside 1...10000000"))) {
                try PBKDF2.sha256(password: [1], salt: [2], iterations: iterations, byteCount: 32)
            }
        }
        for count in [0, -1, 1025] {
            #expect(throws: StorageError(.encryptionFailed(reason: "PBKDF2 was asked for \(count) bytes, outside 1...1024"))) {
                try PBKDF2.sha256(password: [1], salt: [2], iterations: 1, byteCount: count)
            }
        }
    }

    @Test func theRandomGeneratorGivesFreshBytes() throws {
        #expect(try SecureRandom.bytes(0) == [])
        let first = try SecureRandom.bytes(32)
        let second = try SecureRandom.bytes(32)
        #expect(first.count == 32 && second.count == 32)
        #expect(first != second, "two 256-bit draws collide with probability 2^-256")
        let secret = try SecureRandom.secret(32)
        #expect(secret.count == 32)
        #expect(!secret.isEqual(to: SecretBytes(copying: [UInt8](repeating: 0, count: 32))))
    }

    @Test func secretBytesCompareByContent() {
        let a = SecretBytes(copying: [1, 2, 3])
        #expect(a.isEqual(to: SecretBytes(copying: [1, 2, 3])))
        #expect(!a.isEqual(to: SecretBytes(copying: [1, 2, 4])))
        #expect(!a.isEqual(to: SecretBytes(copying: [1, 2])))
        #expect(SecretBytes(copying: []).count == 0)
    }
}

/// The bytes a hexadecimal string spells (two digits a byte).
func hexBytes(_ text: String) throws -> [UInt8] {
    let digits = Array(text.utf8)
    guard digits.count.isMultiple(of: 2) else { throw HexError(text: text) }
    return try stride(from: 0, to: digits.count, by: 2).map { index in
        guard let byte = UInt8(String(decoding: digits[index..<(index + 2)], as: UTF8.self), radix: 16) else {
            throw HexError(text: text)
        }
        return byte
    }
}

struct HexError: Error {
    var text: String
}
