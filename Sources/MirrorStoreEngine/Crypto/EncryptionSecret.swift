/// What opens a store's key envelope: a passphrase, stretched with PBKDF2-HMAC-SHA256 into the key
/// that wraps the data key, or a raw 32-byte key (one an app keeps in its keychain), which wraps
/// the data key as it is.
///
/// The passphrase is taken as its UTF-8 bytes, exactly: no Unicode normalization, so "é" typed as
/// one scalar and as "e" plus a combining accent are different passphrases. Neither a `String` nor
/// an array the caller holds can be wiped; copies made here are (see `SecretBytes`).
package enum EncryptionSecret: Sendable, CustomStringConvertible, CustomReflectable {
    case passphrase(String)
    case key([UInt8])

    /// Throws `emptyPassphrase` for an empty passphrase and `invalidKeyLength` for a key that is
    /// not 32 bytes.
    package func validate() throws(StorageError) {
        switch self {
        case .passphrase(let passphrase):
            guard !passphrase.isEmpty else { throw StorageError(.emptyPassphrase) }
        case .key(let key):
            guard key.count == AES256GCM.keyByteCount else {
                throw StorageError(.invalidKeyLength(found: key.count, expected: AES256GCM.keyByteCount))
            }
        }
    }

    /// Says which kind of secret it is and never what it is, so that logs and messages that
    /// print one do not leak it.
    package var description: String {
        switch self {
        case .passphrase: "a passphrase"
        case .key(let key): "a \(key.count)-byte key"
        }
    }

    /// No children, so `dump` and debuggers' summaries show the description, not the secret.
    package var customMirror: Mirror {
        Mirror(self, children: [], displayStyle: .enum)
    }
}
