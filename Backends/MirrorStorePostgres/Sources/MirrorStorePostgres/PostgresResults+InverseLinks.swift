import MirrorStore

extension PostgresResults {
    /// The results whose link property `property` points at the object of its target type under
    /// `primaryKey`: the inverse of that link, as a `LinkingObjects` of the target lists it, in
    /// SQL. A to-one link (`Dog.owner`) matches by its column, an array or set of links
    /// (`Dog.walkers`) when the key is among its elements; either way the link's index answers.
    ///
    /// ```swift
    /// let annsDogs = try store.objects(Dog.self).linking(to: 1, through: "owner")
    /// let walkedByAnn = try store.objects(Dog.self).linking(to: 1, through: "walkers")
    ///     .filter(#Predicate { $0.age < 3 })
    /// ```
    ///
    /// An array that still holds the key of a target deleted since matches that key, as the
    /// file store's links do.
    ///
    /// - Throws: `QueryError` (`.unknownProperty`) for a property the model does not store;
    ///   ``PostgresStoreError`` (`.unsupportedQuery`) for a property that is not a link;
    ///   `StoreError` (`.primaryKeyMismatch`) for a key of another type than the target's;
    ///   ``PostgresStoreError`` (`.unsupportedQuery`) after ``prefix(_:)``, as for a filter.
    public func linking(to primaryKey: some RecordPrimitive, through property: String) throws -> PostgresResults<Model> {
        guard limit == nil else {
            throw PostgresStoreError(.unsupportedQuery(reason: "linking(to:through:) after prefix(_:) is not supported yet; narrow first"))
        }
        guard let column = table.column(named: property) else {
            throw QueryError(.unknownProperty(typeName: table.typeName, property: property))
        }
        guard let target = column.linkTarget else {
            throw PostgresStoreError(.unsupportedQuery(reason: "\(table.typeName).\(property) holds \(column.kind), not a link to a model with a primary key"))
        }
        let targetTable = try store.mapping.table(named: target)
        let key = try PrimaryKeys.check(primaryKey.recordValue, table: targetTable)
        guard case .scalar(let keyType) = targetTable.primaryKey.storage else {
            throw PostgresStoreError(.unsupportedQuery(reason: "\(target) has no primary key of a single value"))
        }
        var copy = self
        copy.inverseLinks.append(InverseLinkCondition(table: table, column: column, key: PrimaryKeyValue(value: key), keyType: keyType))
        return copy
    }
}
