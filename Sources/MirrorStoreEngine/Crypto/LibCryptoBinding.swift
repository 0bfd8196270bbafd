// Apple platforms use CryptoKitBinding.swift, which has the same functions.
#if !canImport(CryptoKit) && canImport(CLibCrypto)
import CLibCrypto

/// The OpenSSL libcrypto calls behind `Crypto/` on Linux, and the raw memory they need. Every
/// cipher, MAC and KDF is libcrypto's; this file only passes buffers and checks return codes.
///
/// Lengths are checked by the callers (`AES256GCM`, `PBKDF2`); the `Int32` conversions here are
/// checked again, since libcrypto takes `int` lengths.
enum CryptoBinding {
    /// Where the cryptography comes from, for messages.
    static let library = "OpenSSL libcrypto"

    /// Loads what the first cipher needs (OpenSSL 3 builds its default provider's tables at the
    /// first fetch, once per process), so that a later first use does not wait for it.
    static func prepare() {
        _ = aes256GCM
    }

    /// AES-256-GCM encryption of `plaintext`: the ciphertext followed by the 16-byte tag.
    static func aes256GCMSeal(
        key: UnsafeRawBufferPointer, nonce: [UInt8], associatedData: [UInt8], plaintext: [UInt8]
    ) throws(StorageError) -> [UInt8] {
        guard let textLength = Int32(exactly: plaintext.count), let dataLength = Int32(exactly: associatedData.count) else {
            throw StorageError(.encryptionFailed(reason: "a message or its associated data is longer than libcrypto takes in one call"))
        }
        guard let context = EVP_CIPHER_CTX_new() else { throw failure("EVP_CIPHER_CTX_new") }
        // Freeing the context clears it, the key schedule included (the GCM provider frees it
        // with OPENSSL_clear_free).
        defer { EVP_CIPHER_CTX_free(context) }
        try start(context, encrypting: true, key: key, nonce: nonce)
        try addAssociatedData(associatedData, length: dataLength, to: context, encrypting: true)

        var sealed = [UInt8](repeating: 0, count: plaintext.count + AES256GCM.tagByteCount)
        let finished = sealed.withUnsafeMutableBufferPointer { output -> String? in
            guard let start = output.baseAddress else { return "no output buffer" }
            var written: Int32 = 0
            if textLength > 0 {
                let updated = plaintext.withUnsafeBufferPointer { input in
                    EVP_EncryptUpdate(context, start, &written, input.baseAddress, textLength)
                }
                guard updated == 1, written == textLength else { return "EVP_EncryptUpdate" }
            }
            var finalWritten: Int32 = 0
            guard EVP_EncryptFinal_ex(context, start + Int(written), &finalWritten) == 1, finalWritten == 0 else {
                return "EVP_EncryptFinal_ex"
            }
            let tag = start + plaintext.count
            guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(AES256GCM.tagByteCount), tag) == 1 else {
                return "EVP_CTRL_GCM_GET_TAG"
            }
            return nil
        }
        if let call = finished { throw failure(call) }
        return sealed
    }

    /// AES-256-GCM decryption: the plaintext, or nil when the tag does not authenticate the
    /// ciphertext, the nonce and the associated data under `key`.
    static func aes256GCMOpen(
        key: UnsafeRawBufferPointer, nonce: [UInt8], associatedData: [UInt8], ciphertext: ArraySlice<UInt8>, tag: ArraySlice<UInt8>
    ) throws(StorageError) -> [UInt8]? {
        guard let context = EVP_CIPHER_CTX_new() else { throw failure("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        try start(context, encrypting: false, key: key, nonce: nonce)
        return try decrypt(in: context, associatedData: associatedData, ciphertext: ciphertext, tag: tag)
    }

    /// The decryption of `ciphertext` in `context`, keyed and given its nonce: its associated
    /// data, the text and the tag, then the plaintext or nil when the tag does not authenticate.
    private static func decrypt(
        in context: OpaquePointer, associatedData: [UInt8], ciphertext: ArraySlice<UInt8>, tag: ArraySlice<UInt8>
    ) throws(StorageError) -> [UInt8]? {
        // Not zeroed first: the decryption writes every byte (a page's worth of zeros cost as
        // much as a tenth of its decryption), and a failed call's output is wiped.
        var outcome: Result<Bool, StorageError> = .success(false)
        let plaintext = [UInt8](unsafeUninitializedCapacity: ciphertext.count) { output, initialized in
            outcome = Result { () throws(StorageError) in
                try decrypt(in: context, associatedData: associatedData, ciphertext: ciphertext, tag: tag, into: UnsafeMutableRawBufferPointer(output))
            }
            initialized = output.count
        }
        return try outcome.get() ? plaintext : nil
    }

    /// The decryption of `ciphertext` in `context` into `output` (as many bytes), keyed and
    /// given its nonce: true when the tag authenticates it, else false with `output` wiped, so
    /// that no unauthenticated byte is left there to use.
    private static func decrypt(
        in context: OpaquePointer, associatedData: [UInt8], ciphertext: ArraySlice<UInt8>, tag: ArraySlice<UInt8>,
        into output: UnsafeMutableRawBufferPointer
    ) throws(StorageError) -> Bool {
        guard let textLength = Int32(exactly: ciphertext.count), let dataLength = Int32(exactly: associatedData.count) else {
            throw StorageError(.encryptionFailed(reason: "a message or its associated data is longer than libcrypto takes in one call"))
        }
        guard output.count == ciphertext.count else {
            throw StorageError(.encryptionFailed(reason: "a buffer of \(output.count) bytes cannot take \(ciphertext.count) bytes of plaintext"))
        }
        try addAssociatedData(associatedData, length: dataLength, to: context, encrypting: false)
        if textLength > 0 {
            var written: Int32 = 0
            let updated = ciphertext.withUnsafeBufferPointer { input in
                EVP_DecryptUpdate(context, output.baseAddress?.assumingMemoryBound(to: UInt8.self), &written, input.baseAddress, textLength)
            }
            guard updated == 1, written == textLength else {
                cleanse(output)
                throw failure("EVP_DecryptUpdate")
            }
        }
        // The tag goes in through a `void *`, so it is handed over from a copy of its own.
        var expectedTag = Array(tag)
        let tagSet = expectedTag.withUnsafeMutableBytes { tagBytes in
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagBytes.count), tagBytes.baseAddress)
        }
        guard tagSet == 1 else {
            cleanse(output)
            throw failure("EVP_CTRL_GCM_SET_TAG")
        }
        // The final call compares the tags; it writes nothing for GCM. A scratch byte stands in
        // for the output position, which may be the end of an empty buffer.
        var scratch: UInt8 = 0
        var finalWritten: Int32 = 0
        guard EVP_DecryptFinal_ex(context, &scratch, &finalWritten) == 1 else {
            // A failed tag says nothing about the error queue's state, so it is emptied here
            // rather than left to confuse a later failure's message.
            ERR_clear_error()
            // What came out is unauthenticated: it must not be used, and is wiped.
            cleanse(output)
            return false
        }
        return true
    }

    /// AES-256-GCM decryption under one key, many times (an encrypted log's pages): contexts
    /// keyed once and reused, each message only setting its nonce, so that a page does not make,
    /// key (the key schedule) and free a context of its own. A context is taken by one call at a
    /// time; a free one is kept for the next, and one more is copied from the keyed template
    /// when all are taken.
    final class KeyedDecryption: Sendable {
        /// A context of this key, used by one call at a time.
        private struct Context: @unchecked Sendable {
            // @unchecked: a context is used only by the call that took it from `free`.
            let pointer: OpaquePointer
        }

        /// Keyed, never used to decrypt: what a new context is copied from.
        private let template: Context
        private let free: Lock<[Context]>

        init(key: UnsafeRawBufferPointer) throws(StorageError) {
            guard let context = EVP_CIPHER_CTX_new() else { throw CryptoBinding.failure("EVP_CIPHER_CTX_new") }
            let keyed = EVP_DecryptInit_ex(context, CryptoBinding.aes256GCM, nil, key.baseAddress?.assumingMemoryBound(to: UInt8.self), nil)
            guard keyed == 1 else {
                EVP_CIPHER_CTX_free(context)
                throw CryptoBinding.failure("EVP_DecryptInit_ex")
            }
            template = Context(pointer: context)
            free = Lock([])
        }

        deinit {
            // Freeing a context clears it, its key schedule included.
            free.withLock { $0.forEach { EVP_CIPHER_CTX_free($0.pointer) } }
            EVP_CIPHER_CTX_free(template.pointer)
        }

        /// As `aes256GCMOpen` under this key: the plaintext, or nil when the tag does not authenticate.
        func open(
            nonce: [UInt8], associatedData: [UInt8], ciphertext: ArraySlice<UInt8>, tag: ArraySlice<UInt8>
        ) throws(StorageError) -> [UInt8]? {
            try withContext(restartedAt: nonce) { context throws(StorageError) in
                try CryptoBinding.decrypt(in: context, associatedData: associatedData, ciphertext: ciphertext, tag: tag)
            }
        }

        /// As `open`, the plaintext written to `output` (as many bytes as `ciphertext`): true
        /// when the tag authenticates it, else false with `output` wiped.
        func open(
            nonce: [UInt8], associatedData: [UInt8], ciphertext: ArraySlice<UInt8>, tag: ArraySlice<UInt8>,
            into output: UnsafeMutableRawBufferPointer
        ) throws(StorageError) -> Bool {
            try withContext(restartedAt: nonce) { context throws(StorageError) in
                try CryptoBinding.decrypt(in: context, associatedData: associatedData, ciphertext: ciphertext, tag: tag, into: output)
            }
        }

        /// Runs `body` with a pooled context keyed for this key, its message restarted at `nonce`
        /// (the key stays; a failed message's state goes), and returns the context to the pool.
        private func withContext<Result>(
            restartedAt nonce: [UInt8], _ body: (OpaquePointer) throws(StorageError) -> Result
        ) throws(StorageError) -> Result {
            guard nonce.count == AES256GCM.nonceByteCount else {
                throw StorageError(.encryptionFailed(reason: "a reused AES-256-GCM context takes \(AES256GCM.nonceByteCount)-byte nonces"))
            }
            let context = try take()
            defer { free.withLock { $0.append(context) } }
            let started = nonce.withUnsafeBufferPointer { EVP_DecryptInit_ex(context.pointer, nil, nil, nil, $0.baseAddress) }
            guard started == 1 else { throw CryptoBinding.failure("EVP_DecryptInit_ex") }
            return try body(context.pointer)
        }

        private func take() throws(StorageError) -> Context {
            if let context = free.withLock({ $0.popLast() }) { return context }
            guard let context = EVP_CIPHER_CTX_new() else { throw CryptoBinding.failure("EVP_CIPHER_CTX_new") }
            guard EVP_CIPHER_CTX_copy(context, template.pointer) == 1 else {
                EVP_CIPHER_CTX_free(context)
                throw CryptoBinding.failure("EVP_CIPHER_CTX_copy")
            }
            return Context(pointer: context)
        }
    }

    /// PBKDF2 with HMAC-SHA-256, filling `output`.
    static func pbkdf2SHA256(
        password: UnsafeRawBufferPointer, salt: [UInt8], iterations: UInt32, output: UnsafeMutableRawBufferPointer
    ) throws(StorageError) {
        guard let passwordLength = Int32(exactly: password.count), let saltLength = Int32(exactly: salt.count),
              let rounds = Int32(exactly: iterations), let outputLength = Int32(exactly: output.count) else {
            throw StorageError(.encryptionFailed(reason: "a PBKDF2 input is longer, or its iteration count larger, than libcrypto takes"))
        }
        guard let passwordStart = password.baseAddress, let outputStart = output.baseAddress else {
            throw StorageError(.encryptionFailed(reason: "PBKDF2 was given an empty password or asked for no bytes"))
        }
        let derived = salt.withUnsafeBufferPointer { saltBytes in
            PKCS5_PBKDF2_HMAC(
                passwordStart.assumingMemoryBound(to: CChar.self), passwordLength,
                saltBytes.baseAddress, saltLength, rounds, EVP_sha256(),
                outputLength, outputStart.assumingMemoryBound(to: UInt8.self))
        }
        guard derived == 1 else { throw failure("PKCS5_PBKDF2_HMAC") }
    }

    /// Fills `output` from libcrypto's CSPRNG (seeded by the kernel's getrandom).
    static func randomBytes(into output: UnsafeMutableRawBufferPointer) throws(StorageError) {
        guard let start = output.baseAddress, output.count > 0 else { return }
        guard let length = Int32(exactly: output.count) else {
            throw StorageError(.encryptionFailed(reason: "\(output.count) random bytes are more than RAND_bytes gives in one call"))
        }
        guard RAND_bytes(start.assumingMemoryBound(to: UInt8.self), length) == 1 else { throw failure("RAND_bytes") }
    }

    /// Overwrites `buffer` with zeros in a way the optimizer does not remove.
    static func cleanse(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let start = buffer.baseAddress, buffer.count > 0 else { return }
        OPENSSL_cleanse(start, buffer.count)
    }

    /// AES-256-GCM fetched from the default provider once: OpenSSL 3 fetches the cipher again at
    /// every initialisation given `EVP_aes_256_gcm()`, which cost as much as the rest of a page's
    /// setup. A fetched cipher is immutable and shared by any number of threads.
    nonisolated(unsafe) private static let aes256GCM: OpaquePointer? = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil)
        ?? EVP_aes_256_gcm()

    /// Sets up `context` for AES-256-GCM with a 12-byte nonce.
    private static func start(
        _ context: OpaquePointer, encrypting: Bool, key: UnsafeRawBufferPointer, nonce: [UInt8]
    ) throws(StorageError) {
        let initialize = encrypting ? EVP_EncryptInit_ex : EVP_DecryptInit_ex
        let keyBytes = key.baseAddress?.assumingMemoryBound(to: UInt8.self)
        // GCM's default nonce length is 12 bytes: the cipher, key and nonce go in with one call.
        // Another length needs the cipher set first, then the length, then the key and nonce.
        guard nonce.count != AES256GCM.nonceByteCount else {
            let keyed = nonce.withUnsafeBufferPointer { nonceBytes in
                initialize(context, aes256GCM, nil, keyBytes, nonceBytes.baseAddress)
            }
            guard keyed == 1 else { throw failure(encrypting ? "EVP_EncryptInit_ex" : "EVP_DecryptInit_ex") }
            return
        }
        guard initialize(context, aes256GCM, nil, nil, nil) == 1 else {
            throw failure(encrypting ? "EVP_EncryptInit_ex" : "EVP_DecryptInit_ex")
        }
        guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(nonce.count), nil) == 1 else {
            throw failure("EVP_CTRL_GCM_SET_IVLEN")
        }
        let keyed = nonce.withUnsafeBufferPointer { nonceBytes in
            initialize(context, nil, nil, keyBytes, nonceBytes.baseAddress)
        }
        guard keyed == 1 else { throw failure(encrypting ? "EVP_EncryptInit_ex" : "EVP_DecryptInit_ex") }
    }

    /// Authenticates `associatedData` without encrypting it (an update with no output).
    private static func addAssociatedData(
        _ associatedData: [UInt8], length: Int32, to context: OpaquePointer, encrypting: Bool
    ) throws(StorageError) {
        guard length > 0 else { return }
        var written: Int32 = 0
        let added = associatedData.withUnsafeBufferPointer { bytes in
            encrypting
                ? EVP_EncryptUpdate(context, nil, &written, bytes.baseAddress, length)
                : EVP_DecryptUpdate(context, nil, &written, bytes.baseAddress, length)
        }
        guard added == 1 else { throw failure(encrypting ? "EVP_EncryptUpdate" : "EVP_DecryptUpdate") }
    }

    /// A failed libcrypto call, with the first reason on the thread's error queue (which is
    /// emptied, so that a later failure does not report this one's reason).
    private static func failure(_ call: String) -> StorageError {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return StorageError(.encryptionFailed(reason: "\(library)'s \(call) failed")) }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        let reason = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return StorageError(.encryptionFailed(reason: "\(library)'s \(call) failed (\(reason))"))
    }
}
#endif
