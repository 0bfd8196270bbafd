/// A model MirrorStore can store: a plain struct, which may have `let` properties and no
/// `init()`, or a class with an `init()`.
///
/// Conforming is all a model needs; reflection finds its stored properties once per type and the
/// default implementations convert instances to ``ManagedObject`` records and back.
///
/// ```swift
/// final class Hero: Persistable {
///     var identifier = 0
///     var name = ""
///     var tags: [String] = []
///     var publisher: Publisher?
///     init() {}
///     static var primaryKey: String? { "identifier" }
/// }
///
/// let record = try hero.managedObject()
/// let copy = try Hero.modelInstance(managedObject: record)
/// ```
///
/// Stored properties must be of a supported type (see ``PropertyKind``), or be listed in
/// ``ignoredProperties``; a class's must be `var`s. `lazy` properties are not stored.
///
/// A struct with a `let` property is built from its record in fresh memory rather than through
/// `init()`: every stored property must be in the record, and ignored and `lazy` properties take
/// their types' empty values: `0`, `""`, `nil`, empty containers, an enum's first case.
public protocol Persistable: _AutoMallocObjectProtocol {
    /// The name of the property that identifies a record, or `nil` for none.
    static var primaryKey: String? { get }
    /// Properties to index in a store: queries on them read an ordered index instead of every
    /// object. Links to models with a primary key are indexed without being listed.
    static var indexedProperties: [String] { get }
    /// Properties no two stored objects may share a non-`nil` value of. Each is indexed; a
    /// transaction that breaks the rule throws ``StoreError`` and writes nothing.
    static var uniqueProperties: [String] { get }
    /// String properties to index by their folded form, ignoring case and diacritics: a
    /// ``TextMatch`` with ``TextOptions/insensitive`` (equality, prefixes) and an insensitive sort
    /// read it.
    static var insensitiveIndexedProperties: [String] { get }
    /// Indexes over several properties (see ``CompoundIndex``): `[.unique("team", "number")]`.
    static var compoundIndexes: [CompoundIndex] { get }
    /// Stored properties that are not persisted; read back, they keep their `init()` value (their
    /// empty value in a struct with `let` properties).
    static var ignoredProperties: [String] { get }
    /// What deleting goes on to do, per link property of this model to models with a primary
    /// key (see ``DeleteRule``); links not listed are ``DeleteRule/nullify``. Not part of the
    /// schema: a change of rule needs no migration.
    static var deleteRules: [String: DeleteRule] { get }
    /// The type's name in records and store files. Defaults to the unqualified type name.
    static var persistedTypeName: String { get }

    /// The record of this instance and, through links, of every model it reaches.
    ///
    /// A store reads and writes models by their reflected plans and may convert an instance
    /// without calling this method or ``modelInstance(managedObject:)``: their reflection-driven
    /// defaults give the same records.
    func managedObject() throws -> ManagedObject
    /// A new instance filled from `managedObject`.
    static func modelInstance(managedObject: ManagedObject) throws -> Self
}

extension Persistable {
    public static var primaryKey: String? { nil }
    public static var indexedProperties: [String] { [] }
    public static var uniqueProperties: [String] { [] }
    public static var compoundIndexes: [CompoundIndex] { [] }
    public static var insensitiveIndexedProperties: [String] { [] }
    public static var ignoredProperties: [String] { [] }
    public static var deleteRules: [String: DeleteRule] { [:] }
    public static var persistedTypeName: String { String(describing: Self.self) }

    /// Converts the instance by reflection.
    ///
    /// - Throws: ``MappingError`` naming the property path when a value cannot be stored.
    public func managedObject() throws -> ManagedObject {
        try ModelMapping.record(for: self)
    }

    /// Creates an instance filled from the record: through `init()`, or, for a struct with `let`
    /// properties, in fresh memory.
    ///
    /// - Throws: ``MappingError`` when the record is of another type, lacks a property, or holds a
    ///   value the property's type cannot take.
    public static func modelInstance(managedObject: ManagedObject) throws -> Self {
        try ModelMapping.model(Self.self, from: managedObject)
    }

    /// The schema reflection derives for this model type.
    ///
    /// - Throws: ``MappingError`` when the model declares a property that cannot be stored.
    public static func objectSchema() throws -> ObjectSchema {
        try PlanCache.shared.plan(for: Self.self).schema
    }
}
