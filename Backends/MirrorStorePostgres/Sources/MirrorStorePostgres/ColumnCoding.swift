import Foundation
import MirrorStore
import PostgresNIO

/// Binds record values as statement parameters and reads them back from cells, column by column.
/// Values only ever travel as bound parameters: no value is spelled in SQL text. A class: the
/// closures of each cell's conversion capture it, and a reference is cheaper to pass on than the
/// models it holds.
final class ColumnCoding {
    let models: BackendModels
    let typeName: String

    init(models: BackendModels, typeName: String) {
        self.models = models
        self.typeName = typeName
    }

    private func unstorable(_ column: ColumnMapping, _ reason: String) -> PostgresStoreError {
        PostgresStoreError(.unstorableValue(typeName: typeName, property: column.property, reason: reason))
    }

    /// Appends `value`, the value of `column`, to `bindings`.
    func bind(_ value: RecordValue, column: ColumnMapping, into bindings: inout PostgresBindings) throws {
        if case .null = value {
            bindings.appendNull()
            return
        }
        switch column.storage {
        case .scalar(let type):
            try Self.bindScalar(value, type: type, into: &bindings) { unstorable(column, $0) }
        case .array(let type):
            guard case .list(let list) = value else { throw unstorable(column, "\(value), which is not a list") }
            try Self.bindArray(Array(list), type: type, into: &bindings) { unstorable(column, $0) }
        case .link(_, let key):
            guard case .object(let target) = value, let keyName = target.objectSchema.primaryKey, let keyValue = target[keyName] else {
                throw unstorable(column, "\(value), which is not a linked model with a primary key")
            }
            try Self.bindScalar(keyValue, type: key, into: &bindings) { unstorable(column, $0) }
        case .linkArray(_, let key, let elementsOptional):
            guard case .list(let list) = value else { throw unstorable(column, "\(value), which is not a list") }
            let keys = try list.map { element -> RecordValue? in
                switch element {
                case .null where elementsOptional: return nil
                case .object(let target):
                    if let keyName = target.objectSchema.primaryKey, let keyValue = target[keyName] { return keyValue }
                default: break
                }
                throw unstorable(column, "\(element), which is not a linked model with a primary key")
            }
            bindings.append(try KeyArrayText.text(of: keys, type: key) { unstorable(column, $0) })
        case .json:
            let coding = JSONCoding(models: models, typeName: typeName, property: column.property)
            bindings.append(try JSONCoding.text(of: try coding.encode(value, kind: column.kind)))
        }
    }

    /// The `jsonb` of `column` in `cell`, not decoded yet, or `nil` for `NULL`: a reader decodes
    /// it with ``decode(_:column:key:link:)`` once the targets of its links are read.
    func json(_ cell: PostgresCell, column: ColumnMapping, key: () -> String) throws -> JSONValue? {
        try naming(column, key) { try cell.decode(String?.self).map(JSONCoding.json(from:)) }
    }

    /// `json`, the `jsonb` of `column`, as a record value; each link in it is what `link` gives.
    func decode(
        _ json: JSONValue, column: ColumnMapping, key: () -> String, link: (String, RecordValue) throws -> RecordValue
    ) throws -> RecordValue {
        try naming(column, key) {
            try JSONCoding(models: models, typeName: typeName, property: column.property).decode(json, kind: column.kind, link: link)
        }
    }

    /// Appends a single value of `type`; constants of queries are bound the same way.
    static func bindScalar(
        _ value: RecordValue, type: ScalarType, into bindings: inout some ParameterList, failure: (String) -> PostgresStoreError
    ) throws {
        switch (type, value) {
        case (_, .null): bindings.bindNull()
        case (.boolean, .bool(let value)): bindings.bind(value)
        case (.bigint, .int(let value)): bindings.bind(value)
        case (.unsigned, .uint(let value)): bindings.bind(String(value))
        case (.real, .float(let value)): bindings.bind(value)
        case (.double, .double(let value)): bindings.bind(value)
        case (.text, .string(let value)):
            guard !value.utf8.contains(0) else { throw failure("a string with a NUL character") }
            bindings.bind(value)
        case (.bytea, .data(let value)): try bindings.bind(throwing: value)
        case (.date, .date(let value)):
            guard !value.timeIntervalSinceReferenceDate.isNaN else { throw failure("a NaN date") }
            bindings.bind(value.timeIntervalSinceReferenceDate)
        case (.uuid, .uuid(let value)): bindings.bind(value)
        case (.decimal, .decimal(let value)):
            guard !value.isNaN else { throw failure("a NaN decimal") }
            bindings.bind(value.description)
        case (.url, .url(let value)): bindings.bind(value.absoluteString)
        default: throw failure("\(value), which does not fit a \(type.sqlType) column")
        }
    }

    private static func bindArray(
        _ values: [RecordValue], type: ScalarType, into bindings: inout PostgresBindings, failure: (String) -> PostgresStoreError
    ) throws {
        func each<T>(_ read: (RecordValue) -> T?) throws -> [T] {
            try values.map { value in
                guard let read = read(value) else { throw failure("\(value) in a \(type.sqlType)[] column") }
                return read
            }
        }
        switch type {
        case .boolean: bindings.append(try each { if case .bool(let v) = $0 { v } else { nil } })
        case .bigint: bindings.append(try each { if case .int(let v) = $0 { v } else { nil } })
        case .real: bindings.append(try each { if case .float(let v) = $0 { v } else { nil } })
        case .double: bindings.append(try each { if case .double(let v) = $0 { v } else { nil } })
        case .text:
            let strings = try each { if case .string(let v) = $0 { v } else { nil } }
            guard !strings.contains(where: { $0.utf8.contains(0) }) else { throw failure("a string with a NUL character") }
            bindings.append(strings)
        case .uuid: bindings.append(try each { if case .uuid(let v) = $0 { v } else { nil } })
        case .bytea: bindings.append(try each { if case .data(let v) = $0 { ByteBuffer(bytes: v) } else { nil } })
        case .date:
            let seconds = try each { if case .date(let v) = $0 { v.timeIntervalSinceReferenceDate } else { nil } }
            guard !seconds.contains(where: \.isNaN) else { throw failure("a NaN date") }
            bindings.append(seconds)
        case .unsigned, .decimal, .url: throw failure("a \(type.sqlType) array, which is kept as jsonb")
        }
    }

    /// The value of `column` in `cell`; links come back as the target's key, and arrays of links
    /// as a list of keys (`.null` for a `NULL` element), which the reader resolves. `key` names
    /// the row in an error, and is asked for only then.
    func read(_ cell: PostgresCell, column: ColumnMapping, key: () -> String) throws -> RecordValue {
        // A non-escaping closure: this runs once per cell, and allocates nothing for it.
        try naming(column, key) {
            switch column.storage {
            case .scalar(let type), .link(_, let type):
                return try Self.readScalar(cell, type: type)
            case .array(let type):
                return try Self.readArray(cell, type: type)
            case .linkArray(_, let key, _):
                guard let text = try cell.decode(String?.self) else { return .null }
                return .list(List(try KeyArrayText.keys(from: text, type: key).map { $0 ?? .null }))
            case .json:
                guard let text = try cell.decode(String?.self) else { return .null }
                let coding = JSONCoding(models: models, typeName: typeName, property: column.property)
                return try coding.decode(try JSONCoding.json(from: text), kind: column.kind)
            }
        }
    }

    /// The value of a column of single values of `type` in `cell`, as ``read(_:column:key:)``
    /// reads it, or `nil` when the cell does not read as one: that function then says why, naming
    /// the row. A row's reader calls this once per cell, with the type it resolved once per
    /// table, where looking the column up and preparing its error would cost as much as the read.
    static func scalar(_ cell: PostgresCell, type: ScalarType) -> RecordValue? {
        try? readScalar(cell, type: type)
    }

    /// What `body` returns; a failure to read `column` names the row, by `key`, asked for only then.
    private func naming<T>(_ column: ColumnMapping, _ key: () -> String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgresStoreError {
            // The JSON decoding knows the property, not the row: name it here.
            guard case .corruptedRow(let typeName, "?", let reason) = error.kind else { throw error }
            throw PostgresStoreError(.corruptedRow(typeName: typeName, key: key(), reason: reason))
        } catch {
            let reason = (error as? CellFailure)?.reason ?? "\(error)"
            throw PostgresStoreError(.corruptedRow(typeName: typeName, key: key(), reason: "\(column.property): \(reason)"))
        }
    }

    /// A cell whose content is not a value of its column, said in a few words.
    private struct CellFailure: Error {
        let reason: String
    }

    private static func readScalar(_ cell: PostgresCell, type: ScalarType) throws -> RecordValue {
        func parsed<T>(_ value: T?, _ text: String) throws -> T {
            guard let value else { throw CellFailure(reason: "\(text) is not a \(type.sqlType)") }
            return value
        }
        switch type {
        case .boolean: return try cell.decode(Bool?.self).map(RecordValue.bool) ?? .null
        case .bigint: return try cell.decode(Int64?.self).map(RecordValue.int) ?? .null
        case .unsigned:
            guard let text = try cell.decode(String?.self) else { return .null }
            return .uint(try parsed(UInt64(text), text))
        case .real: return try cell.decode(Float?.self).map(RecordValue.float) ?? .null
        case .double: return try cell.decode(Double?.self).map(RecordValue.double) ?? .null
        case .text: return try cell.decode(String?.self).map(RecordValue.string) ?? .null
        case .bytea: return try cell.decode(Data?.self).map(RecordValue.data) ?? .null
        case .date: return try cell.decode(Double?.self).map { .date(Date(timeIntervalSinceReferenceDate: $0)) } ?? .null
        case .uuid: return try cell.decode(UUID?.self).map(RecordValue.uuid) ?? .null
        case .decimal:
            guard let text = try cell.decode(String?.self) else { return .null }
            return .decimal(try parsed(Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), text))
        case .url:
            guard let text = try cell.decode(String?.self) else { return .null }
            return .url(try parsed(URL(string: text), text))
        }
    }

    private static func readArray(_ cell: PostgresCell, type: ScalarType) throws -> RecordValue {
        func list<T>(_ values: [T]?, _ make: (T) -> RecordValue) -> RecordValue {
            values.map { .list(List($0.map(make))) } ?? .null
        }
        switch type {
        case .boolean: return list(try cell.decode([Bool]?.self), RecordValue.bool)
        case .bigint: return list(try cell.decode([Int64]?.self), RecordValue.int)
        case .real: return list(try cell.decode([Float]?.self), RecordValue.float)
        case .double: return list(try cell.decode([Double]?.self), RecordValue.double)
        case .text: return list(try cell.decode([String]?.self), RecordValue.string)
        case .uuid: return list(try cell.decode([UUID]?.self), RecordValue.uuid)
        case .date: return list(try cell.decode([Double]?.self)) { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        case .bytea: return list(try cell.decode([ByteBuffer]?.self)) { .data(Data($0.readableBytesView)) }
        case .unsigned, .decimal, .url: throw CellFailure(reason: "\(type.sqlType) arrays are kept as jsonb, not in a native array")
        }
    }
}
