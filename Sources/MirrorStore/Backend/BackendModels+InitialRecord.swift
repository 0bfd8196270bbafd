extension BackendModels {
    /// The record of the value `init()` gives the model type stored as `typeName`, or `nil` when
    /// it is not one of these types: what a property a migration adds starts from. Embedded
    /// models have no table of their own, so a backend only finds their Swift type here.
    ///
    /// ```swift
    /// let address = try models.initialRecord(named: "Address")   // street "", city nil
    /// ```
    ///
    /// - Throws: ``MappingError`` when the value `init()` gives cannot be mapped.
    public func initialRecord(named typeName: String) throws -> ManagedObject? {
        guard let plan = registry.plan(named: typeName) else { return nil }
        return try plan.modelType.init().managedObject()
    }
}
