import Foundation
import MirrorStoreEngine

/// The values of an indexed property read from its index alone, for ``Results/values(_:)``: when
/// the results come from that index (sorted by it, or a range of it that answers their filter
/// exactly), each index entry is a result's value, and no record is read.
///
/// Only kinds whose index keys are the stored values exactly take this way: integers, booleans
/// and dates. A string's key is its NFC form, which may not be the string as written, and a
/// double's key makes `-0.0` and `0.0` one: those are read from the records.
extension StoredColumn {
    /// The property's values in the results' order with their objects' keys, from the index
    /// (`nil` for a null key when `Value` is not optional), or `nil` when the results do not come
    /// from the property's index or its keys are not the values exactly.
    func valuesFromIndex<Model: Persistable, Value: RecordPrimitive>(of results: Results<Model>) throws -> [(Value?, StorageKey)]? {
        let source = results.source
        guard let index = source.indexes[position], Self.indexKeysAreValues(source.schema.properties[position].kind) else { return nil }
        switch (results.rows, results.plan.order) {
        case (.index(let positions), .index(let name, _)) where name == index.name:
            var values: [(Value?, StorageKey)] = []
            values.reserveCapacity(positions.count)
            for place in 0..<positions.count {
                guard let entry = try positions.entry(at: place) else { break }
                values.append((try value(of: entry), entry.object))
            }
            return values
        case (.range(let range), .primaryKey) where range.indexName == index.name:
            // The range in index order; the results are in key order.
            var entries: [IndexEntry] = []
            entries.reserveCapacity(range.count)
            try range.forEachEntry { entries.append($0) }
            entries.sort { StorageKey.precedes($0.object, $1.object) }
            return try entries.map { (try value(of: $0), $0.object) }
        default:
            return nil
        }
    }

    /// Whether an index on a property of `kind` keys each object by its stored value exactly:
    /// one entry per object (no containers), and a key that gives the value back.
    static func indexKeysAreValues(_ kind: PropertyKind) -> Bool {
        if case .optional(let wrapped) = kind { return indexKeysAreValues(wrapped) }
        guard let type = kind.storedValueType else { return false }
        return type.isInteger || type == .bool || type == .date
    }

    /// The value an index entry keys, as a `Value`: for a null key, `nil` unless `Value` is
    /// optional (then its `nil`), as a record's null reads; damage when it is no `Value`.
    private func value<Value: RecordPrimitive>(of entry: IndexEntry) throws -> Value? {
        if case .null = entry.key { return Value(recordValue: .null) }
        let stored: RecordValue? = switch entry.key {
        case .null: nil
        case .bool(let value): .bool(value)
        case .integer(let value): .int(value)
        case .unsigned(let value): .uint(value)
        case .double(let interval): .date(Date(timeIntervalSinceReferenceDate: interval))
        case .string, .bytes, .tuple, .greatest: nil
        }
        guard let stored, case let converted? = Value(recordValue: stored) else {
            throw StoreError(.corruptedRecord(
                typeName: typeName, key: keyText(entry.object),
                reason: "the index on \(property) holds \(entry.key), not a \(Value.self)"))
        }
        return converted
    }
}
