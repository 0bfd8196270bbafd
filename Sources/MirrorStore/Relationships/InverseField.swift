/// One ``LinkingObjects`` property of a model type: where it lives and which link it inverts.
/// Class-bound, like `FieldAccessor`, so plans share it by reference.
protocol InverseField: AnyObject {
    /// The inverse property's name in the declaring model.
    var name: String { get }
    /// The name of the link property of the source model.
    var sourceProperty: String { get }
    /// The plan of the model whose link this inverts.
    var sourcePlan: TypePlan { get }
    /// The filled `LinkingObjects` value for the record `target`, as `Any` so that readers can
    /// keep it for struct copies of the same record.
    func value(linkingTo target: ManagedObject, resolver: any InverseResolver, context: inout DecodingContext) throws -> Any
    /// Stores a value made by `value(linkingTo:resolver:context:)` into the field.
    func assign(_ value: Any, to base: UnsafeMutableRawPointer)
}

final class LinkingObjectsField<Source: Persistable>: InverseField {
    let name: String
    let offset: Int
    let sourceProperty: String
    let sourcePlan: TypePlan

    init(name: String, offset: Int, sourceProperty: String, sourcePlan: TypePlan) {
        self.name = name
        self.offset = offset
        self.sourceProperty = sourceProperty
        self.sourcePlan = sourcePlan
    }

    func value(linkingTo target: ManagedObject, resolver: any InverseResolver, context: inout DecodingContext) throws -> Any {
        let objects = try resolver.linkingModels(
            Source.self, plan: sourcePlan, property: sourceProperty, target: target, context: &context)
        return LinkingObjects(property: sourceProperty, objects: objects)
    }

    func assign(_ value: Any, to base: UnsafeMutableRawPointer) {
        guard let value = value as? LinkingObjects<Source> else { return }
        FieldMemory.store(value, to: base, at: offset)
    }
}

/// What the type plan recognises a ``LinkingObjects`` property by.
protocol InverseRelationship {
    /// The source property named by the value stored at `offset` from `base`.
    static func sourceProperty(in base: UnsafeRawPointer, at offset: Int) -> String
    static func field(
        name: String, offset: Int, sourceProperty: String, factory: inout CodecFactory
    ) throws(MappingError) -> any InverseField
}

extension LinkingObjects: InverseRelationship {
    static func sourceProperty(in base: UnsafeRawPointer, at offset: Int) -> String {
        FieldMemory.load(Self.self, from: base, at: offset).property
    }

    static func field(
        name: String, offset: Int, sourceProperty: String, factory: inout CodecFactory
    ) throws(MappingError) -> any InverseField {
        LinkingObjectsField<Source>(
            name: name, offset: offset, sourceProperty: sourceProperty, sourcePlan: try factory.plan(for: Source.self))
    }
}

/// A stored property the type plan found to be a ``LinkingObjects``.
struct InverseCandidate {
    let field: StoredField
    let relationship: any InverseRelationship.Type

    /// The inverse fields of `model`. The source property names are instance values, so they
    /// are read once, from a model made with `init()`.
    static func fields(
        _ candidates: [InverseCandidate], of model: any Persistable.Type, isClass: Bool, factory: inout CodecFactory
    ) throws(MappingError) -> [any InverseField] {
        guard !candidates.isEmpty else { return [] }
        let properties = sourceProperties(candidates, of: model, isClass: isClass)
        var fields: [any InverseField] = []
        for (candidate, property) in zip(candidates, properties) {
            do throws(MappingError) {
                fields.append(try candidate.relationship.field(
                    name: candidate.field.name, offset: candidate.field.offset, sourceProperty: property, factory: &factory))
            } catch {
                throw error.nested(under: candidate.field.name)
            }
        }
        return fields
    }

    private static func sourceProperties<Model: Persistable>(
        _ candidates: [InverseCandidate], of model: Model.Type, isClass: Bool
    ) -> [String] {
        let instance = Model._autoMalloc()
        return FieldMemory.withFields(of: instance, isClass: isClass) { base in
            candidates.map { $0.relationship.sourceProperty(in: base, at: $0.field.offset) }
        }
    }
}
