import Foundation

extension BackendModels {
    /// One ``LinkingObjects`` property a model declares: the source type and its link property.
    public struct Inverse: Sendable, Hashable {
        /// The stored type name of the model whose link this inverts.
        public let sourceTypeName: String
        /// The link property of that model.
        public let property: String
    }

    /// The inverses the type stored as `typeName` declares, in declaration order; empty for an
    /// unknown type.
    ///
    /// ```swift
    /// models.inverses(of: "Person")   // [Inverse(sourceTypeName: "Dog", property: "owner")]
    /// ```
    public func inverses(of typeName: String) -> [Inverse] {
        registry.plan(named: typeName)?.inverses.map { Inverse(sourceTypeName: $0.sourcePlan.typeName, property: $0.sourceProperty) } ?? []
    }

    /// The model made from `record`, its ``LinkingObjects`` (and those of the models it reaches)
    /// filled from `linkingRecords`, as a store read fills them: the model met again inside its
    /// own inverse is a copy whose inverse is empty, so reading ends.
    ///
    /// - Throws: ``MappingError`` when the record does not fit the model; ``StoreError``
    ///   (`.unknownModel`) when `Model` is not one of these types; what `linkingRecords` throws.
    public func model<Model: Persistable>(
        _ type: Model.Type, from record: ManagedObject, linkingRecords: some LinkingRecordSource
    ) throws -> Model {
        guard let plan = registry.plan(ofType: Model.self) else { throw StoreError(.unknownModel(typeName: Model.persistedTypeName)) }
        let resolver = BackendInverseResolver(source: linkingRecords)
        var context = DecodingContext(spansConversions: true)
        context.inverseResolver = resolver
        do {
            return try withExtendedLifetime(resolver) { () throws(MappingError) in
                try ModelMapping.model(type, from: record, plan: plan, context: &context)
            }
        } catch {
            throw context.inverses.takeFailure() ?? error
        }
    }
}

/// Reads inverses from a backend's ``LinkingRecordSource``, mapping each record in the read's
/// context, as the file store's reader does.
private final class BackendInverseResolver: InverseResolver {
    let source: any LinkingRecordSource

    init(source: any LinkingRecordSource) {
        self.source = source
    }

    func linkingModels<Source: Persistable>(
        _ type: Source.Type, plan: TypePlan, property: String, target: ManagedObject, context: inout DecodingContext
    ) throws -> [Source] {
        guard let keyName = target.objectSchema.primaryKey, let key = target[keyName] else { return [] }
        var models: [Source] = []
        for record in try source.records(of: plan.typeName, linkingThrough: property, to: key) {
            do throws(MappingError) {
                models.append(try ModelMapping.model(type, from: record, plan: plan, context: &context))
            } catch {
                throw error.nested(under: "[\(models.count)]")
            }
        }
        return models
    }
}
