extension AES256GCM.Opener {
    /// As ``open(_:nonce:associatedData:)``, the plaintext written to `output`, which holds
    /// exactly as many bytes as `sealed` less its tag: for pages decrypted where a larger read
    /// wants them, with no array of their own. Throws `authenticationFailed` when the tag does not
    /// match, with `output` wiped: no unauthenticated byte is left there.
    ///
    /// ```swift
    /// try opener.open(sealed[...], nonce: nonce, associatedData: place, into: destination)
    /// ```
    func open(
        _ sealed: ArraySlice<UInt8>, nonce: [UInt8], associatedData: [UInt8], into output: UnsafeMutableRawBufferPointer
    ) throws(StorageError) {
        guard nonce.count == AES256GCM.nonceByteCount else {
            throw StorageError(.encryptionFailed(reason: "an AES-256-GCM nonce must be \(AES256GCM.nonceByteCount) bytes, not \(nonce.count)"))
        }
        guard sealed.count >= AES256GCM.tagByteCount else { throw StorageError(.authenticationFailed) }
        let split = sealed.endIndex - AES256GCM.tagByteCount
        guard try decryption.open(nonce: nonce, associatedData: associatedData, ciphertext: sealed[..<split], tag: sealed[split...], into: output)
        else { throw StorageError(.authenticationFailed) }
    }
}
