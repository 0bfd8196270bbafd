/// Finds the stored objects that link to a record: the store's side of filling inverses. The
/// mapping calls it through the ``DecodingContext`` of a read, so it decodes with that context
/// and objects met twice in one read stay one object.
protocol InverseResolver: AnyObject {
    /// The stored `Source` models whose `property` links to `target`, in primary-key order.
    func linkingModels<Source: Persistable>(
        _ type: Source.Type, plan: TypePlan, property: String, target: ManagedObject, context: inout DecodingContext
    ) throws -> [Source]
}
