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
