#if !canImport(CryptoKit) && !canImport(CLibCrypto)
/// The stand-in for platforms with neither CryptoKit nor OpenSSL's libcrypto (the package links
/// libcrypto on Linux only): every operation throws, so nothing pretends to encrypt.
enum CryptoBinding {
    /// Where the cryptography comes from, for messages.
    static let library = "no cryptography library"

    /// Nothing to load: every operation throws.
    static func prepare() {}

    private static var unavailable: StorageError {
        StorageError(.encryptionFailed(reason: "this platform has neither CryptoKit nor OpenSSL's libcrypto, so MirrorStore cannot encrypt here"))
    }

    static func aes256GCMSeal(
        key: UnsafeRawBufferPointer, nonce: [UInt8], associatedData: [UInt8], plaintext: [UInt8]
    ) throws(StorageError) -> [UInt8] {
        throw unavailable
    }

    static func aes256GCMOpen(
        key: UnsafeRawBufferPointer, nonce: [UInt8], associatedData: [UInt8], ciphertext: ArraySlice<UInt8>, tag: ArraySlice<UInt8>
    ) throws(StorageError) -> [UInt8]? {
        throw unavailable
    }

    /// Decryption under one key, many times: never made here.
    final class KeyedDecryption: Sendable {
        init(key: UnsafeRawBufferPointer) throws(StorageError) {
            throw CryptoBinding.unavailable
        }

        func open(
            nonce: [UInt8], associatedData: [UInt8], ciphertext: ArraySlice<UInt8>, tag: ArraySlice<UInt8>
        ) throws(StorageError) -> [UInt8]? {
            throw CryptoBinding.unavailable
        }

        func open(
            nonce: [UInt8], associatedData: [UInt8], ciphertext: ArraySlice<UInt8>, tag: ArraySlice<UInt8>,
            into output: UnsafeMutableRawBufferPointer
        ) throws(StorageError) -> Bool {
            throw CryptoBinding.unavailable
        }
    }

    static func pbkdf2SHA256(
        password: UnsafeRawBufferPointer, salt: [UInt8], iterations: UInt32, output: UnsafeMutableRawBufferPointer
    ) throws(StorageError) {
        throw unavailable
    }

    static func randomBytes(into output: UnsafeMutableRawBufferPointer) throws(StorageError) {
        throw unavailable
    }

    /// A plain overwrite: with no cipher here, no key is ever derived or used.
    static func cleanse(_ buffer: UnsafeMutableRawBufferPointer) {
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
    }
}
#endif
