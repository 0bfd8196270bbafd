/// A migration that cannot be carried out. The store file is left exactly as it was, and the next
/// open tries the migration again.
///
/// ```swift
/// do {
///     let store = try Store(path: path, models: [Person.self], configuration: configuration)
/// } catch let error as MigrationError {
///     print(error)   // Person.name cannot be renamed: the stored Person has no property name.
/// }
/// ```
public struct MigrationError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What went wrong. New cases may be added; switch with a `default`.
    public enum Kind: Equatable, Sendable {
        /// A rename, enumeration or deletion names a type neither the file nor the models have.
        case unknownType(typeName: String)
        /// A rename's source is not a property of the stored type.
        case missingProperty(typeName: String, property: String)
        /// A rename's target is not a property of the model.
        case unknownProperty(typeName: String, property: String)
        /// A type is renamed to a name the file already uses.
        case typeNameTaken(typeName: String)
        /// A property changed kind in a way no automatic rule converts, and no
        /// ``Migration/enumerateObjects(ofType:_:)`` on its type converts it.
        case needsConversion(typeName: String, property: String, from: String, to: String)
        /// As ``needsConversion(typeName:property:from:to:)``, where the kinds differ only in
        /// the model they hold, `storedType`, which no model has any more, and `modelType`: a
        /// type whose `persistedTypeName` changed without ``Migration/renameType(from:to:)``.
        case typeNotRenamed(typeName: String, property: String, from: String, to: String, storedType: String, modelType: String)
        /// A stored value cannot take the property's new kind (an integer too large for a
        /// narrower type, say).
        case valueDoesNotFit(typeName: String, property: String, value: String, kind: String)
        /// Two migrated objects have the same primary key.
        case duplicatePrimaryKey(typeName: String, key: String)
        /// A migrated object links to an object the migrated store does not have.
        case missingLinkTarget(typeName: String, key: String, linkedFrom: String)
        /// An object given to ``Migration/delete(_:)`` is neither one being enumerated nor one
        /// the migration created.
        case notMigrating(typeName: String)
    }

    /// What went wrong.
    public let kind: Kind

    init(_ kind: Kind) { self.kind = kind }

    /// One sentence: what could not be done and what to do.
    public var description: String {
        let unchanged = "the store is unchanged."
        switch kind {
        case .unknownType(let typeName):
            return "The migration names the type \(typeName), which neither the store nor the models have; \(unchanged)"
        case .missingProperty(let typeName, let property):
            return "\(typeName).\(property) cannot be renamed: the stored \(typeName) has no property \(property); \(unchanged)"
        case .unknownProperty(let typeName, let property):
            return "A property cannot be renamed to \(typeName).\(property): the model \(typeName) has no property \(property); \(unchanged)"
        case .typeNameTaken(let typeName):
            return "A type cannot be renamed to \(typeName): the store already has a type \(typeName); \(unchanged)"
        case .needsConversion(let typeName, let property, let from, let to):
            return "\(typeName).\(property) changed from \(from) to \(to), which no automatic rule converts; convert it in migration.enumerateObjects(ofType: \"\(typeName)\"); \(unchanged)"
        case .typeNotRenamed(let typeName, let property, let from, let to, let storedType, let modelType):
            return "\(typeName).\(property) changed from \(from) to \(to), which no automatic rule converts: \(BackendModels.renameTypeAdvice(from: storedType, to: modelType)); otherwise convert it in migration.enumerateObjects(ofType: \"\(typeName)\"); \(unchanged)"
        case .valueDoesNotFit(let typeName, let property, let value, let kind):
            return "\(typeName).\(property) holds \(value), which a \(kind) cannot hold; convert it in migration.enumerateObjects(ofType: \"\(typeName)\"); \(unchanged)"
        case .duplicatePrimaryKey(let typeName, let key):
            return "After the migration two \(typeName) objects have the primary key \(key); \(unchanged)"
        case .missingLinkTarget(let typeName, let key, let linkedFrom):
            return "After the migration a \(linkedFrom) links to the \(typeName) with key \(key), which does not exist; \(unchanged)"
        case .notMigrating(let typeName):
            return "A \(typeName) given to migration.delete(_:) is neither being enumerated nor created by the migration; \(unchanged)"
        }
    }
}
