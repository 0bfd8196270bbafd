/// Bytes from the platform's cryptographically secure generator: libcrypto's `RAND_bytes` (seeded
/// from the kernel) on Linux, `SecRandomCopyBytes` on Apple platforms. Used for data keys, salts
/// and nonces; a failure is a typed error, never a trap and never weaker bytes.
package enum SecureRandom {
    /// `count` random bytes.
    package static func bytes(_ count: Int) throws(StorageError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: max(count, 0))
        // Array's withUnsafeMutableBytes rethrows untyped errors, so the typed one travels in a Result.
        try bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(StorageError) in try CryptoBinding.randomBytes(into: buffer) }
        }.get()
        return bytes
    }

    /// `count` random bytes for a key, held where they are zeroed when released.
    package static func secret(_ count: Int) throws(StorageError) -> SecretBytes {
        try SecretBytes(count: count) { (buffer) throws(StorageError) in
            try CryptoBinding.randomBytes(into: buffer)
        }
    }
}
