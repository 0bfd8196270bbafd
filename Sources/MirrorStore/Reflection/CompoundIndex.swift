/// An index over several stored properties of a model, in order, declared in
/// ``Persistable/compoundIndexes``. A query with equality conditions on its first properties (and
/// optionally a range on the next) reads one range of it; a unique one refuses two objects that
/// agree on all its properties.
///
/// ```swift
/// final class Player: Persistable {
///     var id = 0
///     var team = ""
///     var number = 0
///     var city = ""
///     var age = 0
///     init() {}
///     static var primaryKey: String? { "id" }
///     static var compoundIndexes: [CompoundIndex] { [.unique("team", "number"), ["city", "age"]] }
/// }
/// ```
///
/// Each property must hold single values (numbers, strings, dates, booleans, UUIDs, data, or
/// optionals of them). As in SQL, a unique compound index does not compare objects with `nil` in
/// one of its properties.
public struct CompoundIndex: Hashable, Sendable, ExpressibleByArrayLiteral, CustomStringConvertible {
    /// The indexed properties, the first deciding most.
    public let properties: [String]
    /// Whether two objects may not agree on every property.
    public let isUnique: Bool

    /// An index over `properties`, in order.
    public init(_ properties: [String], unique: Bool = false) {
        self.properties = properties
        isUnique = unique
    }

    /// An index over the listed properties: `["city", "age"]`.
    public init(arrayLiteral properties: String...) {
        self.init(properties)
    }

    /// A unique index over `properties`: no two objects agree on all of them.
    public static func unique(_ properties: String...) -> CompoundIndex {
        CompoundIndex(properties, unique: true)
    }

    /// The properties joined by `+`, as the index is named in plans and errors: `team+number`.
    public var description: String { properties.joined(separator: "+") }

    /// Whether a property of `kind` can be part of a compound index: a single value whose index
    /// key equals another exactly when Swift's `==` says so.
    static func accepts(_ kind: PropertyKind) -> Bool {
        switch kind {
        case .optional(let wrapped): accepts(wrapped)
        case .bool, .int, .int8, .int16, .int32, .int64, .uint, .uint8, .uint16, .uint32, .uint64,
             .float, .double, .string, .date, .uuid, .data: true
        default: false
        }
    }
}
