import Foundation
import Testing
import TestSupport
@testable import MirrorStore

/// What index keys of strings rest on, checked against the standard library itself: `String`'s
/// `==` is equality of NFC forms, its `<` is the order of NFC scalars (which is the order of
/// their UTF-8 bytes) except for pairs that are prefixes of one another (in NFC or in UTF-8),
/// and those fall inside the range the planner reads for a comparison with either.
@Suite("String order and NFC keys")
struct TextOrderTests {
    /// Scalars that normalization treats specially: combining marks of several classes,
    /// precomposed letters, singletons (Ω, K, Å signs), Hangul jamo, Tibetan vowels whose
    /// decomposition NFC does not recompose, emoji and the last scalar.
    static let scalars: [UInt32] = [
        0x41, 0x45, 0x4B, 0x61, 0x65, 0x78, 0x3B, 0x0D, 0x0A, 0x0301, 0x0300, 0x0327, 0x0323, 0x0307, 0x0308, 0x0345,
        0x05B0, 0x0591, 0x00C9, 0x00E9, 0x00C5, 0x212B, 0x212A, 0x2126, 0x03A9, 0x037E, 0x1E0A, 0x1E9B, 0x1100,
        0x1161, 0x11A8, 0xAC00, 0x0B47, 0x0B3E, 0x0F40, 0x0F71, 0x0F72, 0x0F73, 0x0F74, 0x0F75, 0x0F80, 0x0F81,
        0x0344, 0x3099, 0x304B, 0x304C, 0x200D, 0x1F600, 0x10FFFF,
    ]

    static func text(_ random: inout SeededRandom) -> String {
        var view = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...5, using: &random) {
            view.append(Unicode.Scalar(random.pick(scalars)) ?? "?")
        }
        return String(view)
    }

    @Test("== is NFC equality; < is NFC order but for prefix pairs, which the planner's bounds hold (250,000 pairs)")
    func stringOrderIsNFCOrder() {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x7E47))
        let texts = (0..<500).map { _ in Self.text(&random) }
        var departures = 0
        for constant in texts {
            let key = TextOrder.normalized(constant)
            let (lower, upper) = TextOrder.comparisonBounds(of: constant)
            for text in texts {
                let other = TextOrder.normalized(text)
                #expect((text == constant) == other.utf8.elementsEqual(key.utf8))
                let less = other.utf8.lexicographicallyPrecedes(key.utf8), greater = key.utf8.lexicographicallyPrecedes(other.utf8)
                guard (text < constant) != less || (constant < text) != greater else { continue }
                departures += 1
                let isPrefixPair = other.unicodeScalars.starts(with: key.unicodeScalars) || key.unicodeScalars.starts(with: other.unicodeScalars)
                    || text.utf8.starts(with: constant.utf8) || constant.utf8.starts(with: text.utf8)
                #expect(isPrefixPair, "\(text.debugDescription) and \(constant.debugDescription)")
                #expect(!other.utf8.lexicographicallyPrecedes(lower.utf8) && (upper.map { other.utf8.lexicographicallyPrecedes($0.utf8) } ?? true),
                        "\(text.debugDescription) is outside the bounds for \(constant.debugDescription)")
            }
        }
        // The standard library does depart: "E\u{301}" and "Éx" are neither equal nor ordered.
        #expect(departures > 0)
        #expect(!("E\u{301}" < "\u{C9}x") && !("\u{C9}x" < "E\u{301}") && "E\u{301}" != "\u{C9}x")
    }

    @Test("a prefix's range holds every string that starts with its characters")
    func prefixRanges() {
        var random = SeededRandom(seed: SeededRandom.seed(default: 0x7E48))
        let texts = (0..<400).map { _ in Self.text(&random) }
        for prefix in texts where !prefix.isEmpty {
            let start = TextOrder.normalized(prefix)
            let end = TextOrder.end(ofPrefix: start)
            for text in texts where text.starts(with: prefix) {
                let key = TextOrder.normalized(text)
                #expect(!key.utf8.lexicographicallyPrecedes(start.utf8) && (end.map { key.utf8.lexicographicallyPrecedes($0.utf8) } ?? true),
                        "\(text.debugDescription) starts with \(prefix.debugDescription)")
            }
        }
        #expect(TextOrder.end(ofPrefix: "An") == "Ao")
        #expect(TextOrder.end(ofPrefix: "A\u{10FFFF}") == "B")
        #expect(TextOrder.end(ofPrefix: "\u{D7FF}") == "\u{E000}")
        #expect(TextOrder.end(ofPrefix: "\u{10FFFF}") == nil)
    }
}
