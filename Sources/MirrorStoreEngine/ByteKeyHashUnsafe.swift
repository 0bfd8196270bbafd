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
