import Foundation
import MirrorStoreEngine

/// One value as a query sees it while it reads encoded records: scalars as stored, links as the
/// key they point at (resolved only when a condition looks through them), containers element by
/// element. Building one never creates a model.
indirect enum QueryValue: Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case float(Float)
    case double(Double)
    case string(String)
    case data([UInt8])
    case date(Date)
    case uuid(UUID)
    case decimal(Decimal)
    case url(String)
    /// A to-one link to the record of `typeName` stored under `key`.
    case link(typeName: String, key: StorageKey)
    /// A model without a primary key, embedded in its parent: its values in schema order.
    case embedded(ObjectSchema, [QueryValue])
    case list([QueryValue])
    case dictionary([String: QueryValue])

    /// The query form of a value a model holds (or a constant of the same type).
    init(_ record: RecordValue) {
        switch record {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .int(let value): self = .int(value)
        case .uint(let value): self = .uint(value)
        case .float(let value): self = .float(value)
        case .double(let value): self = .double(value)
        case .string(let value): self = .string(value)
        case .data(let value): self = .data([UInt8](value))
        case .date(let value): self = .date(value)
        case .uuid(let value): self = .uuid(value)
        case .decimal(let value): self = .decimal(value)
        case .url(let value): self = .url(value.absoluteString)
        case .object(let record):
            if let key = try? PrimaryKey.storageKey(of: record) {
                self = .link(typeName: record.objectSchema.typeName, key: key)
            } else {
                self = .embedded(record.objectSchema, record.values.map(QueryValue.init))
            }
        case .list(let list): self = .list(list.map(QueryValue.init))
        case .dictionary(let entries): self = .dictionary(entries.mapValues(QueryValue.init))
        }
    }

    var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Equality as the model's own `==` would answer it, for the values a record can hold.
    /// Returns `nil` where the answer needs the models (a link compared with anything but `nil`).
    func isEqual(to other: QueryValue) -> Bool? {
        switch (self, other) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.link, _), (_, .link), (.embedded, _), (_, .embedded): return nil
        // NaN equals nothing, as Swift's `==` answers; `compare(to:)` has no order for it.
        case (.double(let a), .double(let b)) where a.isNaN || b.isNaN: return false
        case (.float(let a), .float(let b)) where a.isNaN || b.isNaN: return false
        case (.list(let a), .list(let b)):
            guard a.count == b.count else { return false }
            for (x, y) in zip(a, b) {
                guard let equal = x.isEqual(to: y) else { return nil }
                if !equal { return false }
            }
            return true
        default:
            return compare(to: other).map { $0 == .orderedSame }
        }
    }

    /// The order of two values of one comparable kind, as Swift's `<` orders them; `nil` when the
    /// kinds differ or have no order. Unordered doubles (NaN) compare as neither less nor equal.
    func compare(to other: QueryValue) -> ComparisonResult? {
        // Written out per case: a generic helper costs a metadata lookup per comparison.
        switch (self, other) {
        case (.bool(let a), .bool(let b)): return a == b ? .orderedSame : (a ? .orderedDescending : .orderedAscending)
        case (.int(let a), .int(let b)): return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        case (.uint(let a), .uint(let b)): return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        case (.float(let a), .float(let b)):
            if a.isNaN || b.isNaN { return nil }
            return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        case (.double(let a), .double(let b)):
            if a.isNaN || b.isNaN { return nil }
            return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        case (.string(let a), .string(let b)): return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        case (.date(let a), .date(let b)): return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        case (.decimal(let a), .decimal(let b)): return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        case (.data(let a), .data(let b)): return a == b ? .orderedSame : nil
        case (.uuid(let a), .uuid(let b)): return a == b ? .orderedSame : nil
        case (.url(let a), .url(let b)): return a == b ? .orderedSame : nil
        default: return nil
        }
    }
}

extension QueryValue {
    /// Converts a constant captured by a predicate: anything a record can hold, enums by their raw
    /// value, optionals, arrays and sets of those. `nil` when the value has no record form.
    ///
    /// A URL with a base URL has no record form: Swift's `==` compares its base too, and a
    /// stored URL, read back from its absolute text, has none, so only the models can say. Nor
    /// has an optional of an optional holding `.some(nil)` (beside a lookup in a dictionary of
    /// optionals), which is not `nil`, though `.null` is the only nil a query value has.
    init?(constant value: Any) {
        if let optional = type(of: value) as? any NestedOptional.Type, optional.wrapsOptional, Self.holdsSomeNil(value) { return nil }
        if let primitive = value as? any RecordPrimitive {
            guard let converted = Self.constant(primitive.recordValue) else { return nil }
            self = converted
            return
        }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else {
                self = .null
                return
            }
            self.init(constant: wrapped)
            return
        }
        if let raw = value as? any RawRepresentable {
            self.init(constant: raw.rawValue)
            return
        }
        if mirror.displayStyle == .collection || mirror.displayStyle == .set {
            var elements: [QueryValue] = []
            for child in mirror.children {
                guard let element = QueryValue(constant: child.value) else { return nil }
                elements.append(element)
            }
            self = .list(elements)
            return
        }
        return nil
    }
}

extension QueryValue {
    /// How to convert a captured constant of `type`, chosen once per type: a value a record
    /// stores as it is converts directly; anything else goes through ``init(constant:)``.
    static func constantConversion<Value>(for type: Value.Type) -> (Value) -> QueryValue? {
        // An optional of an optional may hold `.some(nil)` (see ``init(constant:)``).
        if let optional = type as? any NestedOptional.Type, optional.wrapsOptional { return { QueryValue(constant: $0) } }
        guard let primitive = type as? any RecordPrimitive.Type else { return { QueryValue(constant: $0) } }
        return primitiveConversion(primitive, as: type)
    }

    /// Whether `value` is an optional whose wrapped value, at some depth, is an empty optional.
    private static func holdsSomeNil(_ value: Any) -> Bool {
        var current = Mirror(reflecting: value)
        while current.displayStyle == .optional, let wrapped = current.children.first?.value {
            let inner = Mirror(reflecting: wrapped)
            if inner.displayStyle == .optional, inner.children.isEmpty { return true }
            current = inner
        }
        return false
    }

    /// `Primitive` and `Value` are the same type, known here under two names.
    private static func primitiveConversion<Primitive: RecordPrimitive, Value>(
        _ primitive: Primitive.Type, as type: Value.Type
    ) -> (Value) -> QueryValue? {
        { constant(unsafeBitCast($0, to: Primitive.self).recordValue) }
    }

    /// The query form of a captured primitive, `nil` for a URL with a base (see
    /// ``init(constant:)``).
    private static func constant(_ value: RecordValue) -> QueryValue? {
        if case .url(let url) = value, url.baseURL != nil { return nil }
        return QueryValue(value)
    }
}

/// Tells an optional of an optional from other types, once per type.
private protocol NestedOptional {
    static var wrapsOptional: Bool { get }
}

extension Optional: NestedOptional {
    fileprivate static var wrapsOptional: Bool { Wrapped.self is any NestedOptional.Type }
}
