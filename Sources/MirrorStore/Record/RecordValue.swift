import Foundation

/// One value held by a ``ManagedObject``.
///
/// Signed integers of every width are stored as ``int(_:)`` and unsigned ones as ``uint(_:)``;
/// the property's ``PropertyKind`` records the width. Literals make comparisons read naturally:
///
/// ```swift
/// let record = try hero.managedObject()
/// record["realName"] == "Tony Stark"   // true
/// record["identifier"] == 1455         // true
/// ```
public enum RecordValue: Hashable, CustomStringConvertible {
    /// No value: an optional property holding `nil`.
    case null
    /// A `Bool`.
    case bool(Bool)
    /// A signed integer of any width, widened to 64 bits.
    case int(Int64)
    /// An unsigned integer of any width, widened to 64 bits.
    case uint(UInt64)
    /// A `Float`.
    case float(Float)
    /// A `Double`.
    case double(Double)
    /// A `String`.
    case string(String)
    /// A `Data` value.
    case data(Data)
    /// A `Date`.
    case date(Date)
    /// A `UUID`.
    case uuid(UUID)
    /// A `Decimal`.
    case decimal(Decimal)
    /// A `URL`.
    case url(URL)
    /// A to-one link to another record.
    case object(ManagedObject)
    /// The elements of an array or a set.
    case list(List<RecordValue>)
    /// The entries of a `[String: Value]` dictionary.
    case dictionary([String: RecordValue])

    /// A short rendering for error messages: the case and its payload.
    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let v): "bool(\(v))"
        case .int(let v): "int(\(v))"
        case .uint(let v): "uint(\(v))"
        case .float(let v): "float(\(v))"
        case .double(let v): "double(\(v))"
        case .string(let v): "string(\(v.debugDescription))"
        case .data(let v): "data(\(v.count) bytes)"
        case .date(let v): "date(\(v.timeIntervalSinceReferenceDate))"
        case .uuid(let v): "uuid(\(v.uuidString))"
        case .decimal(let v): "decimal(\(v))"
        case .url(let v): "url(\(v.absoluteString))"
        case .object(let record): "object(\(record.objectSchema.typeName))"
        case .list(let list): "list(\(list.count) elements)"
        case .dictionary(let dictionary): "dictionary(\(dictionary.count) entries)"
        }
    }
}

extension RecordValue: ExpressibleByNilLiteral {
    /// Creates ``null``.
    public init(nilLiteral: ()) { self = .null }
}

extension RecordValue: ExpressibleByBooleanLiteral {
    /// Creates a ``bool(_:)`` value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension RecordValue: ExpressibleByIntegerLiteral {
    /// Creates an ``int(_:)`` value.
    public init(integerLiteral value: Int64) { self = .int(value) }
}

extension RecordValue: ExpressibleByFloatLiteral {
    /// Creates a ``double(_:)`` value.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension RecordValue: ExpressibleByStringLiteral {
    /// Creates a ``string(_:)`` value.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension RecordValue: ExpressibleByArrayLiteral {
    /// Creates a ``list(_:)`` value.
    public init(arrayLiteral elements: RecordValue...) { self = .list(List(elements)) }
}

extension RecordValue {
    /// Appends the records this value links to directly or through containers.
    func appendLinkedRecords(to records: inout [ManagedObject]) {
        switch self {
        case .object(let record): records.append(record)
        case .list(let list): for element in list { element.appendLinkedRecords(to: &records) }
        case .dictionary(let entries): for element in entries.values { element.appendLinkedRecords(to: &records) }
        default: break
        }
    }
}
