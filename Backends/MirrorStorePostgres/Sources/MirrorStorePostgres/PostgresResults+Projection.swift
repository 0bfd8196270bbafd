import MirrorStore

/// Projections: the results as instances of a lighter type whose stored properties are some of
/// the model's, as MirrorStore's `Results.projected(as:)` makes them.
///
/// ```swift
/// struct HeroCard: Persistable {        // some of Hero's properties, by name
///     var name = ""
///     var publisher: Publisher?
///     init() {}
/// }
/// let cards = try await store.objects(Hero.self).filter(#Predicate { $0.age > 40 }).projected(as: HeroCard.self)
/// ```
extension PostgresResults {
    /// The results as instances of `type`, in their order: each made from the result's record
    /// (links read as the model's are), with the projection's properties alone.
    ///
    /// The rows are read as ``all(isolation:)`` reads them, whole: the projection saves making
    /// the model's other properties, not reading them.
    ///
    /// - Throws: `QueryError` (`.projectionMismatch`) when `type` has a property the model does
    ///   not store as the same kind, before anything is read; what ``all(isolation:)`` throws.
    public func projected<Projection: Persistable>(
        as type: Projection.Type, isolation: isolated (any Actor)? = #isolation
    ) async throws -> [Projection] {
        let schema = try projectionSchema(of: type)
        let table = table
        // Made while the reader lives: it lets go of the records it linked once it is done.
        return try await read(isolation: isolation, { reader, condition, parameters, orderBy, limit in
            let records = try await reader.records(table: table, condition: condition, parameters: parameters, orderBy: orderBy, limit: limit)
            return try records.map { (projection: try Self.projection(Projection.self, schema: schema, of: $0), model: try reader.model(Model.self, from: $0)) }
        }, model: \.model).map(\.projection)
    }

    /// The projection of `record`: its values of the projection's properties.
    private static func projection<Projection: Persistable>(_ type: Projection.Type, schema: ObjectSchema, of record: ManagedObject) throws -> Projection {
        let projection = ManagedObject(objectSchema: schema)
        for property in schema.properties {
            try projection.setValue(record[property.name] ?? .null, forProperty: property.name)
        }
        return try Projection.modelInstance(managedObject: projection)
    }

    /// The schema of `type`, checked against the model's as `Results.projected(as:)` checks it.
    private func projectionSchema<Projection: Persistable>(of type: Projection.Type) throws -> ObjectSchema {
        let schema = try Projection().managedObject().objectSchema
        let stored = table.schema
        for property in schema.properties {
            func mismatch(_ reason: String) -> QueryError {
                QueryError(.projectionMismatch(typeName: stored.typeName, projection: schema.typeName, property: property.name, reason: reason))
            }
            guard let kind = stored.property(named: property.name)?.kind else {
                let ignored = store.mapping.models.type(named: stored.typeName)?.schema.ignoredProperties.contains(property.name) == true
                throw mismatch(ignored ? "it is an ignored property of \(stored.typeName)" : "\(stored.typeName) stores no such property")
            }
            guard kind == property.kind else {
                throw mismatch("it is \(property.kind) in \(schema.typeName) but \(kind) in \(stored.typeName)")
            }
        }
        return schema
    }
}
