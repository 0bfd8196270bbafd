#if canImport(CryptoKit)
import CommonCrypto
import CryptoKit
import Darwin
import Foundation
import Security

/// The Apple calls behind `Crypto/` on Apple platforms, and the raw memory they need: CryptoKit
/// for AES-256-GCM, CommonCrypto for PBKDF2 (CryptoKit has none), the Security framework's CSPRNG.
/// Every cipher, MAC and KDF is Apple's; this file only passes buffers and checks results.
/// `LibCryptoBinding.swift` has the same functions for Linux.
enum CryptoBinding {
    /// Where the cryptography comes from, for messages.
    static let library = "CryptoKit"

    /// Nothing to load ahead: CryptoKit needs no setup before its first use.
    static func prepare() {}

    /// AES-256-GCM encryption of `plaintext`: the ciphertext followed by the 16-byte tag.
    static func aes256GCMSeal(
        key: UnsafeRawBufferPointer, nonce: [UInt8], associatedData: [UInt8], plaintext: [UInt8]
    ) throws(StorageError) -> [UInt8] {
        do {
            // CryptoKit copies the key into memory of its own, which it zeroes when released.
            let box = try AES.GCM.seal(
                plaintext, using: SymmetricKey(data: key), nonce: AES.GCM.Nonce(data: nonce), authenticating: associatedData)
            return Array(box.ciphertext) + Array(box.tag)
        } catch {
            throw StorageError(.encryptionFailed(reason: "\(library)'s AES.GCM.seal failed (\(error))"))
        }
    }

    /// AES-256-GCM decryption: the plaintext, or nil when the tag does not authenticate the
    /// ciphertext, the nonce and the associated data under `key`.
    static func aes256GCMOpen(
        key: UnsafeRawBufferPointer, nonce: [UInt8], associatedData: [UInt8], ciphertext: ArraySlice<UInt8>, tag: ArraySlice<UInt8>
    ) throws(StorageError) -> [UInt8]? {
        let box: AES.GCM.SealedBox
        do {
            box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: Array(ciphertext), tag: Array(tag))
        } catch {
            throw StorageError(.encryptionFailed(reason: "\(library)'s AES.GCM.SealedBox refused its parts (\(error))"))
        }
        do {
            return Array(try AES.GCM.open(box, using: SymmetricKey(data: key), authenticating: associatedData))
        } catch CryptoKitError.authenticationFailure {
            return nil
        } catch {
            throw StorageError(.encryptionFailed(reason: "\(library)'s AES.GCM.open failed (\(error))"))
        }
    }

    /// AES-256-GCM decryption under one key, many times, as `LibCryptoBinding.swift` has it:
    /// CryptoKit keeps no context to reuse, so the key is made once and each call opens as
    /// `aes256GCMOpen` does.
    final class KeyedDecryption: Sendable {
        // CryptoKit copies the key into memory of its own, which it zeroes when released.
        private let key: SymmetricKey

        init(key: UnsafeRawBufferPointer) throws(StorageError) {
            self.key = SymmetricKey(data: key)
        }

        /// As `aes256GCMOpen` under this key: the plaintext, or nil when the tag does not authenticate.
        func open(
            nonce: [UInt8], associatedData: [UInt8], ciphertext: ArraySlice<UInt8>, tag: ArraySlice<UInt8>
        ) throws(StorageError) -> [UInt8]? {
            let box: AES.GCM.SealedBox
            do {
                box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: Array(ciphertext), tag: Array(tag))
            } catch {
                throw StorageError(.encryptionFailed(reason: "\(library)'s AES.GCM.SealedBox refused its parts (\(error))"))
            }
            do {
                return Array(try AES.GCM.open(box, using: key, authenticating: associatedData))
            } catch CryptoKitError.authenticationFailure {
                return nil
            } catch {
                throw StorageError(.encryptionFailed(reason: "\(library)'s AES.GCM.open failed (\(error))"))
            }
        }

        /// As `open`, the plaintext written to `output` (as many bytes as `ciphertext`): true
        /// when the tag authenticates it, else false and `output` untouched. CryptoKit gives the
        /// plaintext only once authenticated, in memory of its own: it is copied into `output`.
        func open(
            nonce: [UInt8], associatedData: [UInt8], ciphertext: ArraySlice<UInt8>, tag: ArraySlice<UInt8>,
            into output: UnsafeMutableRawBufferPointer
        ) throws(StorageError) -> Bool {
            guard output.count == ciphertext.count else {
                throw StorageError(.encryptionFailed(reason: "a buffer of \(output.count) bytes cannot take \(ciphertext.count) bytes of plaintext"))
            }
            guard let plaintext = try open(nonce: nonce, associatedData: associatedData, ciphertext: ciphertext, tag: tag) else { return false }
            plaintext.withUnsafeBytes { output.copyMemory(from: $0) }
            return true
        }
    }

    /// PBKDF2 with HMAC-SHA-256, filling `output` (CommonCrypto's CCKeyDerivationPBKDF).
    static func pbkdf2SHA256(
        password: UnsafeRawBufferPointer, salt: [UInt8], iterations: UInt32, output: UnsafeMutableRawBufferPointer
    ) throws(StorageError) {
        guard let passwordStart = password.baseAddress, let outputStart = output.baseAddress else {
            throw StorageError(.encryptionFailed(reason: "PBKDF2 was given an empty password or asked for no bytes"))
        }
        let status = salt.withUnsafeBufferPointer { saltBytes in
            CCKeyDerivationPBKDF(
                CCPBKDFAlgorithm(kCCPBKDF2),
                passwordStart.assumingMemoryBound(to: CChar.self), password.count,
                saltBytes.baseAddress, saltBytes.count,
                CCPseudoRandomAlgorithm(kCCPRFHmacAlgSHA256), iterations,
                outputStart.assumingMemoryBound(to: UInt8.self), output.count)
        }
        guard status == Int32(kCCSuccess) else {
            throw StorageError(.encryptionFailed(reason: "CommonCrypto's CCKeyDerivationPBKDF failed (status \(status))"))
        }
    }

    /// Fills `output` from the system CSPRNG.
    static func randomBytes(into output: UnsafeMutableRawBufferPointer) throws(StorageError) {
        guard let start = output.baseAddress, output.count > 0 else { return }
        let status = SecRandomCopyBytes(kSecRandomDefault, output.count, start)
        guard status == errSecSuccess else {
            throw StorageError(.encryptionFailed(reason: "SecRandomCopyBytes failed (status \(status))"))
        }
    }

    /// Overwrites `buffer` with zeros in a way the optimizer does not remove (C11's memset_s).
    static func cleanse(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let start = buffer.baseAddress, buffer.count > 0 else { return }
        _ = memset_s(start, buffer.count, 0, buffer.count)
    }
}
#endif
