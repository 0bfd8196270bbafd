import Foundation

extension Store {
    /// The objects whose property named `key` equals `value`: for code that names properties at
    /// run time, with the results of the predicate `#Predicate { $0.<key> == value }`.
    ///
    /// ```swift
    /// let hulks: Results<Hero> = try store.recover(key: "name", value: "Hulk")
    /// let marvel = try store.recover(Hero.self, key: "publisher.name", value: "Marvel")
    ///     .sorted(using: SortDescriptor(\.name))
    /// let unnamed = try store.recover(Hero.self, key: "realName", value: nil)
    /// ```
    ///
    /// The condition is planned like the predicate's, on an index when the property has one (see
    /// ``Results/plan``), and decided on the stored records without decoding models. `key` is a
    /// stored property, or a dotted path through to-one links and embedded models, followed as
    /// optional chaining would (`"publisher.name"` reads `$0.publisher?.name`). `nil` matches
    /// objects where the path reads `nil`. An integer `value` matches any numeric property that
    /// holds it exactly, as an integer literal would; a `Double` matches a `Float` property as a
    /// float literal would. The results can be filtered and sorted further.
    ///
    /// - Throws: ``QueryError`` for a property the model does not store (unknown or ignored), or
    ///   a value of another kind than the property's; ``StoreError`` or ``MappingError`` as
    ///   ``objects(_:)`` throws them.
    public func recover<Model: Persistable>(
        _ type: Model.Type = Model.self, key: String, value: (any RecordPrimitive)?
    ) throws -> Results<Model> {
        try objects(type).filter(key: key, equals: value?.recordValue ?? .null)
    }
}

extension Results {
    /// The results whose property at `path` equals `value`, as ``Store/recover(_:key:value:)``
    /// describes.
    func filter(key path: String, equals value: RecordValue) throws -> Results<Model> {
        let root = PredicateExpressions.Variable<Model>().key
        let property = try PropertyPath(path, in: source.schema, schemas: source.registry, root: root)
        let node = try property.comparison(.equal, value, parsingText: false)
        return try filter(QueryCondition(node: node, root: root))
    }
}
