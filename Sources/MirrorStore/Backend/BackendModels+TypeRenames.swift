extension BackendModels {
    /// The stored type and the model's type when a property's kind changed only in the name of
    /// the model it holds, and the stored name is no model's any more (`Box?` stored, `Crate?`
    /// in the model): most likely a `persistedTypeName` changed without `renameType(from:to:)`.
    /// Both stores then say so (``renameTypeAdvice(from:to:)``) rather than only that no
    /// automatic rule converts the kind.
    ///
    /// ```swift
    /// BackendModels.renamedModel(from: .optional(.object(typeName: "Box")), to: .optional(.object(typeName: "Crate")),
    ///                            isModel: { $0 == "Crate" })   // ("Box", "Crate")
    /// ```
    public static func renamedModel(
        from stored: PropertyKind, to model: PropertyKind, isModel: (String) -> Bool
    ) -> (stored: String, model: String)? {
        switch (stored.unwrapped, model.unwrapped) {
        case (.object(let old), .object(let new)):
            return old != new && !isModel(old) ? (old, new) : nil
        case (.list(let old), .list(let new)), (.set(let old), .set(let new)), (.list(let old), .set(let new)),
             (.set(let old), .list(let new)), (.dictionary(let old), .dictionary(let new)):
            return renamedModel(from: old, to: new, isModel: isModel)
        default:
            return nil
        }
    }

    /// What both stores advise when a property's kind names `stored`, which no model has any
    /// more, where the model names `model` (see ``renamedModel(from:to:isModel:)``).
    ///
    /// ```swift
    /// BackendModels.renameTypeAdvice(from: "Box", to: "Crate")
    /// // if Box was renamed Crate, say so with migration.renameType(from: "Box", to: "Crate")
    /// ```
    public static func renameTypeAdvice(from stored: String, to model: String) -> String {
        "if \(stored) was renamed \(model), say so with migration.renameType(from: \(stored.debugDescription), to: \(model.debugDescription))"
    }
}
