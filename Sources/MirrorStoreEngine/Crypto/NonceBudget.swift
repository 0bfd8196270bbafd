/// Random 96-bit nonces for one key, counted against the limit NIST SP 800-38D (§8.3) sets for
/// random nonces: at most 2^32 encryptions under one key, which keeps the chance that any two
/// nonces collide (and GCM's confidentiality and authenticity with them) negligible.
///
/// The owner keeps one budget per data key, under its own lock, and carries `used` across opens
/// (or starts a new data key); when the budget is spent it must rotate the key. Random nonces need
/// no state in the file, which matters here: the store truncates a torn tail and appends at the
/// same offset again, sometimes with the same sequence number, so a nonce derived from either
/// would repeat.
package struct NonceBudget: Equatable, Sendable {
    /// 2^32: the most encryptions NIST SP 800-38D allows one key with random 96-bit nonces.
    package static let randomNonceLimit: UInt64 = 1 << 32

    /// The encryptions this key may make; at most `randomNonceLimit`.
    package let limit: UInt64
    /// The encryptions made under this key so far (nonces handed out).
    package private(set) var used: UInt64

    /// A budget for a key that has already sealed `used` times. `limit` (for tests) is capped at
    /// `randomNonceLimit`; a `used` above it, as a damaged count might say, leaves nothing.
    package init(used: UInt64 = 0, limit: UInt64 = NonceBudget.randomNonceLimit) {
        self.used = used
        self.limit = min(limit, Self.randomNonceLimit)
    }

    /// The encryptions left before the key must be rotated.
    package var remaining: UInt64 { used >= limit ? 0 : limit - used }

    /// Whether the key may seal no more.
    package var isExhausted: Bool { used >= limit }

    /// A fresh random nonce, counted against the budget. Throws `nonceLimitReached` when the
    /// budget is spent, and a random-generator failure as it is; neither counts.
    package mutating func nextNonce() throws(StorageError) -> [UInt8] {
        guard !isExhausted else { throw StorageError(.nonceLimitReached(limit: limit)) }
        let nonce = try SecureRandom.bytes(AES256GCM.nonceByteCount)
        used += 1
        return nonce
    }
}
