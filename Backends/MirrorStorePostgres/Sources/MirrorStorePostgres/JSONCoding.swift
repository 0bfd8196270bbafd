import Foundation
import MirrorStore

/// The `jsonb` form of embedded models, dictionaries and containers that are not native arrays.
///
/// The encoding is directed by the property's kind, so it needs no type tags and loses nothing:
/// numbers are JSON strings in Swift's own spelling (`"-0.0"`, `"nan"`, `"18446744073709551615"`),
/// which reads back bit for bit where JSON numbers would round or refuse NaN; `Data` is base64;
/// a `Date` is its `timeIntervalSinceReferenceDate`; a `UUID` its string; an embedded model an
/// object keyed by property name; a link to a model with a primary key that key, as its kind is
/// encoded (`"7"`); `nil` is `null`.
enum JSONValue: Codable, Equatable {
    case null
    case bool(Bool)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

/// Converts record values of a kind to and from ``JSONValue``.
struct JSONCoding {
    let models: BackendModels
    let typeName: String
    let property: String
    /// Schemas of embedded models to decode by instead of their models' (a migration's `old`
    /// reads a table as its embedded models were when it was written), by type name.
    var embeddedSchemas: [String: ObjectSchema] = [:]

    private func unstorable(_ reason: String) -> PostgresStoreError {
        PostgresStoreError(.unstorableValue(typeName: typeName, property: property, reason: reason))
    }

    private func corrupted(_ reason: String) -> PostgresStoreError {
        PostgresStoreError(.corruptedRow(typeName: typeName, key: "?", reason: "\(property): \(reason)"))
    }

    func encode(_ value: RecordValue, kind: PropertyKind) throws -> JSONValue {
        if case .optional(let wrapped) = kind {
            if case .null = value { return .null }
            return try encode(value, kind: wrapped)
        }
        switch (kind, value) {
        case (.bool, .bool(let value)): return .bool(value)
        case (_, .int(let value)): return .string(String(value))
        case (_, .uint(let value)): return .string(String(value))
        case (_, .float(let value)): return .string(value.description)
        case (_, .double(let value)): return .string(value.description)
        case (_, .string(let value)):
            guard !value.utf8.contains(0) else { throw unstorable("a string with a NUL character") }
            return .string(value)
        case (_, .data(let value)): return .string(value.base64EncodedString())
        case (_, .date(let value)):
            guard !value.timeIntervalSinceReferenceDate.isNaN else { throw unstorable("a NaN date") }
            return .string(value.timeIntervalSinceReferenceDate.description)
        case (_, .uuid(let value)): return .string(value.uuidString)
        case (_, .decimal(let value)):
            guard !value.isNaN else { throw unstorable("a NaN decimal") }
            return .string(value.description)
        case (_, .url(let value)): return .string(value.absoluteString)
        case (.list(let element), .list(let list)), (.set(let element), .list(let list)):
            return .array(try list.map { try encode($0, kind: element) })
        case (.dictionary(let element), .dictionary(let entries)):
            return .object(try entries.mapValues { try encode($0, kind: element) })
        case (.object, .object(let record)):
            // A model with a primary key is linked, not embedded: its key stands for it.
            if let key = record.objectSchema.primaryKey, let keyKind = record.objectSchema.property(named: key)?.kind {
                return try encode(record[key] ?? .null, kind: keyKind)
            }
            var object: [String: JSONValue] = [:]
            for (index, inner) in record.objectSchema.properties.enumerated() {
                object[inner.name] = try encode(record[propertyAt: index], kind: inner.kind)
            }
            return .object(object)
        default:
            throw unstorable("\(value), which does not fit its kind \(kind)")
        }
    }

    /// The record value of `json`, a value of `kind`. A link (a key in the `jsonb`) is what
    /// `link` gives for its target type and key: the target, or `.null` when it is gone, which
    /// arrays of non-optional links leave out, as the file store's records read.
    func decode(
        _ json: JSONValue, kind: PropertyKind, link: (String, RecordValue) throws -> RecordValue = { _, _ in .null }
    ) throws -> RecordValue {
        if case .optional(let wrapped) = kind {
            if case .null = json { return .null }
            return try decode(json, kind: wrapped, link: link)
        }
        func text() throws -> String {
            guard case .string(let text) = json else { throw corrupted("expected a string for \(kind), found \(json)") }
            return text
        }
        func parsed<T>(_ value: T?) throws -> T {
            guard let value else { throw corrupted("\(json) is not a \(kind)") }
            return value
        }
        switch kind {
        case .bool:
            guard case .bool(let value) = json else { throw corrupted("expected a Bool, found \(json)") }
            return .bool(value)
        case .int, .int8, .int16, .int32, .int64: return .int(try parsed(Int64(try text())))
        case .uint, .uint8, .uint16, .uint32, .uint64: return .uint(try parsed(UInt64(try text())))
        case .float: return .float(try parsed(Float(try text())))
        case .double: return .double(try parsed(Double(try text())))
        case .string: return .string(try text())
        case .data: return .data(try parsed(Data(base64Encoded: try text())))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: try parsed(Double(try text()))))
        case .uuid: return .uuid(try parsed(UUID(uuidString: try text())))
        case .decimal: return .decimal(try parsed(Decimal(string: try text(), locale: Locale(identifier: "en_US_POSIX"))))
        case .url: return .url(try parsed(URL(string: try text())))
        case .list(let element), .set(let element):
            guard case .array(let items) = json else { throw corrupted("expected an array for \(kind), found \(json)") }
            var elements: [RecordValue] = []
            elements.reserveCapacity(items.count)
            for item in items {
                let value = try decode(item, kind: element, link: link)
                if case .null = value, case .object = element { continue }
                elements.append(value)
            }
            return .list(List(elements))
        case .dictionary(let element):
            guard case .object(let entries) = json else { throw corrupted("expected an object for \(kind), found \(json)") }
            var values: [String: RecordValue] = [:]
            for (key, item) in entries {
                let value = try decode(item, kind: element, link: link)
                // As in an array: a non-optional link whose target is gone leaves the entry out.
                if case .null = value, case .object = element { continue }
                values[key] = value
            }
            return .dictionary(values)
        case .object(let target):
            guard let schema = embeddedSchemas[target] ?? models.type(named: target)?.schema else { throw corrupted("\(target) is not a model type") }
            if let key = schema.primaryKey {
                guard let keyKind = schema.property(named: key)?.kind else { throw corrupted("\(target) has no key \(key)") }
                return try link(target, try decode(json, kind: keyKind))
            }
            guard case .object(let entries) = json else { throw corrupted("expected an object for \(kind), found \(json)") }
            let record = ManagedObject(objectSchema: schema)
            for (index, inner) in schema.properties.enumerated() {
                guard let stored = entries[inner.name] else { throw corrupted("the embedded \(target) has no \(inner.name)") }
                try record.setValue(try decode(stored, kind: inner.kind, link: link), forPropertyAt: index)
            }
            return .object(record)
        case .optional:
            throw corrupted("optionals of optionals are not stored")
        }
    }

    static func text(of json: JSONValue) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(json), as: UTF8.self)
    }

    static func json(from text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }
}
