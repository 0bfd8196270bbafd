import Foundation
import MirrorStore

/// Records as JSON text. Values JSON cannot hold as numbers (NaN, infinities) become strings;
/// data is base64; dates are ISO 8601 in UTC with milliseconds.
enum JSONLine {
    static func object(_ record: ManagedObject, root: Bool) -> String {
        // A linked record with a primary key prints as its key; the root and embedded ones in full.
        if !root, let key = record.objectSchema.primaryKey, let value = record[key] {
            return self.value(value)
        }
        let fields = record.objectSchema.properties.enumerated().map { index, property in
            "\(string(property.name)):\(value(record[propertyAt: index]))"
        }
        return "{\(fields.joined(separator: ","))}"
    }

    static func value(_ value: RecordValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let value): value ? "true" : "false"
        case .int(let value): String(value)
        case .uint(let value): String(value)
        case .float(let value): number(Double(value))
        case .double(let value): number(value)
        case .string(let value): string(value)
        case .data(let value): string(value.base64EncodedString())
        case .date(let value): string(timestamp(value))
        case .uuid(let value): string(value.uuidString)
        case .decimal(let value): value.isNaN ? string("NaN") : value.description
        case .url(let value): string(value.absoluteString)
        case .object(let record): object(record, root: false)
        case .list(let list): "[\(list.map(self.value).joined(separator: ","))]"
        case .dictionary(let entries):
            "{\(entries.sorted { $0.key < $1.key }.map { "\(string($0.key)):\(self.value($0.value))" }.joined(separator: ","))}"
        }
    }

    /// Whole seconds in UTC, whatever the machine's time zone, so a dump reads the same everywhere.
    private static let iso8601 = Date.ISO8601FormatStyle(timeZone: .gmt)

    /// `2004-11-29T21:33:09.123Z`: the date and time in UTC, to the nearest millisecond.
    ///
    /// The milliseconds are written here rather than by the format style, because it truncates and
    /// a `Date` keeps its seconds in a `Double`, where `.123` is often `.12299…`: it would print `.122`.
    static func timestamp(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSinceReferenceDate * 1000).rounded()
        // Beyond 2^53 ms (about 285,000 years) the arithmetic below is no longer exact; NaN and
        // infinite dates cannot become an Int. Those print as the format style has them.
        guard milliseconds.isFinite, abs(milliseconds) < 0x1p53 else { return date.ISO8601Format(iso8601) }
        let seconds = (milliseconds / 1000).rounded(.down)
        let fraction = Int(milliseconds - seconds * 1000)
        let text = Date(timeIntervalSinceReferenceDate: seconds).ISO8601Format(iso8601)
        // The style ends in "Z" for UTC; the fraction goes just before it.
        guard text.hasSuffix("Z") else { return text }
        return text.dropLast() + "." + String(format: "%03d", fraction) + "Z"
    }

    private static func number(_ value: Double) -> String {
        value.isFinite ? "\(value)" : string("\(value)")
    }

    static func string(_ text: String) -> String {
        var escaped = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where scalar.value < 0x20: escaped += String(format: "\\u%04x", scalar.value)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped + "\""
    }
}
