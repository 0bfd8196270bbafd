/// The secret an encrypted store was opened with, and the key-encryption key derived from it.
///
/// The derived key is kept for as long as the engine: every new file generation (each
/// compaction, rewrite and key rotation) draws a new random data key and wraps it under the same
/// key-encryption key and salt, so a compaction never runs PBKDF2 again, and a reader beside the
/// writer reopening a compacted file does not either.
final class EncryptionKeys: Sendable {
    let secret: EncryptionSecret
    /// The iterations a new passphrase derivation uses.
    let iterations: UInt32
    /// The last derivation used and its key.
    private let derived: Lock<Derived?>

    private struct Derived: Sendable {
        var derivation: KeyEnvelope.Derivation
        var key: SecretBytes
    }

    /// Throws `emptyPassphrase` or `invalidKeyLength` for a secret that could open nothing.
    init(_ secret: EncryptionSecret, iterations: UInt32 = KeyEnvelope.defaultIterations) throws(StorageError) {
        try secret.validate()
        self.secret = secret
        self.iterations = iterations
        derived = Lock(nil)
    }

    /// The data key `envelope` wraps; `wrongKey` (naming `path`) when this secret did not wrap it.
    func dataKey(opening envelope: KeyEnvelope, path: String) throws(StorageError) -> SecretBytes {
        let keyEncryptionKey = try key(for: envelope.derivation, path: path)
        var plainKey: [UInt8]
        do throws(StorageError) {
            plainKey = try AES256GCM.open(
                envelope.wrappedKey, key: keyEncryptionKey, nonce: envelope.nonce,
                associatedData: KeyEnvelope.parameterBytes(envelope.derivation))
        } catch where error.kind == .authenticationFailed {
            throw StorageError(.wrongKey(path: path))
        }
        defer { plainKey.withUnsafeMutableBytes { CryptoBinding.cleanse($0) } }
        guard plainKey.count == AES256GCM.keyByteCount else {
            throw StorageError(.encryptionFailed(reason: "the unwrapped data key is \(plainKey.count) bytes, not \(AES256GCM.keyByteCount)"))
        }
        return SecretBytes(copying: plainKey)
    }

    /// A new random data key and its envelope under this secret.
    func newDataKey() throws(StorageError) -> (envelope: KeyEnvelope, dataKey: SecretBytes) {
        let dataKey = try SecureRandom.secret(AES256GCM.keyByteCount)
        return (try wrap(dataKey), dataKey)
    }

    /// An envelope of `dataKey` under this secret: with the derivation already in use, or a new
    /// salt for the first.
    func wrap(_ dataKey: SecretBytes) throws(StorageError) -> KeyEnvelope {
        let derivation: KeyEnvelope.Derivation
        if let current = derived.withLock({ $0?.derivation }) {
            derivation = current
        } else {
            switch secret {
            case .passphrase:
                derivation = .pbkdf2SHA256(iterations: iterations, salt: try SecureRandom.bytes(KeyEnvelope.saltByteCount))
            case .key:
                derivation = .rawKey
            }
        }
        let keyEncryptionKey = try key(for: derivation, path: "")
        let nonce = try SecureRandom.bytes(AES256GCM.nonceByteCount)
        // The cipher takes an array: this copy of the data key is wiped once sealed.
        var plainKey = dataKey.withUnsafeBytes { Array($0) }
        defer { plainKey.withUnsafeMutableBytes { CryptoBinding.cleanse($0) } }
        let wrapped = try AES256GCM.seal(
            plainKey, key: keyEncryptionKey, nonce: nonce, associatedData: KeyEnvelope.parameterBytes(derivation))
        return KeyEnvelope(derivation: derivation, nonce: nonce, wrappedKey: wrapped)
    }

    /// The key-encryption key for `derivation`, derived once and then reused.
    private func key(for derivation: KeyEnvelope.Derivation, path: String) throws(StorageError) -> SecretBytes {
        if let known = derived.withLock({ $0?.derivation == derivation ? $0?.key : nil }) { return known }
        let key = try KeyEnvelope.keyEncryptionKey(for: secret, derivation: derivation, path: path)
        derived.withLock { $0 = Derived(derivation: derivation, key: key) }
        return key
    }
}
