/// The shape of one model type as it is stored: its name and its ordered properties.
///
/// Reflection builds one schema per model type, once; every ``ManagedObject`` of that type shares
/// it. Stores keep schemas in their files so a changed model is noticed on open.
///
/// ```swift
/// let schema = try Hero.objectSchema()
/// schema.typeName                       // "Hero"
/// schema.primaryKey                     // "identifier"
/// schema.property(named: "tags")?.kind  // [String]
/// ```
public final class ObjectSchema: Hashable, Sendable, CustomStringConvertible {
    /// One stored property.
    public struct Property: Hashable, Sendable, CustomStringConvertible {
        /// The property's name, as declared in the model.
        public let name: String
        /// What the property stores; optional properties have an ``PropertyKind/optional(_:)`` kind.
        public let kind: PropertyKind
        /// Whether this property is the model's primary key.
        public let isPrimaryKey: Bool
        /// Whether the model asked for an index on this property.
        public let isIndexed: Bool

        /// Creates a property description.
        public init(name: String, kind: PropertyKind, isPrimaryKey: Bool = false, isIndexed: Bool = false) {
            self.name = name
            self.kind = kind
            self.isPrimaryKey = isPrimaryKey
            self.isIndexed = isIndexed
        }

        /// Whether the property may be `nil`.
        public var isOptional: Bool { kind.isOptional }

        /// `name: Kind`, with `(primary key)` or `(indexed)` when they apply.
        public var description: String {
            var text = "\(name): \(kind)"
            if isPrimaryKey { text += " (primary key)" }
            if isIndexed { text += " (indexed)" }
            return text
        }
    }

    /// The stored name of the model type.
    public let typeName: String
    /// The stored properties, in declaration order (inherited ones first).
    public let properties: [Property]
    /// Properties the model declared but asked not to store.
    public let ignoredProperties: [String]
    /// The name of the primary-key property, if the model has one.
    public let primaryKey: String?
    /// The position of the primary-key property in ``properties``.
    let primaryKeyPosition: Int?
    let positions: [String: Int]
    /// Whether any property links to another model, at any depth.
    let hasLinks: Bool
    /// How its records may be written without tags, when every property is a required single value.
    let taglessLayout: TaglessLayout?

    /// Creates a schema. Property names must be unique.
    public init(typeName: String, properties: [Property], ignoredProperties: [String] = []) {
        self.typeName = typeName
        self.properties = properties
        self.ignoredProperties = ignoredProperties
        primaryKeyPosition = properties.firstIndex(where: \.isPrimaryKey)
        primaryKey = primaryKeyPosition.map { properties[$0].name }
        var positions: [String: Int] = [:]
        for (index, property) in properties.enumerated() where positions[property.name] == nil {
            positions[property.name] = index
        }
        self.positions = positions
        hasLinks = properties.contains { $0.kind.containsLink }
        taglessLayout = TaglessLayout(properties)
    }

    /// The names of the indexed properties.
    public var indexedProperties: [String] { properties.filter(\.isIndexed).map(\.name) }

    /// The property called `name`, if the schema has one.
    public func property(named name: String) -> Property? {
        positions[name].map { properties[$0] }
    }

    /// `position` when the property there is named `name`, else the position of the one named
    /// `name`: a query node knows both, and the position spares a search by name.
    func position(ofProperty name: String, near position: Int) -> Int? {
        if properties.indices.contains(position), properties[position].name == name { return position }
        return positions[name]
    }

    /// The position of the property called `name` in ``properties``.
    public func index(ofProperty name: String) -> Int? { positions[name] }

    /// Whether two schemas describe the same type name, properties and ignored properties.
    public static func == (lhs: ObjectSchema, rhs: ObjectSchema) -> Bool {
        lhs === rhs
            || (lhs.typeName == rhs.typeName && lhs.properties == rhs.properties
                && lhs.ignoredProperties == rhs.ignoredProperties)
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(typeName)
        hasher.combine(properties)
    }

    /// `TypeName { property: Kind, … }`.
    public var description: String {
        "\(typeName) { \(properties.map(\.description).joined(separator: ", ")) }"
    }
}
