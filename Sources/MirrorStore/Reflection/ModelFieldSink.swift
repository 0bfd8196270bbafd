import MirrorStoreEngine

/// Fills a new model's fields as ``RecordDecoder`` reads its stored record: single-value fields
/// straight from the bytes (``StoredValueType/decode(from:into:optional:)``), the others from the
/// `RecordValue` the decoder builds, through their accessors. Errors name the field and the type.
struct ModelFieldSink: RecordSink {
    private let base: UnsafeMutableRawPointer
    private let plan: TypePlan
    private let fields: [any FieldAccessor]
    private let slots: UnsafeBufferPointer<FieldSlot>
    /// The conversion's context, which outlives this sink (see ``ModelMapping``).
    private let context: UnsafeMutablePointer<DecodingContext>
    /// How many fields have been filled.
    private(set) var filled = 0

    init(base: UnsafeMutableRawPointer, plan: TypePlan, context: UnsafeMutablePointer<DecodingContext>) {
        self.base = base
        self.plan = plan
        fields = plan.fields
        slots = plan.slots
        self.context = context
    }

    mutating func readDirectly(_ index: Int, tag: UInt8?, from reader: inout ByteReader) throws -> Bool {
        guard slots.indices.contains(index) else { throw tooManyValues }
        let slot = slots[index]
        guard let primitive = slot.primitive,
              primitive.decode(tag: tag, from: &reader, into: base + slot.offset, optional: slot.isOptional) else { return false }
        filled += 1
        return true
    }

    mutating func take(_ index: Int, _ value: RecordValue) throws {
        guard fields.indices.contains(index) else { throw tooManyValues }
        try ModelMapping.write(value, field: fields[index], slot: slots[index], to: base, plan: plan, context: &context.pointee)
        filled += 1
    }

    private var tooManyValues: MappingError {
        MappingError(.unsupportedModel("the stored record has more values than the model has properties"), modelType: plan.typeName)
    }

    /// Throws unless every field was filled.
    func checkComplete() throws(MappingError) {
        guard filled == fields.count else {
            throw MappingError(.missingProperty, modelType: plan.typeName, path: [fields[min(filled, fields.count - 1)].name])
        }
    }
}
