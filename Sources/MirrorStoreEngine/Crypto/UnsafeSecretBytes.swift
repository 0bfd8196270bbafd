/// Key material in memory this type owns: allocated once, never resized or copied by Swift, and
/// overwritten with zeros (through the crypto library's cleanse call, which the optimizer may not
/// drop) before it is freed.
///
/// The one raw-memory file of `Crypto/` besides the library bindings. What it cannot guarantee:
/// bytes a caller copies out (`withUnsafeBytes` into an array), the arrays and strings a secret was
/// made from (`init(copying:)`, a passphrase's `String`), copies the crypto library makes inside
/// its own contexts (OpenSSL clears its cipher contexts when freed; CryptoKit keeps its key in
/// memory it zeroes itself), and pages the system swapped out while the key was in them.
package final class SecretBytes: @unchecked Sendable {
    // @unchecked: the memory is written only while `init` runs and freed only in `deinit`, so
    // between them every thread only reads it.
    private let storage: UnsafeMutableRawBufferPointer

    /// The number of bytes.
    package var count: Int { storage.count }

    /// `count` bytes written by `fill`. If `fill` throws, the bytes are zeroed and freed before
    /// the error is passed on.
    package init(count: Int, fill: (UnsafeMutableRawBufferPointer) throws(StorageError) -> Void) throws(StorageError) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 0), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        do {
            try fill(storage)
        } catch {
            CryptoBinding.cleanse(storage)
            storage.deallocate()
            throw error
        }
        self.storage = storage
    }

    /// A copy of `bytes`. The array itself is the caller's and stays as it is.
    package init(copying bytes: [UInt8]) {
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 16)
        storage.copyBytes(from: bytes)
    }

    deinit {
        CryptoBinding.cleanse(storage)
        storage.deallocate()
    }

    /// Lends the bytes to `body`, which must not keep the pointer.
    package func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(storage))
    }

    /// Whether both hold the same bytes, compared in time that depends on the length only.
    package func isEqual(to other: SecretBytes) -> Bool {
        guard count == other.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<count {
            difference |= storage[index] ^ other.storage[index]
        }
        return difference == 0
    }
}
