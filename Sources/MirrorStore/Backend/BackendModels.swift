import Foundation

/// The model types a storage backend keeps, as MirrorStore sees them: every type the models given
/// reach through links and embedded models, each with its schema, and the translation of
/// predicates on them into a ``QueryTree``.
///
/// This is the read-only view a backend outside this package (the PostgreSQL backend in
/// `Backends/MirrorStorePostgres`) builds on; the file store does not use it.
///
/// ```swift
/// let models = try BackendModels(models: [Hero.self])
/// models.types.map(\.schema.typeName)          // ["Hero", "Publisher"]
/// let tree = try models.queryTree(for: #Predicate<Hero> { $0.name == "Hulk" })
/// print(tree.condition)                         // name == "Hulk"
/// ```
public struct BackendModels: Sendable {
    /// One model type a backend keeps.
    public struct ModelType: Sendable {
        /// The type's schema: its stored type name, properties and primary key.
        public let schema: ObjectSchema
        /// The properties the model lists in `uniqueProperties`.
        public let uniqueProperties: [String]
        /// The model's `compoundIndexes`.
        public let compoundIndexes: [CompoundIndex]
        /// The model's `deleteRules`, each on a stored link to a model with a primary key
        /// (``BackendModels/init(models:)`` refuses any other).
        public let deleteRules: [String: DeleteRule]

        init(_ plan: TypePlan) {
            schema = plan.schema
            uniqueProperties = plan.modelType.uniqueProperties
            compoundIndexes = plan.modelType.compoundIndexes
            deleteRules = plan.modelType.deleteRules
        }
    }

    let registry: ModelRegistry

    /// Every model type `models` reach, the models themselves included, by stored type name.
    public let types: [ModelType]

    /// Reflects `models` and every model type they reach.
    ///
    /// - Throws: ``MappingError`` for a model that cannot be mapped; ``StoreError`` when two
    ///   types share a stored type name, or for a delete rule on a property that is not a link
    ///   (`.invalidDeleteRule`).
    public init(models: [any Persistable.Type]) throws {
        let registry = try ModelRegistry(models: models)
        self.registry = registry
        types = registry.typeNames.compactMap { registry.plan(named: $0) }.map(ModelType.init)
    }

    /// The kept type stored under `typeName`, if any.
    public func type(named typeName: String) -> ModelType? {
        registry.plan(named: typeName).map(ModelType.init)
    }

    /// The kept type of the Swift type `type`, if any.
    public func type(of type: any Persistable.Type) -> ModelType? {
        registry.plan(ofType: type).map(ModelType.init)
    }

    /// The stored property `keyPath` names, or `nil` for a computed property, a path through
    /// another value, or a type that is not one of these.
    ///
    /// ```swift
    /// models.propertyName(of: \Hero.name)     // "name"
    /// ```
    public func propertyName<Model: Persistable>(of keyPath: PartialKeyPath<Model>) -> String? {
        guard let schema = registry.plan(ofType: Model.self)?.schema,
              let name = KeyPathNames.propertyName(of: keyPath, rootType: Model.self),
              schema.index(ofProperty: name) != nil else { return nil }
        return name
    }

    /// The stored property `keyPath` names and `value` as that property's record value, for a
    /// backend's `update(_:primaryKey:set:to:)`, which writes one property of a stored record.
    ///
    /// ```swift
    /// let (property, value) = try models.recordValue("Tony", for: \Hero.name)   // ("name", .string("Tony"))
    /// ```
    ///
    /// - Throws: ``StoreError`` (`.notAStoredProperty` for a computed or ignored property or a
    ///   path through another value; `.unknownModel`); ``MappingError`` for a value that cannot
    ///   be stored.
    public func recordValue<Model: Persistable, Value>(
        _ value: Value, for keyPath: KeyPath<Model, Value>
    ) throws -> (property: String, value: RecordValue) {
        guard let plan = registry.plan(ofType: Model.self) else {
            throw StoreError(.unknownModel(typeName: Model.persistedTypeName))
        }
        guard let name = KeyPathNames.propertyName(of: keyPath, rootType: Model.self),
              let position = plan.schema.index(ofProperty: name) else {
            throw StoreError(.notAStoredProperty(typeName: plan.typeName, keyPath: "\(keyPath)"))
        }
        do throws(MappingError) {
            return (name, try plan.fields[position].recordValue(of: value))
        } catch {
            throw error.nested(under: name).reported(from: plan.typeName)
        }
    }

    /// The tree of `predicate` as the file store plans it, in the public form a backend reads.
    ///
    /// Parts the tree does not expose are ``QueryExpression/other``: a backend must then decide
    /// the objects by evaluating `predicate` itself on the models.
    ///
    /// - Throws: ``QueryError`` for a predicate that reads an ignored property; ``StoreError``
    ///   (`.unknownModel`) when `Model` is not one of these types.
    public func queryTree<Model: Persistable>(for predicate: Predicate<Model>) throws -> QueryTree {
        guard registry.plan(ofType: Model.self) != nil else {
            throw StoreError(.unknownModel(typeName: Model.persistedTypeName))
        }
        let (node, root) = try PredicateTranslator(registry: registry).translate(predicate)
        return QueryTree(condition: QueryExpression(node, root: root))
    }
}
