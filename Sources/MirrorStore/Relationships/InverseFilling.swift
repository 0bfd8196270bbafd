/// Fills the inverse properties of a model just decoded from a record, during a store read.
enum InverseFilling {
    /// Called by the mapping once `base`'s stored properties are filled from `record`. Outside a
    /// store (no resolver in the context) inverses keep their `init()` value, which is empty.
    ///
    /// The objects of an inverse are decoded in an identity scope of their own, so they never
    /// share an instance with the model being filled: a dog that pointed back at the very person
    /// listing it would make the two hold each other, a cycle ARC never frees. Within the scope,
    /// links share identity as usual.
    ///
    /// Each record's inverses are read once per read, and every later copy of the record gets
    /// the value already read. A copy made while its own record's inverses are being read (the
    /// owner inside one of its dogs) keeps them empty, so reading ends.
    static func fill(
        _ base: UnsafeMutableRawPointer, from record: ManagedObject, plan: TypePlan, context: inout DecodingContext
    ) throws(MappingError) {
        guard let resolver = context.inverseResolver else { return }
        let identity = ObjectIdentifier(record)
        let started = context.inverses.inProgress.insert(identity).inserted
        defer { if started { context.inverses.inProgress.remove(identity) } }
        for (position, field) in plan.inverses.enumerated() {
            let slot = InverseState.Slot(record: identity, field: position)
            if let known = context.inverses.values[slot] {
                field.assign(known.value, to: base)
                continue
            }
            guard started else { continue }
            let value: Any
            let outerScope = context.startIdentityScope()
            defer { context.endIdentityScope(restoring: outerScope) }
            do {
                value = try field.value(linkingTo: record, resolver: resolver, context: &context)
                try ModelMapping.fillUnfilled(&context)
            } catch let error as MappingError {
                throw error.nested(under: field.name).reported(from: plan.typeName)
            } catch {
                // The mapping throws MappingError only; the reader rethrows the original.
                if context.inverses.failure == nil { context.inverses.failure = error }
                throw MappingError(
                    .unsupportedModel("reading the \(field.sourcePlan.typeName) objects that link to it failed: \(error)"),
                    modelType: plan.typeName, path: [field.name])
            }
            context.inverses.values[slot] = InverseState.Value(record: record, value: value)
            field.assign(value, to: base)
        }
    }
}

/// What one read has learned about inverses, kept in its ``DecodingContext``.
struct InverseState {
    struct Slot: Hashable {
        let record: ObjectIdentifier
        let field: Int
    }

    struct Value {
        /// Held so the record's identity cannot be reused by another record during the read.
        let record: ManagedObject
        let value: Any
    }

    /// Records whose inverses are being read further up the stack.
    var inProgress = Set<ObjectIdentifier>()
    /// Inverses already read, per record and field.
    var values: [Slot: Value] = [:]
    /// The first error a resolver threw that is not a `MappingError`, for the reader to rethrow.
    var failure: (any Error)?

    /// The failure, once: the reader throws it instead of the `MappingError` that carried it out.
    mutating func takeFailure() -> (any Error)? {
        defer { failure = nil }
        return failure
    }
}
