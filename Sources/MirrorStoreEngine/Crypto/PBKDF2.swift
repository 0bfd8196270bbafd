/// PBKDF2 with HMAC-SHA-256 (RFC 8018), the slow key derivation that turns a passphrase into the
/// key that wraps a store's data key. The function is the platform library's (`CryptoBinding`).
package enum PBKDF2 {
    /// The iteration counts a derivation takes. The store derives with at least
    /// `KeyEnvelope.defaultIterations`; the upper bound keeps a crafted envelope from making an
    /// open take hours (10,000,000 rounds take a few seconds).
    package static let iterationRange: ClosedRange<UInt32> = 1...10_000_000

    /// `byteCount` bytes derived from `password` and `salt` with `iterations` rounds of HMAC-SHA-256.
    package static func sha256(
        password: [UInt8], salt: [UInt8], iterations: UInt32, byteCount: Int
    ) throws(StorageError) -> SecretBytes {
        guard !password.isEmpty else { throw StorageError(.emptyPassphrase) }
        guard iterationRange.contains(iterations) else {
            throw StorageError(.encryptionFailed(reason: "a PBKDF2 iteration count of \(iterations) is outside \(iterationRange.lowerBound)...\(iterationRange.upperBound)"))
        }
        guard (1...1024).contains(byteCount) else {
            throw StorageError(.encryptionFailed(reason: "PBKDF2 was asked for \(byteCount) bytes, outside 1...1024"))
        }
        return try SecretBytes(count: byteCount) { (output) throws(StorageError) in
            // Array's withUnsafeBytes rethrows untyped errors, so the typed one travels in a Result.
            try password.withUnsafeBytes { passwordBytes in
                Result { () throws(StorageError) in
                    try CryptoBinding.pbkdf2SHA256(password: passwordBytes, salt: salt, iterations: iterations, output: output)
                }
            }.get()
        }
    }
}
