import Foundation
import MirrorStoreEngine

/// The raw values a store holds for each enum property, recorded in the file as it writes them,
/// so that opening it checks the models' enums once instead of every read checking each value.
///
/// A schema says a property holds a string or an integer, not which ones its enum accepts: an
/// app that drops or renames a case still opens the file, and a stored object with the old raw
/// value could then only fail when read, where ``Results``' subscript cannot throw. With the
/// values recorded, opening throws ``StoreError/Kind-swift.enum/unknownEnumValue(property:enumType:rawValue:)``
/// instead, and results cost what their query costs rather than one decode of every object.
///
/// Each value is one metadata entry, `mirrorstore.enum␟Type.property␟value`, so that two commits
/// in flight never overwrite each other's. A property's entry without a value says its values are
/// all recorded: a file written before this record existed, or a property that became an enum
/// without changing its stored kind, is read once, when opened, to record them.
/// The record may hold values no object holds any more (deleting keeps them); a migration records
/// anew from the objects it writes.
final class StoredEnumValues: Sendable {
    /// One property of one stored type holding enums, or embedded records that do. Immutable.
    struct Field: @unchecked Sendable {
        /// `Type.property`.
        let property: String
        /// The property's position in the type's schema.
        let index: Int
        let shape: EnumShape
        /// The enum the property's raw values belong to; `nil` when its shape leads to embedded
        /// records, whose own fields hold them.
        let cases: EnumCases?
    }

    /// A raw value of one field, by the field's position in ``fields``; written to the file as
    /// the metadata key ``key(of:)`` gives it. `@unchecked`: `raw` is always an enum's raw value,
    /// a single value with no record in it, though `RecordValue` may hold one.
    struct Value: Hashable, @unchecked Sendable {
        let field: Int
        let raw: RecordValue
    }

    static let prefix = "mirrorstore.enum\u{1F}"
    private static let separator: Character = "\u{1F}"

    /// The enum fields of each type whose records hold any, embedded ones included.
    private let fieldsByType: [String: [Int]]
    private let fields: [Field]
    private let positions: [String: Int]
    /// The values the file holds a record of.
    private let recorded = Lock(Set<Value>())

    init(registry: ModelRegistry) {
        var candidates: [String: [Field]] = [:]
        for typeName in registry.typeNames {
            guard let plan = registry.plan(named: typeName) else { continue }
            for (index, accessor) in plan.fields.enumerated() {
                guard let shape = accessor.enumShape else { continue }
                candidates[typeName, default: []].append(Field(
                    property: "\(typeName).\(accessor.name)", index: index, shape: shape, cases: shape.cases))
            }
        }
        // A type holds enums through its own fields or through embedded records that hold them,
        // at any depth: grown until nothing changes, since embedded types may refer to each other.
        var holding = Set(candidates.filter { $0.value.contains { $0.cases != nil } }.keys)
        var grew = true
        while grew {
            grew = false
            for (typeName, fields) in candidates where !holding.contains(typeName) {
                if fields.contains(where: { $0.shape.embeddedType.map(holding.contains) ?? false }) {
                    holding.insert(typeName)
                    grew = true
                }
            }
        }
        var fields: [Field] = []
        var fieldsByType: [String: [Int]] = [:]
        for typeName in candidates.keys.sorted() where holding.contains(typeName) {
            for field in candidates[typeName] ?? [] where field.cases != nil || field.shape.embeddedType.map(holding.contains) == true {
                fieldsByType[typeName, default: []].append(fields.count)
                fields.append(field)
            }
        }
        self.fields = fields
        self.fieldsByType = fieldsByType
        positions = Dictionary(
            fields.enumerated().filter { $0.element.cases != nil }.map { ($1.property, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Whether no model has an enum property.
    var isEmpty: Bool { fields.isEmpty }

    /// Reads the record from `snapshot`, puts what it lacks into `batch`, for the store to commit
    /// as it opens, and checks every recorded value against the models' enums.
    ///
    /// - Throws: ``StoreError`` naming the first property holding a raw value its enum has no
    ///   case for, or a record that does not decode while values are being recorded.
    func open(_ snapshot: EngineSnapshot, registry: ModelRegistry, into batch: inout WriteBatch) throws {
        guard !isEmpty else { return }
        var complete = Set<Int>()
        var found = Set<Value>()
        for key in snapshot.metadataKeys where key.hasPrefix(Self.prefix) {
            let parts = key.dropFirst(Self.prefix.count).split(separator: Self.separator, maxSplits: 1, omittingEmptySubsequences: false)
            guard let position = positions[String(parts[0])] else { continue }
            guard parts.count == 2 else {
                complete.insert(position)
                continue
            }
            guard let raw = EnumValueText.value(String(parts[1])) else {
                throw StoreError(.corruptedRecord(
                    typeName: fields[position].property, key: key,
                    reason: "the record of an enum's raw values holds \(String(parts[1]).debugDescription), which no store writes"))
            }
            found.insert(Value(field: position, raw: raw))
        }
        if complete.count < positions.count {
            for value in try valuesOfEveryObject(in: snapshot, registry: registry) where found.insert(value).inserted {
                batch.setMetadata(key: key(of: value), value: [])
            }
            for position in positions.values where !complete.contains(position) {
                batch.setMetadata(key: Self.prefix + fields[position].property, value: [])
            }
        }
        try check(found)
        recorded.withLock { $0 = found }
    }

    /// The enum values of every stored object of a type with enum fields.
    private func valuesOfEveryObject(in snapshot: EngineSnapshot, registry: ModelRegistry) throws -> Set<Value> {
        let decoder = RecordDecoder(schema: { registry.schema(named: $0) }, resolve: { _, _ in nil })
        var values = Set<Value>()
        for typeName in snapshot.typeNames where fieldsByType[typeName] != nil {
            guard let schema = registry.schema(named: typeName) else { continue }
            try snapshot.forEachEntry(type: typeName) { key, bytes in
                let record = ManagedObject(objectSchema: schema, values: [])
                do {
                    try decoder.decode(bytes, into: record)
                } catch let failure as RecordCodingFailure {
                    throw StoreError(failure, typeName: typeName, key: PrimaryKey.text(key, of: schema))
                }
                forEachValue(in: record) { values.insert($0) }
            }
        }
        return values
    }

    /// The enum values of `record` the file does not record yet, added to `values`: for a
    /// transaction to record with the record.
    func unrecordedValues(in record: ManagedObject, into values: inout Set<Value>) {
        guard !fieldsByType.isEmpty, fieldsByType[record.objectSchema.typeName] != nil else { return }
        var found: [Value] = []
        forEachValue(in: record) { found.append($0) }
        guard !found.isEmpty else { return }
        recorded.withLock { recorded in
            for value in found where !recorded.contains(value) { values.insert(value) }
        }
    }

    /// Every enum value of `record`, added to `values`: for records written anew (by a migration).
    func values(in record: ManagedObject, into values: inout Set<Value>) {
        forEachValue(in: record) { values.insert($0) }
    }

    /// The entries saying every field's values are recorded.
    var completeKeys: [String] { positions.keys.sorted().map { Self.prefix + $0 } }

    /// Notes values a commit has made visible, so later transactions need not record them again.
    func published(_ values: Set<Value>) {
        recorded.withLock { $0.formUnion(values) }
    }

    /// Throws for the first of `values` (in field order) whose enum has no case for it.
    func check(_ values: Set<Value>) throws {
        for value in values.sorted(by: { ($0.field, $0.raw.description) < ($1.field, $1.raw.description) }) {
            try fields[value.field].check(value.raw)
        }
    }

    /// The metadata key recording `value`.
    func key(of value: Value) -> String {
        Self.prefix + fields[value.field].property + String(Self.separator) + EnumValueText.text(value.raw)
    }

    /// Calls `body` with each enum value of `record` and of the records embedded in it, without
    /// recursion: embedded records may nest as deep as a record can.
    private func forEachValue(in record: ManagedObject, _ body: (Value) -> Void) {
        var records = [record]
        while let record = records.popLast() {
            guard let positions = fieldsByType[record.objectSchema.typeName] else { continue }
            let recordValues = record.values
            for position in positions {
                let field = fields[position]
                guard field.index < recordValues.count else { continue }
                var pending: [(RecordValue, EnumShape)] = [(recordValues[field.index], field.shape)]
                while let (value, shape) = pending.popLast() {
                    switch (shape, value) {
                    case (_, .null): continue
                    case (.rawValue, _): body(Value(field: position, raw: value))
                    case (.elements(let element), .list(let list)): pending.append(contentsOf: list.map { ($0, element) })
                    case (.values(let element), .dictionary(let entries)): pending.append(contentsOf: entries.values.map { ($0, element) })
                    case (.embedded, .object(let embedded)): records.append(embedded)
                    default: continue
                    }
                }
            }
        }
    }
}

extension StoredEnumValues.Field {
    /// Throws when the field's enum has no case for `raw`.
    func check(_ raw: RecordValue) throws(StoreError) {
        guard let cases, !cases.accepts(raw) else { return }
        throw StoreError(.unknownEnumValue(property: property, enumType: cases.enumType, rawValue: raw.rawValueText))
    }
}

extension EnumShape {
    /// The enum the shape's raw values belong to; `nil` when it leads to embedded records.
    var cases: EnumCases? {
        switch self {
        case .rawValue(let cases): cases
        case .elements(let inner), .values(let inner): inner.cases
        case .embedded: nil
        }
    }

    /// The type of the embedded records the shape leads to, if it does.
    var embeddedType: String? {
        switch self {
        case .rawValue: nil
        case .elements(let inner), .values(let inner): inner.embeddedType
        case .embedded(let plan): plan.typeName
        }
    }
}

extension RecordValue {
    /// The raw value as Swift writes it, for messages.
    var rawValueText: String {
        switch self {
        case .string(let text): text.debugDescription
        case .int(let value): "\(value)"
        case .uint(let value): "\(value)"
        case .bool(let value): "\(value)"
        case .double(let value): "\(value)"
        case .float(let value): "\(value)"
        default: description
        }
    }
}

/// The text of a raw value in a metadata key: a letter for its kind, then the value, exactly.
enum EnumValueText {
    static func text(_ value: RecordValue) -> String {
        switch value {
        case .bool(let value): "b:\(value ? 1 : 0)"
        case .int(let value): "i:\(value)"
        case .uint(let value): "u:\(value)"
        case .float(let value): "f:\(String(value.bitPattern, radix: 16))"
        case .double(let value): "d:\(String(value.bitPattern, radix: 16))"
        case .string(let value): "s:\(value)"
        case .date(let value): "t:\(String(value.timeIntervalSinceReferenceDate.bitPattern, radix: 16))"
        case .uuid(let value): "g:\(value.uuidString)"
        case .decimal(let value): "m:\(value.description)"
        case .url(let value): "l:\(value.absoluteString)"
        case .data(let value): "x:\(value.map { String($0, radix: 16) }.joined(separator: "."))"
        case .null, .object, .list, .dictionary: "?:"
        }
    }

    static func value(_ text: String) -> RecordValue? {
        guard text.count >= 2, text.dropFirst().first == ":" else { return nil }
        let body = String(text.dropFirst(2))
        switch text.first {
        case "b": return body == "1" ? .bool(true) : body == "0" ? .bool(false) : nil
        case "i": return Int64(body).map(RecordValue.int)
        case "u": return UInt64(body).map(RecordValue.uint)
        case "f": return UInt32(body, radix: 16).map { .float(Float(bitPattern: $0)) }
        case "d": return UInt64(body, radix: 16).map { .double(Double(bitPattern: $0)) }
        case "s": return .string(body)
        case "t": return UInt64(body, radix: 16).flatMap(StoredValues.date).map(RecordValue.date)
        case "g": return UUID(uuidString: body).map(RecordValue.uuid)
        case "m": return StoredValues.decimal(body).map(RecordValue.decimal)
        case "l": return URL(string: body).map(RecordValue.url)
        case "x":
            if body.isEmpty { return .data(Data()) }
            var bytes: [UInt8] = []
            for part in body.split(separator: ".", omittingEmptySubsequences: false) {
                guard let byte = UInt8(part, radix: 16) else { return nil }
                bytes.append(byte)
            }
            return .data(Data(bytes))
        default: return nil
        }
    }
}
