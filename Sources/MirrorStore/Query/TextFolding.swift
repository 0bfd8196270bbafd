import Foundation

/// The folded form of a string, which case- and diacritic-insensitive conditions, sorts and
/// indexes compare: Foundation's folding (Unicode case folding, canonical decomposition without
/// combining marks), in NFC so that the index's byte order and equality are `String`'s.
enum TextFolding {
    static func folded(_ text: String, options: TextOptions) -> String {
        guard !options.isEmpty else { return text }
        // ASCII text has no diacritics, and folds to its lower case: the general path's answer,
        // without a Foundation call per string an index keys.
        if TextOrder.isASCII(text) {
            guard options.contains(.caseInsensitive) else { return text }
            return String(decoding: text.utf8.map(caseFolded), as: UTF8.self)
        }
        var foundation: String.CompareOptions = []
        if options.contains(.caseInsensitive) { foundation.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { foundation.insert(.diacriticInsensitive) }
        return TextOrder.normalized(text.folding(options: foundation, locale: nil))
    }

    /// An ASCII byte case-folded: an upper-case letter becomes its lower case, as Unicode case
    /// folding maps it; every other ASCII byte stays.
    @inline(__always)
    static func caseFolded(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }
}
