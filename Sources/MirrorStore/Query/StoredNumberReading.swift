import MirrorStoreEngine

/// Reads one number (or boolean) property of a record in place, for aggregates over every
/// object: the values before it skipped by ``RawCursor``, the number read straight from its
/// bytes. Only a record whose bytes are exactly what the property's kind stores is read here;
/// any other (a container before the property, a tag the kind does not take, damage) is left to
/// ``StoredColumn/value(in:key:)``, which reads it again and reports what it finds, so both give
/// one answer (`AggregateTests` compares them on intact and damaged records).
struct StoredNumberReading: Sendable {
    /// The schema's count of values, and the property's position in it.
    let valueCount: Int
    let position: Int
    /// The tag the property's kind stores, and whether null is allowed.
    let tag: UInt8
    let isOptional: Bool
    /// The schema's tagless form, whose records it reads too.
    let tagless: TaglessLayout?

    /// A reader for the property at `position` of `schema`, or `nil` when its kind is no number
    /// or boolean.
    init?(schema: ObjectSchema, position: Int) {
        let kind = schema.properties[position].kind
        let unwrapped = if case .optional(let wrapped) = kind { wrapped } else { kind }
        switch unwrapped {
        case .int, .int8, .int16, .int32, .int64: tag = ValueTag.int.rawValue
        case .uint, .uint8, .uint16, .uint32, .uint64: tag = ValueTag.uint.rawValue
        case .double: tag = ValueTag.double.rawValue
        case .float: tag = ValueTag.float.rawValue
        case .bool: tag = ValueTag.true.rawValue
        default: return nil
        }
        valueCount = schema.properties.count
        self.position = position
        isOptional = kind.isOptional
        tagless = schema.taglessLayout
    }

    /// The property's value in `bytes`, or `nil` for a record this read leaves to the general one.
    @inline(__always)
    func value(in bytes: UnsafeRawBufferPointer) -> RecordValue? {
        var cursor = RawCursor(bytes)
        let found: UInt8
        if let tagless, let bitmapStart = cursor.skipTaglessStart(tagless.bitmap) {
            for index in 0..<position {
                guard cursor.skipBodyQuickly(ofTag: cursor.impliedTag(tagless, at: index, bitmapStart: bitmapStart)) else { return nil }
            }
            found = cursor.impliedTag(tagless, at: position, bitmapStart: bitmapStart)
        } else {
            guard cursor.skipVarint() == UInt64(valueCount) else { return nil }
            for _ in 0..<position {
                guard cursor.skipSingleValueQuickly() else { return nil }
            }
            guard let tag = cursor.byte() else { return nil }
            found = tag
        }
        if found == ValueTag.null.rawValue { return isOptional ? .null : nil }
        switch tag {
        case ValueTag.int.rawValue:
            guard found == tag, let bits = cursor.skipVarint() else { return nil }
            return .int(RawCursor.unzigzag(bits))
        case ValueTag.uint.rawValue:
            guard found == tag, let value = cursor.skipVarint() else { return nil }
            return .uint(value)
        case ValueTag.double.rawValue:
            guard found == tag, let bits = cursor.uint64() else { return nil }
            return .double(Double(bitPattern: bits))
        case ValueTag.float.rawValue:
            guard found == tag, let bits = cursor.uint32() else { return nil }
            return .float(Float(bitPattern: bits))
        default:
            if found == ValueTag.true.rawValue { return .bool(true) }
            if found == ValueTag.false.rawValue { return .bool(false) }
            return nil
        }
    }
}
