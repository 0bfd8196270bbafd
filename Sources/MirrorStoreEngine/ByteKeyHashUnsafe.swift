#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ByteKeyMap {
    /// ``hash(_:)`` of contiguous bytes: each full word loaded whole (unaligned, little-endian, so
    /// it equals the word the byte loop gathers), where the loop shifted in one byte at a time.
    /// The keys' bytes lie in arrays, so this is the hash of every key but a string's view.
    static func hash(contiguous key: UnsafeBufferPointer<UInt8>, seed: UInt64) -> UInt64 {
        let raw = UnsafeRawBufferPointer(key)
        var state = seed
        var position = 0
        while position &+ 8 <= raw.count {
            state = mix(state &+ UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: position, as: UInt64.self)))
            position &+= 8
        }
        var word: UInt64 = 0
        var filled: UInt64 = 0
        while position < raw.count {
            word |= UInt64(raw[position]) << (filled &* 8)
            filled &+= 1
            position &+= 1
        }
        return mix(state &+ word &+ (UInt64(truncatingIfNeeded: key.count) << 56 | filled))
    }
}

extension ByteKeyMap {
    /// Whether the bytes of `bytes` in `range` (a range within it) are `wanted`: the lengths
    /// first, then the first eight bytes as one word where both have them (keys that differ
    /// mostly differ there), then the rest with `memcmp`.
    @inline(__always)
    static func bytes(_ bytes: [UInt8], in range: Range<Int>, equal wanted: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = range.count
        guard count == wanted.count else { return false }
        guard count > 0, let right = wanted.baseAddress else { return true }
        return bytes.withUnsafeBufferPointer { all -> Bool in
            guard let base = all.baseAddress, range.lowerBound >= 0, range.upperBound <= all.count else { return false }
            let left = UnsafeRawPointer(base + range.lowerBound)
            let other = UnsafeRawPointer(right)
            if count >= 8 {
                guard left.loadUnaligned(as: UInt64.self) == other.loadUnaligned(as: UInt64.self) else { return false }
                return count == 8 || memcmp(left + 8, other + 8, count - 8) == 0
            }
            return memcmp(left, other, count) == 0
        }
    }
}
