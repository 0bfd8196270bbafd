import MirrorStore

/// The condition of ``PostgresResults/linking(to:through:)``: the objects whose link column
/// holds one target's key. A to-one link compares its column (`link = $1`, which its B-tree
/// index answers); an array of links asks for the key among its elements (`links @> ARRAY[$1]`,
/// which its GIN index answers).
struct InverseLinkCondition: Sendable {
    let table: TableMapping
    let column: ColumnMapping
    let key: PrimaryKeyValue
    let keyType: ScalarType

    /// The condition's SQL, its key bound in `parameters`.
    func text(_ parameters: inout SQLParameters) throws -> String {
        let placeholder = try parameters.add(key.value, type: keyType)
        if case .linkArray = column.storage { return "\(table.qualified(column)) @> ARRAY[\(placeholder)]" }
        return "\(table.qualified(column)) = \(placeholder)"
    }
}
