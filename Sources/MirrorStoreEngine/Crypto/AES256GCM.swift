import Dispatch

/// AES-256-GCM authenticated encryption with associated data (the AEAD an encrypted store seals
/// its pages with, `EncryptedLog`): a 32-byte key, a 12-byte nonce, a 16-byte tag appended to the ciphertext.
///
/// The cipher is the platform library's (`CryptoBinding`); this type checks sizes and turns a
/// failed tag into `StorageError.Kind.authenticationFailed`, never a trap. A nonce must never be
/// used twice with one key: take them from a `NonceBudget`.
package enum AES256GCM {
    package static let keyByteCount = 32
    package static let nonceByteCount = 12
    package static let tagByteCount = 16

    /// Starts loading the platform's cipher on another thread and returns at once: opening an
    /// encrypted store calls it first, so that the library's one-time setup (about a millisecond
    /// with OpenSSL 3) runs beside the reflection of the models instead of before the first page.
    /// The first seal or open waits for it if it has not finished.
    package static func prepareInBackground() {
        DispatchQueue.global(qos: .userInitiated).async { CryptoBinding.prepare() }
    }

    /// `plaintext` encrypted under `key` and `nonce`, followed by the tag that authenticates it
    /// together with `associatedData` (which is not encrypted and not included).
    package static func seal(
        _ plaintext: [UInt8], key: SecretBytes, nonce: [UInt8], associatedData: [UInt8] = []
    ) throws(StorageError) -> [UInt8] {
        try check(key: key, nonce: nonce)
        return try key.withUnsafeBytes { (keyBytes) throws(StorageError) in
            try CryptoBinding.aes256GCMSeal(key: keyBytes, nonce: nonce, associatedData: associatedData, plaintext: plaintext)
        }
    }

    /// The plaintext of `sealed` (ciphertext then tag, as `seal` returns it). Throws
    /// `authenticationFailed` when the tag does not match the ciphertext, the key, the nonce and
    /// `associatedData`, or when `sealed` is shorter than a tag; no unauthenticated byte is returned.
    package static func open(
        _ sealed: [UInt8], key: SecretBytes, nonce: [UInt8], associatedData: [UInt8] = []
    ) throws(StorageError) -> [UInt8] {
        try open(sealed[...], key: key, nonce: nonce, associatedData: associatedData)
    }

    /// As ``open(_:key:nonce:associatedData:)``, for sealed bytes where they lie in a larger
    /// buffer (a page among those read at once): no copy of them is made first.
    package static func open(
        _ sealed: ArraySlice<UInt8>, key: SecretBytes, nonce: [UInt8], associatedData: [UInt8] = []
    ) throws(StorageError) -> [UInt8] {
        try check(key: key, nonce: nonce)
        guard sealed.count >= tagByteCount else { throw StorageError(.authenticationFailed) }
        let split = sealed.endIndex - tagByteCount
        let opened = try key.withUnsafeBytes { (keyBytes) throws(StorageError) in
            try CryptoBinding.aes256GCMOpen(
                key: keyBytes, nonce: nonce, associatedData: associatedData,
                ciphertext: sealed[..<split], tag: sealed[split...])
        }
        guard let plaintext = opened else { throw StorageError(.authenticationFailed) }
        return plaintext
    }

    /// Opens many messages sealed under one key (an encrypted log's pages), as
    /// ``open(_:key:nonce:associatedData:)`` opens each, with the cipher's key setup done once
    /// and kept, cleared when the opener is freed, rather than done again for every message.
    ///
    /// ```swift
    /// let opener = try AES256GCM.Opener(key: dataKey)
    /// let page = try opener.open(sealed[...], nonce: nonce, associatedData: place)
    /// ```
    package final class Opener: Sendable {
        /// Internal for `open(_:nonce:associatedData:into:)` (AES256GCMUnsafeOpening.swift).
        let decryption: CryptoBinding.KeyedDecryption

        /// Throws `invalidKeyLength` for a key that is not 32 bytes.
        package init(key: SecretBytes) throws(StorageError) {
            guard key.count == keyByteCount else {
                throw StorageError(.invalidKeyLength(found: key.count, expected: keyByteCount))
            }
            decryption = try key.withUnsafeBytes { (keyBytes) throws(StorageError) in try CryptoBinding.KeyedDecryption(key: keyBytes) }
        }

        /// The plaintext of `sealed`, as `AES256GCM.open`
        /// gives it under the opener's key: `authenticationFailed` when the tag does not match,
        /// and no unauthenticated byte returned.
        package func open(_ sealed: ArraySlice<UInt8>, nonce: [UInt8], associatedData: [UInt8] = []) throws(StorageError) -> [UInt8] {
            guard nonce.count == nonceByteCount else {
                throw StorageError(.encryptionFailed(reason: "an AES-256-GCM nonce must be \(nonceByteCount) bytes, not \(nonce.count)"))
            }
            guard sealed.count >= tagByteCount else { throw StorageError(.authenticationFailed) }
            let split = sealed.endIndex - tagByteCount
            guard let plaintext = try decryption.open(
                nonce: nonce, associatedData: associatedData, ciphertext: sealed[..<split], tag: sealed[split...])
            else { throw StorageError(.authenticationFailed) }
            return plaintext
        }
    }

    private static func check(key: SecretBytes, nonce: [UInt8]) throws(StorageError) {
        guard key.count == keyByteCount else {
            throw StorageError(.invalidKeyLength(found: key.count, expected: keyByteCount))
        }
        guard nonce.count == nonceByteCount else {
            throw StorageError(.encryptionFailed(reason: "an AES-256-GCM nonce must be \(nonceByteCount) bytes, not \(nonce.count)"))
        }
    }
}
