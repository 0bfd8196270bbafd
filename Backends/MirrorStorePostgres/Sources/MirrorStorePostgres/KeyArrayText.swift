import Foundation
import MirrorStore

/// The keys of an array of links in PostgreSQL's array text form (`{1,NULL,3}`,
/// `{"a","b\"c"}`): bound as one text parameter cast to the column's array type, and read back
/// from the column cast to text. postgres-nio's native arrays have no `NULL` elements, which
/// `[Pet?]` needs; the text form has them, and is exact for the key types it supports.
enum KeyArrayText {
    /// Whether keys of `type` have a text form PostgreSQL reads back as the same key.
    static func supports(_ type: ScalarType) -> Bool {
        switch type {
        case .bigint, .unsigned, .text, .uuid: true
        case .boolean, .real, .double, .bytea, .date, .decimal, .url: false
        }
    }

    /// The array text of `keys` (`nil` for a `NULL` element): each element quoted, so that no
    /// key reads as `NULL` or splits.
    static func text(of keys: [RecordValue?], type: ScalarType, failure: (String) -> PostgresStoreError) throws -> String {
        var text = "{"
        for (index, key) in keys.enumerated() {
            if index > 0 { text += "," }
            guard let key else {
                text += "NULL"
                continue
            }
            let element: String
            switch (type, key) {
            case (.bigint, .int(let value)): element = String(value)
            case (.unsigned, .uint(let value)): element = String(value)
            case (.uuid, .uuid(let value)): element = value.uuidString
            case (.text, .string(let value)):
                guard !value.utf8.contains(0) else { throw failure("a linked key with a NUL character") }
                element = value
            default: throw failure("\(key), which is not a \(type.sqlType) key")
            }
            text += "\"" + element.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return text + "}"
    }

    /// The keys of an array text PostgreSQL wrote for a one-dimensional array of `type`
    /// (`nil` for a `NULL` element).
    static func keys(from text: String, type: ScalarType) throws -> [RecordValue?] {
        try elements(of: text).map { element in
            guard let element else { return nil }
            let key: RecordValue? = switch type {
            case .bigint: Int64(element).map(RecordValue.int)
            case .unsigned: UInt64(element).map(RecordValue.uint)
            case .uuid: UUID(uuidString: element).map(RecordValue.uuid)
            case .text: .string(element)
            case .boolean, .real, .double, .bytea, .date, .decimal, .url: nil
            }
            guard let key else { throw Malformed(reason: "\(element.debugDescription) is not a \(type.sqlType) key") }
            return key
        }
    }

    /// An array text that does not read as keys.
    struct Malformed: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// The elements of `{…}`: quoted ones unescaped, an unquoted `NULL` as `nil`.
    private static func elements(of text: String) throws -> [String?] {
        var characters = Substring(text)
        guard characters.popFirst() == "{", characters.popLast() == "}" else {
            throw Malformed(reason: "\(text.debugDescription) is not a one-dimensional array")
        }
        guard !characters.isEmpty else { return [] }
        var elements: [String?] = []
        var current = ""
        var quoted = false, wasQuoted = false, escaped = false
        for character in characters {
            if escaped {
                current.append(character)
                escaped = false
            } else if quoted {
                switch character {
                case "\\": escaped = true
                case "\"": quoted = false
                default: current.append(character)
                }
            } else {
                switch character {
                case "\"": quoted = true; wasQuoted = true
                case ",":
                    elements.append(!wasQuoted && current == "NULL" ? nil : current)
                    current = ""
                    wasQuoted = false
                case "{", "}": throw Malformed(reason: "\(text.debugDescription) is not a one-dimensional array")
                default: current.append(character)
                }
            }
        }
        guard !quoted, !escaped else { throw Malformed(reason: "\(text.debugDescription) ends inside a quoted element") }
        elements.append(!wasQuoted && current == "NULL" ? nil : current)
        return elements
    }
}
