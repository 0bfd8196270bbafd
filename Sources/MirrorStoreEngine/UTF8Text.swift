/// Text read from a file's bytes: the string they spell when they are valid UTF-8, or nil —
/// never a string with replacement characters standing in for damaged bytes.
package enum UTF8Text {
    /// ASCII is valid UTF-8 and by far the common case; `String(decoding:)` is much faster than
    /// the generic validating initializer, which keeps every other case.
    package static func string(_ utf8: UnsafeBufferPointer<UInt8>) -> String? {
        // Every byte's high bit gathered in one loop with no exit, which the compiler vectorises.
        var highBits: UInt8 = 0
        for byte in utf8 { highBits |= byte }
        if highBits < 0x80 { return String(decoding: utf8, as: UTF8.self) }
        return String(validating: utf8, as: UTF8.self)
    }
}
