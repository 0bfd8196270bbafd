import Foundation
import MirrorStoreEngine

/// Aggregates over one stored property of the results, read from the encoded records (or an index)
/// without making a model.
///
/// ```swift
/// let heroes = try store.objects(Hero.self)
/// let last = try heroes.max(\.name)              // `name` is indexed: its index's last entry
/// let total = try heroes.filter(#Predicate { $0.publisher?.name == "Marvel Comics" }).sum(\.identifier)
/// let mean = try heroes.average(\.identifier)     // nil when there are no results
/// let realNames = try heroes.distinct(\.realName) // in the order of the results
/// ```
///
/// Each gives what the same operation gives on an array of the models (`map(\.name).max()`,
/// `reduce(0, +)`), with these choices where Swift's answer is a trap or depends on the order:
/// a sum of integers that overflows the property's type throws ``QueryError`` instead of trapping;
/// `min` and `max` skip NaN; properties of an optional type skip `nil`.
extension Results {
    /// The least value of `property` among the results, or `nil` when there are none. Of equal
    /// values, the first in the results' order.
    ///
    /// - Throws: ``QueryError`` when `property` is not a stored property; ``StoreError`` when a
    ///   record cannot be read.
    public func min<Value: Comparable & RecordPrimitive>(_ property: KeyPath<Model, Value>) throws -> Value? {
        try extreme(of: property, least: true)
    }

    /// The least non-`nil` value of `property` among the results, or `nil` when there is none.
    public func min<Value: Comparable & RecordPrimitive>(_ property: KeyPath<Model, Value?>) throws -> Value? {
        try extreme(of: property, least: true)
    }

    /// The greatest value of `property` among the results, or `nil` when there are none. Of equal
    /// values, the first in the results' order.
    ///
    /// - Throws: ``QueryError`` when `property` is not a stored property; ``StoreError`` when a
    ///   record cannot be read.
    public func max<Value: Comparable & RecordPrimitive>(_ property: KeyPath<Model, Value>) throws -> Value? {
        try extreme(of: property, least: false)
    }

    /// The greatest non-`nil` value of `property` among the results, or `nil` when there is none.
    public func max<Value: Comparable & RecordPrimitive>(_ property: KeyPath<Model, Value?>) throws -> Value? {
        try extreme(of: property, least: false)
    }

    /// The sum of `property` over the results, added in their order (`zero` when there are none).
    ///
    /// - Throws: ``QueryError`` when `property` is not a stored property or an integer sum
    ///   overflows the property's type; ``StoreError`` when a record cannot be read.
    public func sum<Value: AdditiveArithmetic & RecordPrimitive>(_ property: KeyPath<Model, Value>) throws -> Value {
        try total(of: property).sum
    }

    /// The sum of the non-`nil` values of `property` over the results, added in their order.
    public func sum<Value: AdditiveArithmetic & RecordPrimitive>(_ property: KeyPath<Model, Value?>) throws -> Value {
        try total(of: property).sum
    }

    /// The mean of `property` over the results: their ``sum(_:)-(KeyPath<Model,Value>)`` divided by
    /// their number, or `nil` when there are none.
    public func average<Value: BinaryInteger & RecordPrimitive>(_ property: KeyPath<Model, Value>) throws -> Double? {
        let (sum, count): (Value, Int) = try total(of: property)
        return count == 0 ? nil : Double(sum) / Double(count)
    }

    /// The mean of the non-`nil` values of `property`, or `nil` when there is none.
    public func average<Value: BinaryInteger & RecordPrimitive>(_ property: KeyPath<Model, Value?>) throws -> Double? {
        let (sum, count): (Value, Int) = try total(of: property)
        return count == 0 ? nil : Double(sum) / Double(count)
    }

    /// The mean of `property` over the results, summed in their order, or `nil` when there are none.
    public func average<Value: BinaryFloatingPoint & RecordPrimitive>(_ property: KeyPath<Model, Value>) throws -> Double? {
        let (sum, count): (Value, Int) = try total(of: property)
        return count == 0 ? nil : Double(sum) / Double(count)
    }

    /// The mean of the non-`nil` values of `property`, or `nil` when there is none.
    public func average<Value: BinaryFloatingPoint & RecordPrimitive>(_ property: KeyPath<Model, Value?>) throws -> Double? {
        let (sum, count): (Value, Int) = try total(of: property)
        return count == 0 ? nil : Double(sum) / Double(count)
    }

    /// The values of `property` among the results, each once (as `Set` counts them), in the order
    /// of their first result.
    ///
    /// - Throws: ``QueryError`` when `property` is not a stored property; ``StoreError`` when a
    ///   record cannot be read.
    public func distinct<Value: Hashable & RecordPrimitive>(_ property: KeyPath<Model, Value>) throws -> [Value] {
        let column = try StoredColumn(property, of: self)
        var seen = Set<Value>()
        var values: [Value] = []
        try column.forEachValue(in: self) { (value: Value) in
            if seen.insert(value).inserted { values.append(value) }
        }
        return values
    }

    // MARK: Implementation

    private func extreme<Stored: RecordPrimitive, Value: Comparable & RecordPrimitive>(
        of property: KeyPath<Model, Stored>, least: Bool
    ) throws -> Value? {
        let column = try StoredColumn(property, of: self)
        if let found: Value = try column.indexEnd(of: self, least: least) { return found }
        var extreme = ExtremeValue<Value>(least: least)
        try column.forEachValue(in: self) { (value: Value) in extreme.offer(value) }
        return extreme.best
    }

    private func total<Stored: RecordPrimitive, Value: AdditiveArithmetic & RecordPrimitive>(
        of property: KeyPath<Model, Stored>
    ) throws -> (sum: Value, count: Int) {
        let column = try StoredColumn(property, of: self)
        if let total: (Value, Int) = try column.total(in: self) { return total }
        var sum = Value.zero
        var count = 0
        try column.forEachValue(in: self) { (value: Value) in
            sum += value
            count += 1
        }
        return (sum, count)
    }
}

/// One stored property of a results' type, as aggregates read it.
struct StoredColumn {
    let typeName: String
    /// The results' type's schema, which spells its keys in errors (``keyText(_:)``).
    let schema: ObjectSchema
    let property: String
    let position: Int
    let projection: RecordProjection
    /// The same property read in place, when it is a number or a boolean.
    let inPlace: StoredNumberReading?

    init<Model: Persistable, Value>(_ keyPath: KeyPath<Model, Value>, of results: Results<Model>) throws {
        let source = results.source
        let schema = source.schema
        self.schema = schema
        typeName = source.plan.typeName
        let (name, position) = try results.storedProperty(keyPath)
        property = name
        self.position = position
        projection = RecordProjection(schema: schema, position: position, schemas: source.registry)
        inPlace = StoredNumberReading(schema: schema, position: position)
    }

    /// `key`, a result's, as errors spell it (an unsigned key as its value).
    func keyText(_ key: StorageKey) -> String { PrimaryKey.text(key, of: schema) }

    /// Calls `body` with the property's value in each result, in the results' order, skipping `nil`.
    func forEachValue<Model: Persistable, Value: RecordPrimitive>(
        in results: Results<Model>, _ body: (Value) throws -> Void
    ) throws {
        try forEachStoredValue(in: results) { (value: Value?, _) in
            if let value { try body(value) }
        }
    }

    /// Calls `body` with the property's value in each result and the result's key, in the
    /// results' order: `nil` for a stored `nil` when `Value` is not optional.
    func forEachStoredValue<Model: Persistable, Value: RecordPrimitive>(
        in results: Results<Model>, _ body: (Value?, StorageKey) throws -> Void
    ) throws {
        try forEachRecordValue(in: results) { record, key in
            guard let record else { return try body(nil, key) }
            try body(try converted(record, key: key), key)
        }
    }

    /// Calls `body` with the property's stored value in each result and the result's key, in the
    /// results' order: a single value, `.null` for `nil`, or `nil` for a value that is no single
    /// value.
    private func forEachRecordValue<Model: Persistable>(
        in results: Results<Model>, _ body: (RecordValue?, StorageKey) throws -> Void
    ) throws {
        try forEachRecordValue(in: results.source, found: results.isEveryObject ? nil : try results.foundKeys, body)
    }

    /// The pass of ``forEachRecordValue(in:_:)`` over every object of the source (`found` nil)
    /// or over the `found` keys. Generic over nothing, so that a caller adding numbers of a known
    /// type runs specialised, with no generic metadata looked up per value.
    private func forEachRecordValue(
        in source: QuerySource, found: FoundKeys?, _ body: (RecordValue?, StorageKey) throws -> Void
    ) throws {
        guard let found else {
            // In key order, each value read once where it lies.
            try source.snapshot.forEachValueInPlaceInKeyOrder(type: typeName) { key, bytes in
                if let inPlace, let stored = inPlace.value(in: bytes) {
                    try body(stored, key)
                } else {
                    try body(try recordValue(in: Array(bytes), key: key), key)
                }
            }
            return
        }
        for (position, key) in found.keys.enumerated() {
            try body(try recordValue(in: source.listedBytes(of: key, at: found.location(at: position)), key: key), key)
        }
    }

    /// The value the record `bytes` holds: for null, `nil` unless `Value` is optional (then its
    /// `nil`, which `distinct` lists); damage when it is not a `Value`.
    func value<Value: RecordPrimitive>(in bytes: [UInt8], key: StorageKey) throws -> Value? {
        guard let record = try recordValue(in: bytes, key: key) else { return nil }
        return try converted(record, key: key)
    }

    /// The single value the record `bytes` holds for the property, `.null` for `nil`, or `nil`
    /// when it holds no single value.
    private func recordValue(in bytes: [UInt8], key: StorageKey) throws -> RecordValue? {
        let stored: QueryValue
        do {
            stored = try projection.value(at: position, of: bytes)
        } catch {
            throw StoreError(error, typeName: typeName, key: keyText(key))
        }
        return stored.isNull ? .null : stored.scalarRecordValue
    }

    /// The sum and the number of the non-`nil` values of the property in the results, added in
    /// their order as `Value`'s `+` adds them, for the `Value`s a record stores as a 64-bit number
    /// (every integer type, `Double`, `Float`): in that number's type, with no generic call per
    /// value. An integer sum that leaves `Value`'s range throws, where Swift's `+` traps. `nil`
    /// for other types, which the caller adds through `Value`'s own `+`.
    func total<Model: Persistable, Value: AdditiveArithmetic & RecordPrimitive>(in results: Results<Model>) throws -> (Value, Int)? {
        let overflow = QueryError(.aggregateOverflow(typeName: typeName, property: property, type: "\(Value.self)"))
        let source = results.source
        // The found keys, only for a type added here: others are left to the caller, which finds them itself.
        func found() throws -> FoundKeys? { results.isEveryObject ? nil : try results.foundKeys }
        let valueType = "\(Value.self)"
        if let integer = Value.self as? any (FixedWidthInteger & RecordPrimitive).Type, integer.bitWidth <= 64 {
            if integer.isSigned {
                let range = Int64(truncatingIfNeeded: integer.min)...Int64(truncatingIfNeeded: integer.max)
                let (sum, count) = try add(in: source, found: try found(), valueType: valueType, start: Int64(0)) { record in
                    if case .int(let value) = record, range.contains(value) { value } else { nil }
                } plus: { sum, value in
                    let (partial, overflowed) = sum.addingReportingOverflow(value)
                    guard !overflowed, range.contains(partial) else { throw overflow }
                    return partial
                }
                return Value(recordValue: .int(sum)).map { ($0, count) }
            }
            let highest = UInt64(truncatingIfNeeded: integer.max)
            let (sum, count) = try add(in: source, found: try found(), valueType: valueType, start: UInt64(0)) { record in
                if case .uint(let value) = record, value <= highest { value } else { nil }
            } plus: { sum, value in
                let (partial, overflowed) = sum.addingReportingOverflow(value)
                guard !overflowed, partial <= highest else { throw overflow }
                return partial
            }
            return Value(recordValue: .uint(sum)).map { ($0, count) }
        }
        if Value.self == Double.self {
            let (sum, count) = try add(in: source, found: try found(), valueType: valueType, start: 0.0) { record in
                if case .double(let value) = record { value } else { nil }
            } plus: { $0 + $1 }
            return (sum as? Value).map { ($0, count) }
        }
        if Value.self == Float.self {
            let (sum, count) = try add(in: source, found: try found(), valueType: valueType, start: Float(0)) { record in
                if case .float(let value) = record { value } else { nil }
            } plus: { $0 + $1 }
            return (sum as? Value).map { ($0, count) }
        }
        return nil
    }

    /// Adds, in the results' order, the property's values as `number` reads them from the stored
    /// ones: `nil` and values that are no single value are skipped, a value `number` does not
    /// take is damage (it is no `valueType`). Generic over `Number` alone and called with a
    /// concrete one, so it runs specialised.
    private func add<Number>(
        in source: QuerySource, found: FoundKeys?, valueType: String, start: Number,
        _ number: (RecordValue) -> Number?, plus: (Number, Number) throws -> Number
    ) throws -> (sum: Number, count: Int) {
        var sum = start
        var count = 0
        try forEachRecordValue(in: source, found: found) { record, key in
            guard let record else { return }
            if case .null = record { return }
            guard let value = number(record) else {
                throw StoreError(.corruptedRecord(typeName: typeName, key: keyText(key), reason: "\(property) holds \(record), not a \(valueType)"))
            }
            sum = try plus(sum, value)
            count += 1
        }
        return (sum, count)
    }

    /// `record`, a single value the property holds, as a `Value`: for null, `nil` unless `Value`
    /// is optional (then its `nil`); damage when it is not a `Value`.
    private func converted<Value: RecordPrimitive>(_ record: RecordValue, key: StorageKey) throws -> Value? {
        if case .null = record { return Value(recordValue: .null) }
        guard let value = Value(recordValue: record) else {
            throw StoreError(.corruptedRecord(typeName: typeName, key: keyText(key), reason: "\(property) holds \(record), not a \(Value.self)"))
        }
        return value
    }

    /// For every object of the type (unfiltered results) and an indexed property: the value at
    /// the least or greatest end of its index, past `null` and NaN keys; of equal keys, the one
    /// of the least primary key, the first in the results' order. `nil` when that does not apply.
    func indexEnd<Model: Persistable, Value: RecordPrimitive>(of results: Results<Model>, least: Bool) throws -> Value? {
        guard results.isEveryObject, let index = results.source.indexes[position] else { return nil }
        func skipped(_ key: IndexKey) -> Bool {
            if case .null = key { return true }
            if case .double(let value) = key { return value.isNaN }
            return false
        }
        var found: IndexEntry?
        func take(_ entry: IndexEntry) -> Bool {
            if let first = found {
                // Read down from the greatest end, a group of equal keys comes in falling object
                // keys: its last entry has the least.
                guard !least, first.key == entry.key else { return false }
                found = entry
                return true
            }
            guard !skipped(entry.key) else { return true }
            found = entry
            return !least
        }
        if least {
            try index.snapshot.forEach(from: nil, to: nil, take)
        } else {
            try index.snapshot.forEachReversed(from: nil, to: nil, take)
        }
        guard let object = found?.object else { return nil }
        let bytes = try results.source.listedBytes(of: object)
        return try value(in: bytes, key: object)
    }
}

extension QueryValue {
    /// The record value of a single stored value; `nil` for null and for links, embedded
    /// records and containers, which no aggregate reads.
    var scalarRecordValue: RecordValue? {
        switch self {
        case .bool(let value): .bool(value)
        case .int(let value): .int(value)
        case .uint(let value): .uint(value)
        case .float(let value): .float(value)
        case .double(let value): .double(value)
        case .string(let value): .string(value)
        case .data(let value): .data(Data(value))
        case .date(let value): .date(value)
        case .uuid(let value): .uuid(value)
        case .decimal(let value): .decimal(value)
        case .url(let value): URL(string: value).map(RecordValue.url)
        case .null, .link, .embedded, .list, .dictionary: nil
        }
    }
}
