import MirrorStoreEngine

extension RecordReader: InverseResolver {
    /// Reads the linking objects through this reader, so each record is decoded once and meets
    /// the instances already made from it.
    func linkingModels<Source: Persistable>(
        _ type: Source.Type, plan: TypePlan, property: String, target: ManagedObject, context: inout DecodingContext
    ) throws -> [Source] {
        guard let targetKey = try PrimaryKey.storageKey(of: target) else { return [] }
        let keys = try LinkingKeys.keys(
            of: plan.typeName, property: property, linkingTo: targetKey,
            snapshot: snapshot, pending: pending, schemas: schemas)
        var models: [Source] = []
        models.reserveCapacity(keys.count)
        for key in keys {
            guard let record = try record(type: plan.typeName, key: key) else { continue }
            do throws(MappingError) {
                models.append(try ModelMapping.model(type, from: record, plan: plan, context: &context))
            } catch {
                throw error.nested(under: "[\(models.count)]")
            }
        }
        return models
    }
}
