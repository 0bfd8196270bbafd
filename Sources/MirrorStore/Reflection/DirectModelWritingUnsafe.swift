import Foundation
import MirrorStoreEngine

/// A model's stored bytes and primary key, written straight from its fields
/// (``ModelMapping/writeDirectly(_:plan:tagless:)``).
struct DirectRecord {
    /// The primary key's storage key, or nil for a model without one.
    let key: StorageKey?
    let bytes: [UInt8]
}

extension ModelMapping {
    /// The bytes `RecordEncoder` writes for `model`'s record (`record(for:)`), and the storage
    /// key `PrimaryKey.storageKey(of:)` takes from it, written straight from the model's fields
    /// by the plan's ``TypePlan/directSteps``, the steps the direct fill reads the same bytes with:
    /// one loop with no `ManagedObject`, `RecordValue` or conversion context, each string's UTF-8
    /// copied once, into the record's bytes. `plan` must be the plan of `model`'s dynamic type.
    /// `tagless`: whether the record may take the tagless form (`RecordEncoder.writesTagless`).
    ///
    /// Nil when the plan has no direct steps, or for a value the encoder refuses (a NaN date):
    /// the general path then converts and encodes the model, and reports it. Such plans hold no
    /// links (an embedded struct has no primary key) and no enums, so the record has no linked
    /// records to save and no enum values to record.
    static func writeDirectly<Model>(_ model: Model, plan: TypePlan, tagless: Bool) -> DirectRecord? {
        guard let steps = plan.directSteps else { return nil }
        return FieldMemory.withFields(of: model, isClass: plan.isClass) { base in
            writeDirectly(at: base, steps: steps, plan: plan, tagless: tagless)
        }
    }

    private static func writeDirectly(
        at base: UnsafeRawPointer, steps: UnsafeBufferPointer<DirectStep>, plan: TypePlan, tagless: Bool
    ) -> DirectRecord? {
        var writer = ByteWriter()
        writer.reserve(16 * steps.count)
        if tagless, let layout = plan.schema.taglessLayout {
            // Every step is then a required single value of the root, one per property in
            // schema order (a tagless layout has no optionals, containers or embedded models).
            writer.byte(TaglessLayout.marker)
            let bitmapStart = writer.bytes.count
            for _ in 0..<layout.bitmapSize { writer.byte(0) }
            for index in steps.indices {
                let step = steps[index]
                if let bit = layout.bit(at: index) {
                    if base.load(fromByteOffset: step.offset, as: Bool.self) {
                        writer.bytes[bitmapStart + bit >> 3] |= 1 << UInt8(bit & 7)
                    }
                    continue
                }
                guard step.type.write(at: base + step.offset, optional: false, tagged: false, into: &writer) else { return nil }
            }
        } else {
            writer.varint(UInt64(plan.slots.count))
            for step in steps {
                let field = base + step.offset
                switch step.kind {
                case .value:
                    guard step.type.write(at: field, optional: step.isOptional, tagged: true, into: &writer) else { return nil }
                case .list:
                    guard step.type.writeList(at: field, asSet: false, into: &writer) else { return nil }
                case .set:
                    guard step.type.writeList(at: field, asSet: true, into: &writer) else { return nil }
                case .embedded:
                    // Its values are the steps that follow, at its offset already.
                    writer.byte(ValueTag.embedded.rawValue)
                    writer.varint(UInt64(step.count))
                }
            }
        }
        let keyStep = plan.directKeyStep
        let key = keyStep < 0 ? nil : steps[keyStep].type.storageKey(at: base + steps[keyStep].offset)
        return DirectRecord(key: key, bytes: writer.bytes)
    }
}

extension StoredValueType {
    /// Writes the value of a field of this type (or of its optional) as `RecordEncoder` writes
    /// its record value: its tag when `tagged`, then its body; `false` for a NaN date, which the
    /// encoder refuses.
    @inline(never)
    fileprivate func write(at field: UnsafeRawPointer, optional: Bool, tagged: Bool, into writer: inout ByteWriter) -> Bool {
        switch self {
        case .bool: Self.value(Bool.self, field, optional, tagged, &writer)
        case .int: Self.value(Int.self, field, optional, tagged, &writer)
        case .int8: Self.value(Int8.self, field, optional, tagged, &writer)
        case .int16: Self.value(Int16.self, field, optional, tagged, &writer)
        case .int32: Self.value(Int32.self, field, optional, tagged, &writer)
        case .int64: Self.value(Int64.self, field, optional, tagged, &writer)
        case .uint: Self.value(UInt.self, field, optional, tagged, &writer)
        case .uint8: Self.value(UInt8.self, field, optional, tagged, &writer)
        case .uint16: Self.value(UInt16.self, field, optional, tagged, &writer)
        case .uint32: Self.value(UInt32.self, field, optional, tagged, &writer)
        case .uint64: Self.value(UInt64.self, field, optional, tagged, &writer)
        case .float: Self.value(Float.self, field, optional, tagged, &writer)
        case .double: Self.value(Double.self, field, optional, tagged, &writer)
        case .string: Self.value(String.self, field, optional, tagged, &writer)
        case .data: Self.value(Data.self, field, optional, tagged, &writer)
        case .date: Self.value(Date.self, field, optional, tagged, &writer)
        case .uuid: Self.value(UUID.self, field, optional, tagged, &writer)
        case .decimal: Self.value(Decimal.self, field, optional, tagged, &writer)
        case .url: Self.value(URL.self, field, optional, tagged, &writer)
        }
    }

    /// Writes an array (or, `asSet`, a set) of this type at `field` as the encoder writes its
    /// list: the tag, the count, then each element tagged, a set's in its iteration order.
    @inline(never)
    fileprivate func writeList(at field: UnsafeRawPointer, asSet: Bool, into writer: inout ByteWriter) -> Bool {
        switch self {
        case .bool: Self.list(Bool.self, field, asSet, &writer)
        case .int: Self.list(Int.self, field, asSet, &writer)
        case .int8: Self.list(Int8.self, field, asSet, &writer)
        case .int16: Self.list(Int16.self, field, asSet, &writer)
        case .int32: Self.list(Int32.self, field, asSet, &writer)
        case .int64: Self.list(Int64.self, field, asSet, &writer)
        case .uint: Self.list(UInt.self, field, asSet, &writer)
        case .uint8: Self.list(UInt8.self, field, asSet, &writer)
        case .uint16: Self.list(UInt16.self, field, asSet, &writer)
        case .uint32: Self.list(UInt32.self, field, asSet, &writer)
        case .uint64: Self.list(UInt64.self, field, asSet, &writer)
        case .float: Self.list(Float.self, field, asSet, &writer)
        case .double: Self.list(Double.self, field, asSet, &writer)
        case .string: Self.list(String.self, field, asSet, &writer)
        case .data: Self.list(Data.self, field, asSet, &writer)
        case .date: Self.list(Date.self, field, asSet, &writer)
        case .uuid: Self.list(UUID.self, field, asSet, &writer)
        case .decimal: Self.list(Decimal.self, field, asSet, &writer)
        case .url: Self.list(URL.self, field, asSet, &writer)
        }
    }

    /// The storage key of a primary-key field of this type, as `PrimaryKey.storageKey(for:)`
    /// makes it from the field's record value; nil for types that cannot be keys.
    fileprivate func storageKey(at field: UnsafeRawPointer) -> StorageKey? {
        switch self {
        case .int: .integer(Int64(field.load(as: Int.self)))
        case .int8: .integer(Int64(field.load(as: Int8.self)))
        case .int16: .integer(Int64(field.load(as: Int16.self)))
        case .int32: .integer(Int64(field.load(as: Int32.self)))
        case .int64: .integer(field.load(as: Int64.self))
        // Unsigned keys keep their bits, as `PrimaryKey.storageKey(for:)` keeps them.
        case .uint: .integer(Int64(bitPattern: UInt64(field.load(as: UInt.self))))
        case .uint8: .integer(Int64(field.load(as: UInt8.self)))
        case .uint16: .integer(Int64(field.load(as: UInt16.self)))
        case .uint32: .integer(Int64(field.load(as: UInt32.self)))
        case .uint64: .integer(Int64(bitPattern: field.load(as: UInt64.self)))
        case .string: .string(field.assumingMemoryBound(to: String.self).pointee)
        case .uuid: .bytes(withUnsafeBytes(of: field.load(as: UUID.self).uuid) { Array($0) })
        case .bool, .float, .double, .data, .date, .decimal, .url: nil
        }
    }

    @inline(__always)
    private static func value<Value: DirectlyWritten>(
        _ type: Value.Type, _ field: UnsafeRawPointer, _ optional: Bool, _ tagged: Bool, _ writer: inout ByteWriter
    ) -> Bool {
        if optional {
            guard let value = field.assumingMemoryBound(to: Value?.self).pointee else {
                writer.byte(ValueTag.null.rawValue)
                return true
            }
            return value.write(tagged: tagged, into: &writer)
        }
        return field.assumingMemoryBound(to: Value.self).pointee.write(tagged: tagged, into: &writer)
    }

    @inline(__always)
    private static func list<Value: DirectlyWritten & Hashable>(
        _ type: Value.Type, _ field: UnsafeRawPointer, _ asSet: Bool, _ writer: inout ByteWriter
    ) -> Bool {
        writer.byte(ValueTag.list.rawValue)
        if asSet {
            let set = field.assumingMemoryBound(to: Set<Value>.self).pointee
            writer.varint(UInt64(set.count))
            for element in set {
                guard element.write(tagged: true, into: &writer) else { return false }
            }
            return true
        }
        let array = field.assumingMemoryBound(to: [Value].self).pointee
        writer.varint(UInt64(array.count))
        for element in array {
            guard element.write(tagged: true, into: &writer) else { return false }
        }
        return true
    }
}

/// A single-value type written straight from its value: the tag (when `tagged`) and body
/// `RecordEncoder` writes for its record value. `false` for a value the encoder refuses.
private protocol DirectlyWritten {
    func write(tagged: Bool, into writer: inout ByteWriter) -> Bool
}

extension Bool: DirectlyWritten {
    @inline(__always)
    func write(tagged: Bool, into writer: inout ByteWriter) -> Bool {
        // Untagged `Bool`s are bits of the tagless bitmap, written by the caller.
        if tagged { writer.byte(self ? ValueTag.true.rawValue : ValueTag.false.rawValue) }
        return true
    }
}

extension DirectlyWritten where Self: FixedWidthInteger & SignedInteger {
    @inline(__always)
    func write(tagged: Bool, into writer: inout ByteWriter) -> Bool {
        if tagged { writer.byte(ValueTag.int.rawValue) }
        writer.varint(ByteWriter.zigzag(Int64(self)))
        return true
    }
}

extension DirectlyWritten where Self: FixedWidthInteger & UnsignedInteger {
    @inline(__always)
    func write(tagged: Bool, into writer: inout ByteWriter) -> Bool {
        if tagged { writer.byte(ValueTag.uint.rawValue) }
        writer.varint(UInt64(self))
        return true
    }
}

extension Int: DirectlyWritten {}
extension Int8: DirectlyWritten {}
extension Int16: DirectlyWritten {}
extension Int32: DirectlyWritten {}
extension Int64: DirectlyWritten {}
extension UInt: DirectlyWritten {}
extension UInt8: DirectlyWritten {}
extension UInt16: DirectlyWritten {}
extension UInt32: DirectlyWritten {}
extension UInt64: DirectlyWritten {}

extension Float: DirectlyWritten {
    @inline(__always)
    func write(tagged: Bool, into writer: inout ByteWriter) -> Bool {
        if tagged { writer.byte(ValueTag.float.rawValue) }
        writer.uint32(bitPattern)
        return true
    }
}

extension Double: DirectlyWritten {
    @inline(__always)
    func write(tagged: Bool, into writer: inout ByteWriter) -> Bool {
        if tagged { writer.byte(ValueTag.double.rawValue) }
        writer.uint64(bitPattern)
        return true
    }
}

extension String: DirectlyWritten {
    @inline(__always)
    func write(tagged: Bool, into writer: inout ByteWriter) -> Bool {
        if tagged { writer.byte(ValueTag.string.rawValue) }
        writer.lengthPrefixed(self)
        return true
    }
}

extension Data: DirectlyWritten {
    @inline(__always)
    func write(tagged: Bool, into writer: inout ByteWriter) -> Bool {
        if tagged { writer.byte(ValueTag.data.rawValue) }
        writer.varint(UInt64(count))
        withUnsafeBytes { writer.bytes.append(contentsOf: $0) }
        return true
    }
}

extension Date: DirectlyWritten {
    @inline(__always)
    func write(tagged: Bool, into writer: inout ByteWriter) -> Bool {
        // A NaN date is refused by the encoder, with the error naming its property.
        guard !timeIntervalSinceReferenceDate.isNaN else { return false }
        if tagged { writer.byte(ValueTag.date.rawValue) }
        writer.uint64(timeIntervalSinceReferenceDate.bitPattern)
        return true
    }
}

extension UUID: DirectlyWritten {
    @inline(__always)
    func write(tagged: Bool, into writer: inout ByteWriter) -> Bool {
        if tagged { writer.byte(ValueTag.uuid.rawValue) }
        withUnsafeBytes(of: uuid) { writer.bytes.append(contentsOf: $0) }
        return true
    }
}

extension Decimal: DirectlyWritten {
    func write(tagged: Bool, into writer: inout ByteWriter) -> Bool {
        if tagged { writer.byte(ValueTag.decimal.rawValue) }
        writer.lengthPrefixed(description)
        return true
    }
}

extension URL: DirectlyWritten {
    func write(tagged: Bool, into writer: inout ByteWriter) -> Bool {
        if tagged { writer.byte(ValueTag.url.rawValue) }
        writer.lengthPrefixed(absoluteString)
        return true
    }
}

