import MirrorStoreEngine

extension ModelMapping {
    /// Fills a new `instance` (`TypePlan.newInstance(_:)`) with a flat plan's (`TypePlan.isFlat`)
    /// fields read straight from stored bytes written with the plan's own schema: one loop over the slots,
    /// with no sink, closure or conversion context per model. The primary-key value in the bytes
    /// must be `key`, the key they are stored under, byte for byte. Returns `false` when any value,
    /// the key, or the bytes themselves, need the general path, which then reads them again and
    /// reports what it finds (``PrimaryKey/checkStored(_:under:schema:)`` the key); `instance` is
    /// then partly filled and must be dropped.
    static func fillSingleValues<Model>(of instance: inout Model, plan: TypePlan, reading bytes: [UInt8], key: StorageKey) -> Bool {
        bytes.withUnsafeBytes { bytes in fillSingleValues(of: &instance, plan: plan, reading: bytes, key: key) }
    }

    /// ``fillSingleValues(of:plan:reading:key:)`` from bytes where they lie (in the file's
    /// mapping), valid during the call.
    static func fillSingleValues<Model>(of instance: inout Model, plan: TypePlan, reading bytes: UnsafeRawBufferPointer, key: StorageKey) -> Bool {
        FieldMemory.withMutableFields(of: &instance, isClass: plan.isClass) { base in
            fillSingleValues(base, plan: plan, reading: bytes, key: key)
        }
    }

    private static func fillSingleValues(_ base: UnsafeMutableRawPointer, plan: TypePlan, reading bytes: UnsafeRawBufferPointer, key: StorageKey) -> Bool {
        let keyPosition = plan.schema.primaryKeyPosition ?? -1
        // A cursor over the bytes in place, whose reads inline into the loop.
        var cursor = RawCursor(bytes)
        guard cursor.skipVarint() == UInt64(plan.slots.count) else { return false }
        for (position, slot) in plan.slots.enumerated() {
            if position == keyPosition, !cursor.startsWithStoredKey(key) { return false }
            guard let primitive = slot.primitive,
                  primitive.decode(from: &cursor, into: base + slot.offset, optional: slot.isOptional) else { return false }
        }
        return cursor.position == bytes.count
    }
}

private extension RawCursor {
    /// Whether the value here is the primary key `key` in the bytes ``PrimaryKey`` writes for it,
    /// read without moving; `false` for anything else, which the general check then looks at (a
    /// string key in another spelling of the same text, say, or damage).
    @inline(__always)
    func startsWithStoredKey(_ key: StorageKey) -> Bool {
        var cursor = self
        guard let tag = cursor.byte() else { return false }
        switch (tag, key) {
        case (ValueTag.int.rawValue, .integer(let expected)):
            return cursor.skipVarint().map { RawCursor.unzigzag($0) == expected } ?? false
        case (ValueTag.uint.rawValue, .integer(let expected)):
            // Unsigned keys keep their bits (`storageKey(for:)`).
            return cursor.skipVarint().map { Int64(bitPattern: $0) == expected } ?? false
        case (ValueTag.string.rawValue, .string(let expected)):
            guard case .success(let stored) = cursor.lengthPrefixed() else { return false }
            var text = expected
            return text.withUTF8 { $0.elementsEqual(stored) }
        case (ValueTag.uuid.rawValue, .bytes(let expected)):
            let start = cursor.position
            guard cursor.skip(16) else { return false }
            return bytes[start..<(start + 16)].elementsEqual(expected)
        default:
            return false
        }
    }
}
