import MirrorStore

extension ManagedObject {
    /// A copy of this record in which `name` has the kind and value given, so tests can hand the
    /// mapper records that do not match the model.
    func replacing(_ name: String, kind: PropertyKind, with value: RecordValue) throws -> ManagedObject {
        let properties = objectSchema.properties.map { property in
            property.name == name ? ObjectSchema.Property(name: name, kind: kind) : property
        }
        let copy = ManagedObject(objectSchema: ObjectSchema(typeName: objectSchema.typeName, properties: properties))
        for property in properties {
            try copy.setValue(property.name == name ? value : self[property.name] ?? .null, forProperty: property.name)
        }
        return copy
    }

    /// A copy of this record without the property `name`.
    func removing(_ name: String) throws -> ManagedObject {
        let properties = objectSchema.properties.filter { $0.name != name }
        let copy = ManagedObject(objectSchema: ObjectSchema(typeName: objectSchema.typeName, properties: properties))
        for property in properties {
            try copy.setValue(self[property.name] ?? .null, forProperty: property.name)
        }
        return copy
    }
}
