/// A store's data key, wrapped: the random 32-byte key that seals the pages of one file generation,
/// encrypted with AES-256-GCM under a key-encryption key that comes from the app's passphrase
/// (PBKDF2-HMAC-SHA256 with a random salt) or is the app's raw key.
///
/// The wrap's tag is the key check: under any other passphrase or key it does not authenticate,
/// and opening reports `wrongKey`, never damage. (Damage is caught first, by the envelope's own
/// checksum: see `KeyEnvelope+Coding.swift`.) The derivation's parameters are the wrap's
/// associated data, so none of them can be changed without the wrap failing. Changing the
/// passphrase wraps the same data key again with a new salt and nonce: the sealed data stays valid.
package struct KeyEnvelope: Equatable, Sendable {
    /// How the key-encryption key is made.
    package enum Derivation: Equatable, Sendable {
        /// The app's raw 32-byte key is the key-encryption key.
        case rawKey
        /// PBKDF2-HMAC-SHA256 of the passphrase's UTF-8 bytes with `salt`.
        case pbkdf2SHA256(iterations: UInt32, salt: [UInt8])
    }

    /// The iteration count a new passphrase envelope uses: OWASP's figure for PBKDF2-HMAC-SHA256
    /// (2023), a fraction of a second on one core.
    package static let defaultIterations: UInt32 = 600_000
    /// The salt a new passphrase envelope draws; decoding accepts `saltByteRange`.
    package static let saltByteCount = 16
    package static let saltByteRange = 16...64
    /// The wrapped data key: 32 bytes of ciphertext and the 16-byte tag.
    package static let wrappedKeyByteCount = AES256GCM.keyByteCount + AES256GCM.tagByteCount

    package let derivation: Derivation
    /// The nonce the data key was wrapped with.
    package let nonce: [UInt8]
    /// The data key encrypted under the key-encryption key, then the tag.
    package let wrappedKey: [UInt8]

    init(derivation: Derivation, nonce: [UInt8], wrappedKey: [UInt8]) {
        self.derivation = derivation
        self.nonce = nonce
        self.wrappedKey = wrappedKey
    }

    /// A new random data key and its envelope for `secret`. `iterations` applies to a passphrase.
    package static func create(
        for secret: EncryptionSecret, iterations: UInt32 = defaultIterations
    ) throws(StorageError) -> (envelope: KeyEnvelope, dataKey: SecretBytes) {
        try secret.validate()
        let dataKey = try SecureRandom.secret(AES256GCM.keyByteCount)
        return (try wrapping(dataKey, for: secret, iterations: iterations), dataKey)
    }

    /// An envelope of `dataKey` for `secret`, with a fresh salt and nonce: how a passphrase change
    /// (or a switch between a passphrase and a raw key) keeps the data key.
    package static func wrapping(
        _ dataKey: SecretBytes, for secret: EncryptionSecret, iterations: UInt32 = defaultIterations
    ) throws(StorageError) -> KeyEnvelope {
        try secret.validate()
        guard dataKey.count == AES256GCM.keyByteCount else {
            throw StorageError(.invalidKeyLength(found: dataKey.count, expected: AES256GCM.keyByteCount))
        }
        let derivation: Derivation
        switch secret {
        case .passphrase:
            guard PBKDF2.iterationRange.contains(iterations) else {
                throw StorageError(.encryptionFailed(reason: "a PBKDF2 iteration count of \(iterations) is outside \(PBKDF2.iterationRange.lowerBound)...\(PBKDF2.iterationRange.upperBound)"))
            }
            derivation = .pbkdf2SHA256(iterations: iterations, salt: try SecureRandom.bytes(saltByteCount))
        case .key:
            derivation = .rawKey
        }
        // No path: the derivation was chosen from the secret, so the two cannot mismatch here.
        let keyEncryptionKey = try Self.keyEncryptionKey(for: secret, derivation: derivation, path: "")
        let nonce = try SecureRandom.bytes(AES256GCM.nonceByteCount)
        // The cipher takes an array: this copy of the data key is wiped once sealed.
        var plainKey = dataKey.withUnsafeBytes { Array($0) }
        defer { plainKey.withUnsafeMutableBytes { CryptoBinding.cleanse($0) } }
        let wrapped = try AES256GCM.seal(
            plainKey, key: keyEncryptionKey, nonce: nonce,
            associatedData: Self.parameterBytes(derivation))
        return KeyEnvelope(derivation: derivation, nonce: nonce, wrappedKey: wrapped)
    }

    /// The data key, when `secret` is the passphrase or key this envelope was made for. Throws
    /// `wrongKey` (naming `path`) for any other, `emptyPassphrase` or `invalidKeyLength` for one
    /// that could open no envelope.
    package func open(with secret: EncryptionSecret, path: String) throws(StorageError) -> SecretBytes {
        try secret.validate()
        let keyEncryptionKey = try Self.keyEncryptionKey(for: secret, derivation: derivation, path: path)
        var plainKey: [UInt8]
        do throws(StorageError) {
            plainKey = try AES256GCM.open(
                wrappedKey, key: keyEncryptionKey, nonce: nonce, associatedData: Self.parameterBytes(derivation))
        } catch where error.kind == .authenticationFailed {
            throw StorageError(.wrongKey(path: path))
        }
        defer { plainKey.withUnsafeMutableBytes { CryptoBinding.cleanse($0) } }
        guard plainKey.count == AES256GCM.keyByteCount else {
            throw StorageError(.encryptionFailed(reason: "the unwrapped data key is \(plainKey.count) bytes, not \(AES256GCM.keyByteCount)"))
        }
        return SecretBytes(copying: plainKey)
    }

    /// The same data key in a new envelope for `newSecret`, after `oldSecret` opened this one
    /// (`wrongKey` if it does not).
    package func rewrapped(
        from oldSecret: EncryptionSecret, to newSecret: EncryptionSecret,
        iterations: UInt32 = defaultIterations, path: String
    ) throws(StorageError) -> KeyEnvelope {
        try newSecret.validate()
        let dataKey = try open(with: oldSecret, path: path)
        return try Self.wrapping(dataKey, for: newSecret, iterations: iterations)
    }

    /// The key that wraps the data key: `secret` stretched as `derivation` says, or `wrongKey`
    /// when the secret is of the other kind (a passphrase for a raw-key envelope, or the reverse).
    static func keyEncryptionKey(
        for secret: EncryptionSecret, derivation: Derivation, path: String
    ) throws(StorageError) -> SecretBytes {
        switch (secret, derivation) {
        case (.passphrase(let passphrase), .pbkdf2SHA256(let iterations, let salt)):
            var password = Array(passphrase.utf8)
            defer { password.withUnsafeMutableBytes { CryptoBinding.cleanse($0) } }
            return try PBKDF2.sha256(password: password, salt: salt, iterations: iterations, byteCount: AES256GCM.keyByteCount)
        case (.key(let key), .rawKey):
            return SecretBytes(copying: key)
        case (.passphrase, .rawKey), (.key, .pbkdf2SHA256):
            throw StorageError(.wrongKey(path: path))
        }
    }
}
