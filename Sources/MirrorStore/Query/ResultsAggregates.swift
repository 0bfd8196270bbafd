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
        var best: Value?
        try column.forEachValue(in: self) { (value: Value) in
            // Only NaN differs from itself.
            if value != value { return }
            guard let current = best else {
                best = value
                return
            }
            if least ? value < current : current < value { best = value }
        }
        return best
    }

    private func total<Stored: RecordPrimitive, Value: AdditiveArithmetic & RecordPrimitive>(
        of property: KeyPath<Model, Stored>
    ) throws -> (sum: Value, count: Int) {
        let column = try StoredColumn(property, of: self)
        var sum = Value.zero
        var count = 0
        if let integer = Value.self as? any (FixedWidthInteger & RecordPrimitive).Type {
            func add<Integer: FixedWidthInteger & RecordPrimitive>(_ type: Integer.Type) throws -> Integer {
                var sum = Integer.zero
                try column.forEachValue(in: self) { (value: Integer) in
                    let (partial, overflow) = sum.addingReportingOverflow(value)
                    guard !overflow else {
                        throw QueryError(.aggregateOverflow(typeName: column.typeName, property: column.property, type: "\(Integer.self)"))
                    }
                    sum = partial
                    count += 1
                }
                return sum
            }
            // `Value` is `Integer` itself: the cast back cannot fail.
            if let exact = try add(integer) as? Value { sum = exact }
            return (sum, count)
        }
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
    let property: String
    let position: Int
    let projection: RecordProjection

    init<Model: Persistable, Value>(_ keyPath: KeyPath<Model, Value>, of results: Results<Model>) throws {
        let source = results.source
        let schema = source.schema
        typeName = source.plan.typeName
        guard let name = KeyPathNames.propertyName(of: keyPath, rootType: Model.self) else {
            throw QueryError(.unknownProperty(typeName: typeName, property: KeyPathNames.errorName(of: keyPath, rootType: Model.self)))
        }
        if schema.ignoredProperties.contains(name) { throw QueryError(.ignoredProperty(typeName: typeName, property: name)) }
        guard let position = schema.index(ofProperty: name) else {
            throw QueryError(.unknownProperty(typeName: typeName, property: name))
        }
        property = name
        self.position = position
        projection = RecordProjection(schema: schema, properties: [name], schemas: source.registry)
    }

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
        let source = results.source
        if results.isEveryObject {
            // In key order without sorting the keys first, each value read once.
            try source.snapshot.forEachEntryInKeyOrder(type: typeName) { key, bytes in
                try body(try value(in: bytes, key: key), key)
            }
            return
        }
        for key in results.allKeys {
            try body(try value(in: source.listedBytes(of: key), key: key), key)
        }
    }

    /// The value the record `bytes` holds: for null, `nil` unless `Value` is optional (then its
    /// `nil`, which `distinct` lists); damage when it is not a `Value`.
    func value<Value: RecordPrimitive>(in bytes: [UInt8], key: StorageKey) throws -> Value? {
        let stored: QueryValue
        do {
            stored = try projection.value(at: position, of: bytes)
        } catch {
            throw StoreError(error, typeName: typeName, key: key.description)
        }
        guard let record = stored.scalarRecordValue else { return stored.isNull ? Value(recordValue: .null) : nil }
        guard let value = Value(recordValue: record) else {
            throw StoreError(.corruptedRecord(typeName: typeName, key: key.description, reason: "\(property) holds \(record), not a \(Value.self)"))
        }
        return value
    }

    /// For every object of the type (unfiltered results) and an indexed property: the value at
    /// the least or greatest end of its index, past `null` and NaN keys; of equal keys, the one
    /// of the least primary key, the first in the results' order. `nil` when that does not apply.
    func indexEnd<Model: Persistable, Value: RecordPrimitive>(of results: Results<Model>, least: Bool) throws -> Value? {
        guard results.isEveryObject, let index = results.source.indexes[position] else { return nil }
        let entries = index.snapshot.positions
        var position = least ? entries.startIndex : entries.endIndex - 1
        func skipped(_ key: IndexKey) -> Bool {
            if case .null = key { return true }
            if case .double(let value) = key { return value.isNaN }
            return false
        }
        while entries.indices.contains(position), skipped(entries[position].key) {
            position += least ? 1 : -1
        }
        guard entries.indices.contains(position) else { return nil }
        if !least {
            let key = entries[position].key
            while position > entries.startIndex, entries[position - 1].key == key { position -= 1 }
        }
        let object = entries[position].object
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
