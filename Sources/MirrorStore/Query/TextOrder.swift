/// How strings become index keys, and the ranges of keys a string condition reads.
///
/// Swift's `String` compares canonically equivalent strings as equal (`"É"` and `"E\u{301}"`)
/// and orders strings by the Unicode scalars of their NFC form (`"E\u{301}lodie"` after `"M"`).
/// UTF-8 bytes order as their scalars do, so the UTF-8 of a string's NFC form is a key whose
/// plain byte order is that order, and whose byte equality is canonical equivalence. The engine
/// compares string keys by their bytes; this is where they become NFC.
///
/// The standard library departs from NFC order only for pairs that are prefixes of one another,
/// in NFC or in UTF-8 (`"E\u{301}"` and `"Éx"`): it then decides by UTF-8 length, which leaves
/// some such pairs neither equal nor ordered either way (`TextOrderTests` checks this against
/// it). No sorted index can follow that, so the planner re-tests string comparisons it reads
/// from an index on the records, with Swift's own operators, over a range widened to hold those
/// pairs (``comparisonBounds(of:)``).
enum TextOrder {
    /// `text` in NFC; ASCII text, which is always NFC, as it is.
    static func normalized(_ text: String) -> String {
        if isASCII(text) { return text }
        return String(decoding: text._nfcCodeUnits, as: UTF8.self)
    }

    /// Whether every byte of `text` is ASCII: tested on its contiguous UTF-8, since iterating the
    /// `UTF8View` costs several times more for each string an index keys, and on the union of its
    /// bytes, a loop with no early exit that the compiler runs many bytes at a time.
    static func isASCII(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { bytes in
            var union: UInt8 = 0
            for byte in bytes { union |= byte }
            return union < 0x80
        } ?? text.utf8.allSatisfy { $0 < 0x80 }
    }

    /// The least string after every string that starts with the scalars of `prefix`, or `nil`
    /// when none is (every scalar of `prefix` is U+10FFFF): the exclusive upper bound of a
    /// prefix's range of keys. Not normalized: the engine compares it by its bytes only.
    static func end(ofPrefix prefix: String) -> String? {
        // ASCII: the last byte's successor in its place (U+0080 after U+007F), without lists of scalars.
        if isASCII(prefix), let last = prefix.utf8.last {
            var bytes = Array(prefix.utf8.dropLast())
            if last < 0x7F { bytes.append(last + 1) } else { bytes += [0xC2, 0x80] }
            return String(decoding: bytes, as: UTF8.self)
        }
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            // The scalar after the last one; surrogate code points are not scalars.
            let next = last.value == 0xD7FF ? 0xE000 : last.value + 1
            guard let successor = Unicode.Scalar(next) else { continue }
            scalars.append(successor)
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars)
            return String(view)
        }
        return nil
    }

    /// Keys that hold every string Swift's `<` may place on the other side of `text` from where
    /// NFC order places it: none is less than `lower`, and each is less than `upper` (nil: no
    /// bound). Such a string is a prefix of `text`, in NFC or in UTF-8, or extends it: then its
    /// NFC form starts with that of `text` up to its last starter (a scalar that combining marks
    /// cannot move past), since marks that follow may combine with that starter into one that
    /// sorts before it (`"Ω\u{301}"` is `"Ώ"`). ASCII only combines into scalars above ASCII.
    static func comparisonBounds(of text: String) -> (lower: String, upper: String?) {
        let scalars = Array(text.unicodeScalars)
        // Only the empty string is not above the empty string; "\u{0}" is the least after it.
        guard let first = scalars.first else { return ("", "\u{0}") }
        if isASCII(text) { return (String(first), end(ofPrefix: text)) }
        // With no starter after the first scalar, a string extending `text` may change even that
        // one: it can sort anywhere.
        let lastStarter = scalars.lastIndex { $0.properties.canonicalCombiningClass == .notReordered } ?? 0
        guard lastStarter > 0 else { return ("", nil) }
        var lower = normalized(text).unicodeScalars.first.map { String($0) } ?? ""
        var upper: String? = ""
        var view = String.UnicodeScalarView()
        for scalar in scalars {
            view.append(scalar)
            let start = normalized(String(view))
            if start.utf8.lexicographicallyPrecedes(lower.utf8) { lower = start }
            // Every string starting with `start` sorts before the end of its prefix range.
            guard let current = upper else { continue }
            guard let end = end(ofPrefix: start) else {
                upper = nil
                continue
            }
            if current.utf8.lexicographicallyPrecedes(end.utf8) { upper = end }
        }
        return (lower, upper)
    }
}
