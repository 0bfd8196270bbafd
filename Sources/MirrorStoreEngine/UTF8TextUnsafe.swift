/// Text read from a file's bytes: the string they spell when they are valid UTF-8, or nil —
/// never a string with replacement characters standing in for damaged bytes.
package enum UTF8Text {
    /// ASCII is valid UTF-8 and by far the common case: bytes seen to be ASCII here become a
    /// string without the standard library checking them a second time; every other case is
    /// checked by the validating initializer. Short ASCII text becomes a small string
    /// (``SmallASCII``) without a call into the standard library.
    package static func string(_ utf8: UnsafeBufferPointer<UInt8>) -> String? {
        // The check only where it is used: longer text never needs it.
        string(utf8, smallStrings: utf8.count <= SmallASCII.capacity ? smallStrings : nil)
    }

    /// Proof that ``SmallASCII`` makes small strings as the standard library does
    /// (``SmallASCII/isConfirmed``); only ``smallStrings`` makes one. A reader of many strings
    /// takes it once and passes it to ``string(_:smallStrings:)``: each read of the checked
    /// global was a call into the runtime's once-only initialisation.
    package struct SmallStrings: Sendable {
        fileprivate init() {}
    }

    /// The proof, or nil where small strings are made by the standard library's initializers.
    package static var smallStrings: SmallStrings? {
        SmallASCII.isConfirmed ? SmallStrings() : nil
    }

    /// The two words of the small string of `utf8` (``SmallASCII``) when it is at most 15 bytes
    /// of ASCII, or nil (then ``string(_:smallStrings:)`` makes it). A reader that stores them
    /// where a `String` lies makes the string without the retain that `unsafeBitCast` of the
    /// words to a `String` costs.
    package static func smallStringBits(_ utf8: UnsafeBufferPointer<UInt8>, _ smallStrings: SmallStrings) -> (UInt64, UInt64)? {
        guard utf8.count <= SmallASCII.capacity else { return nil }
        return SmallASCII.bits(utf8)
    }

    /// The two words of the empty string, the standard library's own (the proof saw that
    /// ``SmallASCII`` makes them for 0 bytes): a `String` holding them owns nothing.
    package static func emptyStringBits(_ smallStrings: SmallStrings) -> (UInt64, UInt64) {
        (0, UInt64(0xE0) << 56)
    }

    /// ``string(_:)`` with the small-string check already made: `smallStrings` is
    /// ``smallStrings`` taken earlier.
    package static func string(_ utf8: UnsafeBufferPointer<UInt8>, smallStrings: SmallStrings?) -> String? {
        if utf8.count <= SmallASCII.capacity, smallStrings != nil {
            if let small = SmallASCII.string(utf8) { return small }
            return String(validating: utf8, as: UTF8.self)
        }
        if isASCII(UnsafeRawBufferPointer(utf8)) {
            if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
                // Sound: every byte was just seen to be below 0x80, so the bytes are ASCII, which is
                // valid UTF-8 — what `unchecked` and `isKnownASCII` ask the caller to guarantee.
                return String(copying: UTF8Span(unchecked: utf8.span, isKnownASCII: true))
            }
            return String(decoding: utf8, as: UTF8.self)
        }
        return String(validating: utf8, as: UTF8.self)
    }

    /// Whether every byte is below 0x80 (ASCII, which is valid UTF-8). Read where the bytes lie
    /// in words and 16-byte pieces, the last of which overlaps those before it, so that the check
    /// never ends byte by byte: a loop over single bytes, which the compiler vectorises, ended in
    /// 4-byte and single-byte steps over up to 31 bytes. Up to 32 bytes (most keys, names) the
    /// check is two loads, inlined into the caller.
    @inline(__always)
    package static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        let highBits: UInt64 = 0x8080_8080_8080_8080
        if count < 8 {
            var high: UInt8 = 0
            var offset = 0
            while offset < count {
                high |= base.load(fromByteOffset: offset, as: UInt8.self)
                offset += 1
            }
            return high < 0x80
        }
        if count <= 16 {
            // The first and the last eight bytes, which overlap below 16.
            let words = base.loadUnaligned(as: UInt64.self) | base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            return words & highBits == 0
        }
        if count <= 32 {
            // The first and the last sixteen, which overlap below 32.
            let pieces = base.loadUnaligned(as: SIMD16<UInt8>.self) | base.loadUnaligned(fromByteOffset: count - 16, as: SIMD16<UInt8>.self)
            let words = unsafeBitCast(pieces, to: (UInt64, UInt64).self)
            return (words.0 | words.1) & highBits == 0
        }
        return isLongASCII(base, count: count)
    }

    /// ``isASCII(_:)`` of more than 32 bytes: two 16-byte pieces at a time, then the last one or
    /// two, overlapping the bytes before them.
    private static func isLongASCII(_ base: UnsafeRawPointer, count: Int) -> Bool {
        var first = base.loadUnaligned(as: SIMD16<UInt8>.self)
        var second = base.loadUnaligned(fromByteOffset: count - 16, as: SIMD16<UInt8>.self)
        var offset = 16
        while offset + 32 <= count {
            first |= base.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt8>.self)
            second |= base.loadUnaligned(fromByteOffset: offset + 16, as: SIMD16<UInt8>.self)
            offset += 32
        }
        // Fewer than 32 bytes from `offset` on; the last 16 are in `second` already.
        if count - offset > 16 { first |= base.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt8>.self) }
        let words = unsafeBitCast(first | second, to: (UInt64, UInt64).self)
        return (words.0 | words.1) & 0x8080_8080_8080_8080 == 0
    }
}

/// Strings of at most 15 ASCII bytes made from two words, the way the standard library stores
/// them on 64-bit platforms: the bytes in order from the first word's lowest byte, and in the
/// second word's top byte 0xE0 (immortal, ASCII, small) plus the count. Reading a record's short
/// strings (names, cities, codes) through the standard library's initializers cost more than the
/// rest of the value's read.
///
/// Used only once ``isConfirmed``: the standard library's own strings of every length from 0 to
/// 15 were seen to have exactly the bits this code would make for the same bytes, so a string
/// made here is one the standard library makes; on any other representation (another platform,
/// a future runtime) every string goes through the standard library's initializers.
enum SmallASCII {
    static let capacity = 15

    /// Whether the standard library's small strings are laid out as ``bits(_:)`` makes them,
    /// checked once per process against strings it made itself, for every count, with bytes that
    /// set every bit an ASCII byte can have.
    static let isConfirmed: Bool = {
        #if _pointerBitWidth(_64) && _endian(little)
        guard MemoryLayout<String>.size == 16 else { return false }
        let sample: [UInt8] = Array("\u{7F}~ azAZ09_\u{1}\u{40}\u{2A}\u{55}\u{0}".utf8)
        for count in 0...capacity {
            let prefix = Array(sample.prefix(count))
            let made = String(decoding: prefix, as: UTF8.self)
            let stored = withUnsafeBytes(of: made) { ($0.load(as: UInt64.self), $0.load(fromByteOffset: 8, as: UInt64.self)) }
            guard let expected = prefix.withUnsafeBufferPointer({ bits($0) }), stored == expected else { return false }
        }
        return true
        #else
        return false
        #endif
    }()

    /// The small string of `utf8` (at most ``capacity`` bytes), or nil when a byte is not ASCII.
    @inline(__always)
    static func string(_ utf8: UnsafeBufferPointer<UInt8>) -> String? {
        #if _pointerBitWidth(_64) && _endian(little)
        guard let words = bits(utf8) else { return nil }
        return unsafeBitCast(words, to: String.self)
        #else
        return nil
        #endif
    }

    /// The two words of the small string of `utf8`, or nil when a byte is not ASCII. Loads each
    /// byte once at most, never past the buffer: words and half words that overlap where the
    /// count is not a multiple of their size (the overlapping bytes are the same bytes).
    @inline(__always)
    static func bits(_ utf8: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64)? {
        let count = utf8.count
        var low: UInt64 = 0
        var high: UInt64 = 0
        if let start = utf8.baseAddress, count > 0 {
            let bytes = UnsafeRawPointer(start)
            switch count {
            case 8...:
                low = bytes.loadUnaligned(as: UInt64.self).littleEndian
                if count > 8 {
                    // The last 8 bytes, moved down past those `low` holds.
                    let tail = bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self).littleEndian
                    high = tail >> UInt64(8 * (16 - count))
                }
            case 4...:
                let first = UInt64(bytes.loadUnaligned(as: UInt32.self).littleEndian)
                let last = UInt64(bytes.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self).littleEndian)
                low = first | last << UInt64(8 * (count - 4))
            default:
                let first = UInt64(start[0])
                let middle = UInt64(start[count / 2])
                let last = UInt64(start[count - 1])
                low = first | middle << UInt64(8 * (count / 2)) | last << UInt64(8 * (count - 1))
            }
        }
        guard (low | high) & 0x8080_8080_8080_8080 == 0 else { return nil }
        return (low, high | UInt64(0xE0 | count) << 56)
    }
}
