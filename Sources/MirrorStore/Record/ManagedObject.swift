/// The storage record of one model instance: its ``objectSchema`` and one value per property.
///
/// Records are what the mapper produces and what stores persist. Values are read and written by
/// property name, and writes are checked against the schema:
///
/// ```swift
/// let record = try hero.managedObject()
/// record["realName"]                                   // "Tony Stark"
/// try record.setValue("Anthony Edward Stark", forProperty: "realName")
/// try record.setValue(42, forProperty: "realName")     // throws: expects String
/// let copy = try Hero.modelInstance(managedObject: record)
/// ```
///
/// A record is a reference type so that links between records can share targets and form cycles
/// exactly as the model graph did. Like a cyclic model graph, a cyclic record graph is not freed by
/// reference counting: call ``releaseGraph()`` when done with it. Records are not thread-safe:
/// models, not records, cross threads.
public final class ManagedObject: Hashable, CustomStringConvertible {
    /// The schema every value of this record conforms to.
    public let objectSchema: ObjectSchema
    // Unchecked exclusivity: the library never holds an access to `values` across a call that
    // could touch it again, and the dynamic check was a visible share of each conversion.
    @exclusivity(unchecked) var values: [RecordValue]

    /// The values in place, with no retain of their array: for the conversions' loops, where
    /// `values.withUnsafeBufferPointer` retains and releases the array once per record, a visible
    /// share of a linked record's conversion. Valid while the record lives and `values` is not
    /// assigned, which nothing does during a conversion.
    var valuesInPlace: UnsafeBufferPointer<RecordValue> {
        UnsafeBufferPointer(start: values._baseAddressIfContiguous, count: values.count)
    }

    /// Creates a record whose properties all hold ``RecordValue/null``.
    public init(objectSchema: ObjectSchema) {
        self.objectSchema = objectSchema
        values = Array(repeating: .null, count: objectSchema.properties.count)
    }

    /// Creates a record with one value per schema property, in schema order, unchecked.
    init(objectSchema: ObjectSchema, values: [RecordValue]) {
        self.objectSchema = objectSchema
        self.values = values
    }

    /// The value of the property called `name`, or `nil` when the schema has no such property.
    public subscript(name: String) -> RecordValue? {
        objectSchema.index(ofProperty: name).flatMap { values.indices.contains($0) ? values[$0] : nil }
    }

    /// The value of the property at `index` in the schema's property list.
    public subscript(propertyAt index: Int) -> RecordValue { values[index] }

    /// Sets the value of the property called `name`, after checking it against the property's kind.
    ///
    /// - Throws: ``MappingError`` when the schema has no such property or the value has the wrong
    ///   shape (wrong type, an integer that does not fit, `null` for a required property).
    public func setValue(_ value: RecordValue, forProperty name: String) throws {
        guard let index = objectSchema.index(ofProperty: name) else {
            throw MappingError(.missingProperty, modelType: objectSchema.typeName, path: [name])
        }
        try setValue(value, forPropertyAt: index)
    }

    /// Sets the property called `name` to a Swift value, after checking it against the
    /// property's kind.
    ///
    /// ```swift
    /// try record.setValue("\(first) \(last)", forProperty: "fullName")
    /// ```
    ///
    /// - Throws: ``MappingError`` when the schema has no such property or the value does not fit.
    public func setValue<Value: RecordPrimitive>(_ value: Value, forProperty name: String) throws {
        try setValue(value.recordValue, forProperty: name)
    }

    /// Sets the value of the property at `index` in the schema's property list, after checking it
    /// against the property's kind. Translators that know the schema's order use this to skip the
    /// name lookup.
    ///
    /// - Throws: ``MappingError`` when `index` is out of range or the value has the wrong shape.
    public func setValue(_ value: RecordValue, forPropertyAt index: Int) throws {
        guard objectSchema.properties.indices.contains(index), values.indices.contains(index) else {
            throw MappingError(.missingProperty, modelType: objectSchema.typeName, path: ["[\(index)]"])
        }
        let property = objectSchema.properties[index]
        guard property.kind.accepts(value) else {
            let problem: MappingError.Kind =
                if case .null = value { .unexpectedNil(expected: property.kind.description) } else {
                    .typeMismatch(expected: property.kind.description, found: value.description)
                }
            throw MappingError(problem, modelType: objectSchema.typeName, path: [property.name])
        }
        values[index] = value
    }

    /// Reads the property called `name` as a Swift value.
    ///
    /// ```swift
    /// let name: String = try record.value(forProperty: "name")
    /// let age = try record.value(forProperty: "age", as: Int?.self)
    /// ```
    public func value<Value: RecordPrimitive>(forProperty name: String, as type: Value.Type = Value.self) throws -> Value {
        guard let value = self[name] else {
            throw MappingError(.missingProperty, modelType: objectSchema.typeName, path: [name])
        }
        guard let result = Value(recordValue: value) else {
            let problem: MappingError.Kind =
                if case .null = value { .unexpectedNil(expected: "\(Value.self)") } else {
                    .typeMismatch(expected: "\(Value.self)", found: value.description)
                }
            throw MappingError(problem, modelType: objectSchema.typeName, path: [name])
        }
        return result
    }

    /// Sets every property of this record, and of every record linked from it, to null, so that a
    /// graph with cycles can be freed. A record whose schema has no links cannot be part of a cycle
    /// and is left as it is.
    ///
    /// ```swift
    /// let record = try node.managedObject()    // node.next.next === node
    /// let copy = try Node.modelInstance(managedObject: record)
    /// record.releaseGraph()
    /// ```
    public func releaseGraph() {
        guard objectSchema.hasLinks else { return }
        var pending = [self]
        var released = Set<ObjectIdentifier>()
        while let record = pending.popLast() {
            guard released.insert(ObjectIdentifier(record)).inserted else { continue }
            for index in record.values.indices {
                record.values[index].appendLinkedRecords(to: &pending)
                record.values[index] = .null
            }
        }
    }

    /// Records are equal only when they are the same record: links may form cycles, so a deep
    /// comparison would not end.
    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }

    /// Hashes the record's identity, matching `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// `TypeName(property: value, …)`, one level deep.
    public var description: String {
        let fields = zip(objectSchema.properties, values).map { "\($0.name): \($1)" }
        return "\(objectSchema.typeName)(\(fields.joined(separator: ", ")))"
    }
}
