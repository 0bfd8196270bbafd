/// Text read from a file's bytes: the string they spell when they are valid UTF-8, or nil —
/// never a string with replacement characters standing in for damaged bytes.
package enum UTF8Text {
    /// ASCII is valid UTF-8 and by far the common case: bytes seen to be ASCII here become a
    /// string without the standard library checking them a second time; every other case is
    /// checked by the validating initializer.
    package static func string(_ utf8: UnsafeBufferPointer<UInt8>) -> String? {
        // Every byte's high bit gathered in one loop with no exit, which the compiler vectorises.
        var highBits: UInt8 = 0
        for byte in utf8 { highBits |= byte }
        if highBits < 0x80 {
            if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
                // Sound: every byte was just seen to be below 0x80, so the bytes are ASCII, which is
                // valid UTF-8 — what `unchecked` and `isKnownASCII` ask the caller to guarantee.
                return String(copying: UTF8Span(unchecked: utf8.span, isKnownASCII: true))
            }
            return String(decoding: utf8, as: UTF8.self)
        }
        return String(validating: utf8, as: UTF8.self)
    }
}
