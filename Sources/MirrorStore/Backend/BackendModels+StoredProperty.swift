import Foundation

extension BackendModels {
    /// The stored property `keyPath` names, checked as ``Results``' aggregates and projections
    /// check it, so that a backend refuses the same key paths with the same errors.
    ///
    /// ```swift
    /// try models.storedPropertyName(of: \Hero.age)     // "age"
    /// ```
    ///
    /// - Throws: ``QueryError`` (`.unknownProperty` for a computed property or a path through
    ///   another value, `.ignoredProperty`); ``StoreError`` (`.unknownModel`).
    public func storedPropertyName<Model: Persistable, Value>(of keyPath: KeyPath<Model, Value>) throws -> String {
        guard let schema = registry.plan(ofType: Model.self)?.schema else {
            throw StoreError(.unknownModel(typeName: Model.persistedTypeName))
        }
        guard let name = KeyPathNames.propertyName(of: keyPath, rootType: Model.self) else {
            throw QueryError(.unknownProperty(typeName: schema.typeName, property: KeyPathNames.errorName(of: keyPath, rootType: Model.self)))
        }
        if schema.ignoredProperties.contains(name) { throw QueryError(.ignoredProperty(typeName: schema.typeName, property: name)) }
        guard schema.index(ofProperty: name) != nil else { throw QueryError(.unknownProperty(typeName: schema.typeName, property: name)) }
        return name
    }
}

extension BackendModels {
    /// The names along `keyPath`, from `Model` through to-one links and embedded models, checked
    /// as ``Results/changes(keyPaths:)`` checks a watched key path: what a backend's observation
    /// reads from each result's record and the records it links to.
    ///
    /// ```swift
    /// try models.propertyPath(of: \Hero.publisher?.name)     // ["publisher", "name"]
    /// ```
    ///
    /// - Throws: ``QueryError`` (`.unknownProperty` for a computed property or a path going on
    ///   from a property that is not a to-one link or an embedded model, `.ignoredProperty`,
    ///   `.nestingTooDeep`); ``StoreError`` (`.unknownModel`).
    public func propertyPath<Model: Persistable>(of keyPath: PartialKeyPath<Model>) throws -> [String] {
        guard let schema = registry.plan(ofType: Model.self)?.schema else {
            throw StoreError(.unknownModel(typeName: Model.persistedTypeName))
        }
        guard let text = KeyPathNames.dottedPath(of: keyPath, rootType: Model.self) else {
            throw QueryError(.unknownProperty(typeName: schema.typeName, property: KeyPathNames.errorName(of: keyPath, rootType: Model.self)))
        }
        _ = try PropertyPath(text, in: schema, schemas: registry, root: PredicateExpressions.Variable<Model>().key)
        return text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }
}
