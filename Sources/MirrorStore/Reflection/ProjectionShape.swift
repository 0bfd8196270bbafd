import MirrorStoreEngine

/// Where the stored properties of a projection type come from in its model's records: for each
/// property of the model's schema, the projection field it fills, or none (the value is skipped,
/// unread). Made once per read by whoever checked that the two types agree.
struct ProjectionShape {
    /// The projection type's plan.
    let plan: TypePlan
    /// Per property of the model's schema, the projection's field index, or `nil`.
    let fieldIndex: [Int?]
}

/// Fills a projection's fields as ``RecordDecoder`` reads the model's record: the properties the
/// projection has go to its ``ModelFieldSink`` under their own index, the others are skipped.
struct ProjectionSink: RecordSink {
    var fields: ModelFieldSink
    let shape: ProjectionShape

    mutating func readDirectly(_ index: Int, tag: UInt8?, from reader: inout ByteReader) throws -> Bool {
        guard shape.fieldIndex.indices.contains(index) else {
            throw MappingError(.unsupportedModel("the stored record has more values than the model has properties"), modelType: shape.plan.typeName)
        }
        guard let field = shape.fieldIndex[index] else {
            if let tag {
                try RecordGrammar.skipBody(ofTag: tag, from: &reader)
            } else {
                try RecordGrammar.skipValue(from: &reader)
            }
            return true
        }
        return try fields.readDirectly(field, tag: tag, from: &reader)
    }

    mutating func take(_ index: Int, _ value: RecordValue) throws {
        // Only properties the projection has get here: `readDirectly` skips the others.
        guard shape.fieldIndex.indices.contains(index), let field = shape.fieldIndex[index] else { return }
        try fields.take(field, value)
    }
}
