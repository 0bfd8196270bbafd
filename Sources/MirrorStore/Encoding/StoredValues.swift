import Foundation
import MirrorStoreEngine

/// The values whose stored form is text or a floating-point number, read back only in the form
/// ``RecordEncoder`` writes: every reader of record bytes goes through these, so bytes a
/// crafted file smuggles in (`"12abc%%"` for a decimal, which `Decimal(string:)` reads as 12; a
/// NaN date) are refused as damage rather than read as something no one stored.
enum StoredValues {
    private static let posix = Locale(identifier: "en_US_POSIX")

    /// The decimal whose `description` is exactly `text`, as the encoder writes it.
    static func decimal(_ text: String) -> Decimal? {
        guard let value = Decimal(string: text, locale: posix), value.description == text else { return nil }
        return value
    }

    /// The date `bits` hold, as seconds since the reference date: any `Double` but NaN, which the
    /// encoder refuses since a NaN date never equals itself (infinities are stored and read).
    static func date(_ bits: UInt64) -> Date? {
        let seconds = Double(bitPattern: bits)
        return seconds.isNaN ? nil : Date(timeIntervalSinceReferenceDate: seconds)
    }

    /// The date payload at `reader`, of the value that starts at `start`; damage when it is NaN.
    static func readDate(from reader: inout ByteReader, start: Int) throws(DecodeFailure) -> Date {
        guard let value = date(try reader.uint64()) else {
            throw DecodeFailure(offset: start, reason: "a date that is not a number (NaN), which no store writes")
        }
        return value
    }

    /// The decimal payload at `reader`, of the value that starts at `start`; damage when its text
    /// is not one the encoder writes.
    static func readDecimal(from reader: inout ByteReader, start: Int) throws(DecodeFailure) -> Decimal {
        let text = try reader.lengthPrefixedString()
        guard let value = decimal(text) else {
            throw DecodeFailure(offset: start, reason: "\(text.debugDescription) is not a decimal number as a store writes one")
        }
        return value
    }
}
