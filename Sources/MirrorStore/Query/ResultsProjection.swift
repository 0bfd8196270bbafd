import MirrorStoreEngine

/// Projections: some of the results' stored properties, read without making the models.
///
/// ```swift
/// let names = try store.objects(Hero.self).sorted(using: SortDescriptor(\.name)).values(\.name)
///
/// struct HeroCard: Persistable {        // a lighter type: some of Hero's properties, by name
///     var name = ""
///     var publisher: Publisher?
///     init() {}
/// }
/// let cards = try store.objects(Hero.self).projected(as: HeroCard.self)
/// ```
///
/// `values(_:)` reads one property from the stored records, as the aggregates do; a projection
/// type is filled through the same reader as the model (links included), with the properties it
/// does not have skipped in the bytes, unread.
extension Results {
    /// The values of `property` in the results, in their order: what `map(\.name)` gives, read
    /// from the stored records without making models, or from the property's index alone when
    /// the results come from it (sorted by it, or filtered by a range it answers) and its keys
    /// are the values exactly (integers, booleans, dates). For an optional property, `nil` where
    /// the result holds none.
    ///
    /// - Throws: ``QueryError`` when `property` is not a stored property; ``StoreError`` when a
    ///   record cannot be read.
    public func values<Value: RecordPrimitive>(_ property: KeyPath<Model, Value>) throws -> [Value] {
        let column = try StoredColumn(property, of: self)
        // Only a non-optional `Value` reads a stored nil as `nil`: damage.
        func nilHeld(by key: StorageKey) -> StoreError {
            StoreError(.corruptedRecord(typeName: column.typeName, key: column.keyText(key), reason: "\(column.property) holds nil, which a \(Value.self) cannot"))
        }
        if let fromIndex: [(Value?, StorageKey)] = try column.valuesFromIndex(of: self) {
            return try fromIndex.map { value, key in
                guard let value else { throw nilHeld(by: key) }
                return value
            }
        }
        var values: [Value] = []
        values.reserveCapacity(count)
        try column.forEachStoredValue(in: self) { (value: Value?, key) in
            guard let value else { throw nilHeld(by: key) }
            values.append(value)
        }
        return values
    }

    /// The results as instances of `type`, in their order: a lighter type whose stored properties
    /// are some of the model's, with the same names and types. The model's other properties are
    /// skipped in the stored bytes, never decoded; links are read as the model's would be, so a
    /// linked model shared by several results comes back as one instance.
    ///
    /// - Throws: ``QueryError`` when `type` has a property the model does not store as the same
    ///   type; ``StoreError`` when a record cannot be read;
    ///   ``MappingError`` for a value the projection cannot hold.
    public func projected<Projection: Persistable>(as type: Projection.Type) throws -> [Projection] {
        let shape = try projectionShape(of: type)
        let reader = source.reader()
        var projections: [Projection] = []
        projections.reserveCapacity(count)
        let found = try foundKeys
        for (position, key) in found.keys.enumerated() {
            let bytes = try source.listedBytes(of: key, at: found.location(at: position))
            projections.append(try reader.projection(type, shape: shape, key: key, bytes: bytes))
        }
        return projections
    }

    /// Where each of the projection's properties comes from in the model's records, checked.
    private func projectionShape<Projection: Persistable>(of type: Projection.Type) throws -> ProjectionShape {
        let plan = try PlanCache.shared.plan(for: type)
        let schema = source.schema
        func mismatch(_ property: String, _ reason: String) -> QueryError {
            QueryError(.projectionMismatch(typeName: schema.typeName, projection: plan.typeName, property: property, reason: reason))
        }
        var fieldIndex = [Int?](repeating: nil, count: schema.properties.count)
        for (field, property) in plan.schema.properties.enumerated() {
            guard let position = schema.index(ofProperty: property.name) else {
                let why = schema.ignoredProperties.contains(property.name) ? "it is an ignored property of \(schema.typeName)" : "\(schema.typeName) stores no such property"
                throw mismatch(property.name, why)
            }
            let stored = schema.properties[position].kind
            guard stored == property.kind else {
                throw mismatch(property.name, "it is \(property.kind) in \(plan.typeName) but \(stored) in \(schema.typeName)")
            }
            fieldIndex[position] = field
        }
        return ProjectionShape(plan: plan, fieldIndex: fieldIndex)
    }
}
