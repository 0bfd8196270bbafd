import Foundation
import MirrorStoreEngine

extension ModelMapping {
    /// Fills a new `instance` (`TypePlan.newInstance(_:)`) from stored bytes written with the plan's own schema,
    /// following the plan's ``TypePlan/directSteps`` (present, checked by the caller): one loop
    /// over the steps, with no sink, closure, `RecordValue` or conversion context per model;
    /// single values, arrays and sets of them go straight into their fields and embedded structs
    /// are filled field by field in their place. The primary-key value in the bytes must be
    /// `key`, the key they are stored under, byte for byte. Returns `false` when any value, the
    /// key, or the bytes themselves, need the general path, which then reads them again and
    /// reports what it finds (``PrimaryKey/checkStored(_:under:schema:)`` the key); `instance` is
    /// then partly filled and must be dropped.
    static func fillDirectly<Model>(_ instance: inout Model, plan: TypePlan, reading bytes: [UInt8], key: StorageKey) -> Bool {
        bytes.withUnsafeBytes { bytes in fillDirectly(&instance, plan: plan, reading: bytes, key: key) }
    }

    /// ``fillDirectly(_:plan:reading:key:)`` from bytes where they lie (in the file's mapping),
    /// valid during the call.
    static func fillDirectly<Model>(_ instance: inout Model, plan: TypePlan, reading bytes: UnsafeRawBufferPointer, key: StorageKey) -> Bool {
        FieldMemory.withMutableFields(of: &instance, isClass: plan.isClass) { base in
            fillDirectly(base, plan: plan, reading: bytes, key: key)
        }
    }

    private static func fillDirectly(_ base: UnsafeMutableRawPointer, plan: TypePlan, reading bytes: UnsafeRawBufferPointer, key: StorageKey) -> Bool {
        guard let steps = plan.directSteps else { return false }
        let keyStep = plan.directKeyStep
        // A cursor over the bytes in place, whose reads inline into the loop.
        var cursor = RawCursor(bytes, smallStrings: plan.smallStrings)
        if let bitmap = plan.schema.taglessLayout?.bitmap, let bitmapStart = cursor.skipTaglessStart(bitmap) {
            // A tagless type's properties are all single values, one step each in schema order,
            // and each step's type is its property's, so it gives the value's tag.
            var booleans = 0
            for index in steps.indices {
                let step = steps[index]
                guard step.kind == .value else { return false }
                let tag = cursor.impliedTag(of: step.type, booleans: &booleans, bitmapStart: bitmapStart)
                if index == keyStep {
                    guard cursor.readKey(key, tag: tag, step: step, into: base + step.offset) else { return false }
                    continue
                }
                guard step.type.decode(tag: tag, from: &cursor, into: base + step.offset, optional: step.isOptional) else { return false }
            }
            return cursor.position == bytes.count
        }
        guard cursor.skipVarint() == UInt64(plan.slots.count) else { return false }
        for index in steps.indices {
            let step = steps[index]
            let field = base + step.offset
            // The commonest values first, in one dispatch; the key's step is never one of them.
            if cursor.readQuickly(step.quick, into: field) { continue }
            switch step.kind {
            case .value:
                if index == keyStep {
                    guard cursor.readKey(key, tag: nil, step: step, into: field) else { return false }
                    continue
                }
                guard step.type.decode(from: &cursor, into: field, optional: step.isOptional) else { return false }
            case .list:
                guard step.type.decodeList(from: &cursor, into: field) else { return false }
            case .set:
                guard step.type.decodeSet(from: &cursor, into: field) else { return false }
            case .embedded:
                // The embedded record's values are the steps that follow; its count of values
                // must be its plan's, as the decoder checks it against its schema.
                guard cursor.byte() == ValueTag.embedded.rawValue, cursor.skipVarint() == UInt64(step.count) else { return false }
            }
        }
        return cursor.position == bytes.count
    }
}

private extension RawCursor {
    /// Reads the primary key's stored value into its field once it is `key`
    /// (``startsWithStoredKey(_:tag:)``); `false` for anything else. A String field takes `key`'s
    /// own text, whose UTF-8 was just found equal to the stored bytes, rather than a new string
    /// made from them: the key is already made, and a new one longer than 15 bytes allocates.
    @inline(__always)
    mutating func readKey(_ key: StorageKey, tag: UInt8?, step: DirectStep, into field: UnsafeMutableRawPointer) -> Bool {
        if step.type == .string, case .string(let text) = key {
            // Read and compared in one pass, the key's UTF-8 where it lies: no copy of the key.
            guard (tag ?? byte()) == ValueTag.string.rawValue, case .success(let stored) = lengthPrefixed(),
                  Self.isUTF8(of: text, stored) else { return false }
            return StoredValueType.storeString(text, into: field, optional: step.isOptional)
        }
        guard startsWithStoredKey(key, tag: tag) else { return false }
        return step.type.decode(tag: tag, from: &self, into: field, optional: step.isOptional)
    }

    /// Whether `stored` is `text`'s UTF-8, byte for byte; `false` too when the text's UTF-8 is not
    /// contiguous, which the general check then compares.
    @inline(__always)
    static func isUTF8(of text: String, _ stored: UnsafeRawBufferPointer) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { expected in
            // Lengths, then one `memcmp`: comparing byte by byte cost a tenth of a model's fill.
            guard expected.count == stored.count else { return false }
            guard let left = expected.baseAddress, let right = stored.baseAddress else { return true }
            return memcmp(left, right, expected.count) == 0
        } ?? false
    }

    /// Whether the value here is the primary key `key` in the bytes ``PrimaryKey`` writes for it,
    /// read without moving; `false` for anything else, which the general check then looks at (a
    /// string key in another spelling of the same text, say, or damage). `tag` is the one a
    /// tagless record implies, the cursor then standing at the body; nil to read it.
    @inline(__always)
    func startsWithStoredKey(_ key: StorageKey, tag implied: UInt8? = nil) -> Bool {
        var cursor = self
        guard let tag = implied ?? cursor.byte() else { return false }
        switch (tag, key) {
        case (ValueTag.int.rawValue, .integer(let expected)):
            return cursor.skipVarint().map { RawCursor.unzigzag($0) == expected } ?? false
        case (ValueTag.uint.rawValue, .integer(let expected)):
            // Unsigned keys keep their bits (`storageKey(for:)`).
            return cursor.skipVarint().map { Int64(bitPattern: $0) == expected } ?? false
        case (ValueTag.string.rawValue, .string(let expected)):
            guard case .success(let stored) = cursor.lengthPrefixed() else { return false }
            return RawCursor.isUTF8(of: expected, stored)
        case (ValueTag.uuid.rawValue, .bytes(let expected)):
            let start = cursor.position
            guard expected.count == 16, cursor.skip(16), let stored = bytes.baseAddress else { return false }
            // One `memcmp`, as for strings: a slice's `elementsEqual` went byte by byte.
            return expected.withUnsafeBytes { expected in
                guard let expected = expected.baseAddress else { return false }
                return memcmp(expected, stored + start, 16) == 0
            }
        default:
            return false
        }
    }
}
