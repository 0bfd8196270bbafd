import Testing
import TestSupport
@testable import MirrorStoreEngine

/// A changed bit anywhere the tag covers (ciphertext, tag, associated data, nonce, key) fails to
/// open with `authenticationFailed`, and nothing a caller passes traps.
@Suite struct AEADTamperTests {
    /// Test case 16's parts (CryptoVectorTests): a partial block and associated data.
    let key: [UInt8]
    let nonce: [UInt8]
    let associatedData: [UInt8]
    let sealed: [UInt8]

    init() throws {
        let vector = CryptoVectorTests.gcmVectors[3]
        key = try hexBytes(vector.key)
        nonce = try hexBytes(vector.nonce)
        associatedData = try hexBytes(vector.associatedData)
        sealed = try hexBytes(vector.ciphertext) + hexBytes(vector.tag)
    }

    private func expectRefused(
        _ sealed: [UInt8], key: [UInt8]? = nil, nonce: [UInt8]? = nil, associatedData: [UInt8]? = nil,
        _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(throws: StorageError(.authenticationFailed), comment, sourceLocation: sourceLocation) {
            try AES256GCM.open(
                sealed, key: SecretBytes(copying: key ?? self.key), nonce: nonce ?? self.nonce,
                associatedData: associatedData ?? self.associatedData)
        }
    }

    @Test func everyFlippedBitOfTheCiphertextAndTagIsRefused() {
        for bit in 0..<(sealed.count * 8) {
            var damaged = sealed
            damaged[bit / 8] ^= UInt8(1 << (bit % 8))
            let part = bit / 8 < sealed.count - AES256GCM.tagByteCount ? "ciphertext" : "tag"
            expectRefused(damaged, "\(part), bit \(bit)")
        }
    }

    @Test func everyFlippedBitOfTheAssociatedDataNonceAndKeyIsRefused() {
        for bit in 0..<(associatedData.count * 8) {
            var damaged = associatedData
            damaged[bit / 8] ^= UInt8(1 << (bit % 8))
            expectRefused(sealed, associatedData: damaged, "associated data, bit \(bit)")
        }
        for bit in 0..<(nonce.count * 8) {
            var damaged = nonce
            damaged[bit / 8] ^= UInt8(1 << (bit % 8))
            expectRefused(sealed, nonce: damaged, "nonce, bit \(bit)")
        }
        for bit in stride(from: 0, to: key.count * 8, by: 7) {
            var damaged = key
            damaged[bit / 8] ^= UInt8(1 << (bit % 8))
            expectRefused(sealed, key: damaged, "key, bit \(bit)")
        }
    }

    @Test func missingOrAddedBytesAreRefused() {
        expectRefused(sealed, associatedData: [], "associated data left out")
        expectRefused(sealed, associatedData: associatedData + [0], "associated data extended")
        expectRefused(Array(sealed.dropLast()), "the last tag byte cut off")
        expectRefused(Array(sealed.dropFirst()), "the first ciphertext byte cut off")
        expectRefused(sealed + [0], "a byte appended")
        for count in 0..<AES256GCM.tagByteCount {
            expectRefused(Array(sealed.prefix(count)), "\(count) bytes, shorter than a tag")
        }
    }

    @Test func wrongSizesAreTypedErrors() throws {
        for count in [0, 16, 31, 33, 64] {
            #expect(throws: StorageError(.invalidKeyLength(found: count, expected: 32))) {
                try AES256GCM.seal([1, 2, 3], key: SecretBytes(copying: [UInt8](repeating: 7, count: count)), nonce: nonce)
            }
            #expect(throws: StorageError(.invalidKeyLength(found: count, expected: 32))) {
                try AES256GCM.open(sealed, key: SecretBytes(copying: [UInt8](repeating: 7, count: count)), nonce: nonce)
            }
        }
        for count in [0, 8, 11, 13, 16] {
            #expect(throws: StorageError(.encryptionFailed(reason: "an AES-256-GCM nonce must be 12 bytes, not \(count)"))) {
                try AES256GCM.seal([1, 2, 3], key: SecretBytes(copying: key), nonce: [UInt8](repeating: 0, count: count))
            }
            #expect(throws: StorageError(.encryptionFailed(reason: "an AES-256-GCM nonce must be 12 bytes, not \(count)"))) {
                try AES256GCM.open(sealed, key: SecretBytes(copying: key), nonce: [UInt8](repeating: 0, count: count))
            }
        }
    }

    /// Random keys, nonces, messages and associated data of many lengths (up to a 64 KiB chunk)
    /// round-trip, and a random flipped bit in any of them is refused.
    @Test func seededRoundTripsAndFlips() throws {
        let seed = SeededRandom.seed(default: 0xAEAD)
        var generator = SeededRandom(seed: seed)
        func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        for length in [0, 1, 15, 16, 17, 255, 4096, 65_536] {
            let key = SecretBytes(copying: bytes(32))
            let nonce = bytes(12)
            let message = bytes(length)
            let associatedData = bytes(Int.random(in: 0...40, using: &generator))
            let sealed = try AES256GCM.seal(message, key: key, nonce: nonce, associatedData: associatedData)
            #expect(sealed.count == length + 16)
            #expect(try AES256GCM.open(sealed, key: key, nonce: nonce, associatedData: associatedData) == message, "seed \(seed), length \(length)")

            var damaged = sealed
            damaged[Int.random(in: 0..<damaged.count, using: &generator)] ^= UInt8(1 << Int.random(in: 0..<8, using: &generator))
            #expect(throws: StorageError(.authenticationFailed), "seed \(seed), length \(length)") {
                try AES256GCM.open(damaged, key: key, nonce: nonce, associatedData: associatedData)
            }
        }
    }

    /// The same key and message under two nonces give unrelated ciphertexts: the nonce is what a
    /// budget must never repeat.
    @Test func theNonceChangesTheCiphertext() throws {
        let key = SecretBytes(copying: self.key)
        let message = [UInt8](repeating: 0x41, count: 32)
        let first = try AES256GCM.seal(message, key: key, nonce: [UInt8](repeating: 0, count: 12))
        let second = try AES256GCM.seal(message, key: key, nonce: [UInt8](repeating: 0, count: 11) + [1])
        #expect(first != second)
        #expect(first.prefix(32) != message[...])
    }
}
