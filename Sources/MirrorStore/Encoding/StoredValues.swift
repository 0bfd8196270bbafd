import Foundation

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
}
