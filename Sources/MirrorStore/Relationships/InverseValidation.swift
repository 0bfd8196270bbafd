extension TypePlan {
    /// Refuses inverses that cannot be filled: the declaring model needs a primary key, and the
    /// source property must be a to-one or to-many link to the declaring model, of a shape the
    /// store indexes. Runs once every plan of a build is complete, since the source's plan may
    /// still have been under construction when the inverse was found.
    func checkInverses() throws(MappingError) {
        for inverse in inverses {
            let source = inverse.sourcePlan.typeName
            let property = inverse.sourceProperty
            let path = [inverse.name]
            guard schema.primaryKey != nil else {
                throw MappingError(.inverseWithoutPrimaryKey(sourceType: source, sourceProperty: property), modelType: typeName, path: path)
            }
            guard let kind = inverse.sourcePlan.schema.property(named: property)?.kind else {
                throw MappingError(.inverseOfMissingProperty(sourceType: source, sourceProperty: property), modelType: typeName, path: path)
            }
            guard let target = kind.invertibleLinkTarget else {
                throw MappingError(
                    .inverseOfNonLink(sourceType: source, sourceProperty: property, kind: kind.description),
                    modelType: typeName, path: path)
            }
            guard target == typeName else {
                throw MappingError(
                    .inverseOfOtherLink(sourceType: source, sourceProperty: property, linkedType: target),
                    modelType: typeName, path: path)
            }
        }
    }
}

extension PropertyKind {
    /// The model a property of this kind links to, for the shapes whose links the store indexes
    /// one entry per linked object: `T`, `T?`, `[T]`, `[T?]` and `Set<T>`.
    var invertibleLinkTarget: String? {
        switch self {
        case .object(let target), .optional(.object(let target)), .list(.object(let target)),
             .list(.optional(.object(let target))), .set(.object(let target)):
            target
        default:
            nil
        }
    }
}
