extension BackendModels {
    /// A model of `type` made from the values of its stored properties, in the order of its
    /// schema's `properties`: straight into the model, with no ``ManagedObject`` in between, when
    /// every property is a single value; through a record otherwise (links, containers, embedded
    /// models and enums), as ``Persistable/modelInstance(managedObject:)`` makes it.
    ///
    /// A backend that reads rows calls it once per row: the values are checked as the record
    /// path checks them, and the model is the one that path makes.
    ///
    /// ```swift
    /// let hero = try models.model(Hero.self, values: [.int(1), .string("Hulk")])
    /// ```
    ///
    /// - Throws: ``MappingError`` naming the property when a value does not fit it (another
    ///   type, an integer out of range, `null` for a property that is not optional), or when
    ///   `values` has another count than the type has properties.
    public func model<Model: Persistable>(_ type: Model.Type, values: [RecordValue]) throws -> Model {
        try ModelMapping.model(type, values: values)
    }
}
