import Foundation
import MirrorStore

/// Records as JSON text. Values JSON cannot hold as numbers (NaN, infinities) become strings;
/// data is base64; dates are ISO 8601.
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
        case .date(let value): string(value.ISO8601Format(.iso8601.time(includingFractionalSeconds: true)))
        case .uuid(let value): string(value.uuidString)
        case .decimal(let value): value.isNaN ? string("NaN") : value.description
        case .url(let value): string(value.absoluteString)
        case .object(let record): object(record, root: false)
        case .list(let list): "[\(list.map(self.value).joined(separator: ","))]"
        case .dictionary(let entries):
            "{\(entries.sorted { $0.key < $1.key }.map { "\(string($0.key)):\(self.value($0.value))" }.joined(separator: ","))}"
        }
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
