import MirrorStoreEngine

extension ModelMapping {
    /// Fills `instance`, fresh from `init()`, with a flat plan's (`TypePlan.isFlat`) fields read
    /// straight from stored bytes written with the plan's own schema: one loop over the slots,
    /// with no sink, closure or conversion context per model. Returns `false` when any value, or
    /// the bytes themselves, need the general path, which then reads them again and reports what
    /// it finds; `instance` is then partly filled and must be dropped.
    static func fillSingleValues<Model>(of instance: inout Model, plan: TypePlan, reading bytes: [UInt8]) -> Bool {
        FieldMemory.withMutableFields(of: &instance, isClass: plan.isClass) { base in
            fillSingleValues(base, plan: plan, reading: bytes)
        }
    }

    private static func fillSingleValues(_ base: UnsafeMutableRawPointer, plan: TypePlan, reading bytes: [UInt8]) -> Bool {
        var reader = ByteReader(bytes)
        do throws(DecodeFailure) {
            guard try RecordGrammar.readsValueCount(plan.slots.count, from: &reader) else { return false }
            for slot in plan.slots {
                guard let primitive = slot.primitive,
                      try primitive.decode(from: &reader, into: base + slot.offset, optional: slot.isOptional) else { return false }
            }
            return reader.isAtEnd
        } catch {
            return false
        }
    }
}
