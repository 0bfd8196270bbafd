import Foundation
import MirrorStoreEngine

/// Writes records as compact bytes: a property count, then one tagged value per property in
/// schema order; or, when ``writesTagless`` and the type's properties are all required single
/// values, the tagless form of ``TaglessLayout`` (docs/FILE_FORMAT.md, "Record encoding").
///
/// A link to a model with a primary key is written as that key; the linked record is collected in
/// ``linkedRecords`` so the store saves it under its own key. A model without a primary key is
/// embedded in its parent.
struct RecordEncoder {
    /// Records with a primary key reached through links, each once, in the order first met.
    private(set) var linkedRecords: [ManagedObject] = []
    private var collected = Set<ObjectIdentifier>()
    /// Embedded records being written, to refuse a cycle that would never end.
    private var embedding: [ObjectIdentifier] = []
    /// Whether top-level records may take the tagless form: only in a file whose format reads it
    /// (``StorageEngine/writesTaglessRecords``), so that code from before it refuses the file.
    let writesTagless: Bool

    init(writesTagless: Bool) {
        self.writesTagless = writesTagless
    }

    mutating func encode(_ record: ManagedObject) throws(StoreError) -> [UInt8] {
        var writer = ByteWriter()
        writer.reserve(16 * record.values.count)
        if writesTagless, let layout = record.objectSchema.taglessLayout, Self.fits(record.values, layout) {
            try Self.writeTagless(record, layout, into: &writer)
        } else {
            try writeFields(of: record, into: &writer, depth: 0)
        }
        return writer.bytes
    }

    /// Whether every value is one of its property's type (a required property may hold null, or
    /// another kind, in a record built by hand: such a record is written tagged, as it always was).
    private static func fits(_ values: [RecordValue], _ layout: TaglessLayout) -> Bool {
        guard values.count == layout.codes.count else { return false }
        for (index, value) in values.enumerated() {
            guard let tag = tag(of: value), layout.holds(tag.rawValue, at: index) else { return false }
        }
        return true
    }

    /// The tagless form: the marker, the bitmap of the `Bool`s, then the other values' bodies.
    private static func writeTagless(_ record: ManagedObject, _ layout: TaglessLayout, into writer: inout ByteWriter) throws(StoreError) {
        writer.byte(TaglessLayout.marker)
        let bitmapStart = writer.bytes.count
        for _ in 0..<layout.bitmapSize { writer.byte(0) }
        for (position, value) in record.values.enumerated() {
            if let bit = layout.bit(at: position) {
                if case .bool(true) = value { writer.bytes[bitmapStart + bit >> 3] |= 1 << UInt8(bit & 7) }
                continue
            }
            do throws(StoreError) {
                try writeBody(of: value, into: &writer)
            } catch {
                throw error.naming(record.objectSchema, position)
            }
        }
    }

    /// `depth` counts the embedded records and containers the record's values are inside of
    /// (``RecordGrammar``'s depth rule: nothing is written that a reader would refuse).
    private mutating func writeFields(of record: ManagedObject, into writer: inout ByteWriter, depth: Int) throws(StoreError) {
        try checkNesting(depth, count: record.values.count, in: record)
        writer.varint(UInt64(record.values.count))
        for (position, value) in record.values.enumerated() {
            do throws(StoreError) {
                try write(value, into: &writer, depth: depth, in: record)
            } catch {
                throw error.naming(record.objectSchema, position)
            }
        }
    }

    /// `record` holds the value, at `depth`, which the record's own values are at.
    private mutating func write(_ value: RecordValue, into writer: inout ByteWriter, depth: Int, in record: ManagedObject) throws(StoreError) {
        switch value {
        case .null:
            writer.byte(ValueTag.null.rawValue)
        case .bool(let value):
            writer.byte(value ? ValueTag.true.rawValue : ValueTag.false.rawValue)
        case .int, .uint, .float, .double, .string, .data, .date, .uuid, .decimal, .url:
            guard let tag = Self.tag(of: value) else { return }
            writer.byte(tag.rawValue)
            try Self.writeBody(of: value, into: &writer)
        case .object(let linked):
            try write(linked, into: &writer, depth: depth)
        case .list(let list):
            try checkNesting(depth + 1, count: list.count, in: record)
            writer.byte(ValueTag.list.rawValue)
            writer.varint(UInt64(list.count))
            for element in list {
                try write(element, into: &writer, depth: depth + 1, in: record)
            }
        case .dictionary(let entries):
            try checkNesting(depth + 1, count: entries.count, in: record)
            writer.byte(ValueTag.dictionary.rawValue)
            writer.varint(UInt64(entries.count))
            for (key, element) in entries {
                writer.lengthPrefixed(key)
                try write(element, into: &writer, depth: depth + 1, in: record)
            }
        }
    }

    /// The tag of a single value; nil for null and the others.
    private static func tag(of value: RecordValue) -> ValueTag? {
        switch value {
        case .bool(let value): value ? .true : .false
        case .int: .int
        case .uint: .uint
        case .float: .float
        case .double: .double
        case .string: .string
        case .data: .data
        case .date: .date
        case .uuid: .uuid
        case .decimal: .decimal
        case .url: .url
        case .null, .object, .list, .dictionary: nil
        }
    }

    /// The bytes after a single value's tag (none for a `Bool`).
    private static func writeBody(of value: RecordValue, into writer: inout ByteWriter) throws(StoreError) {
        switch value {
        case .int(let value):
            writer.varint(ByteWriter.zigzag(value))
        case .uint(let value):
            writer.varint(value)
        case .float(let value):
            writer.uint32(value.bitPattern)
        case .double(let value):
            writer.uint64(value.bitPattern)
        case .string(let value):
            writer.lengthPrefixed(value)
        case .data(let value):
            writer.lengthPrefixed([UInt8](value))
        case .date(let value):
            // A NaN date never equals itself, so no query could find it; readers refuse it too.
            guard !value.timeIntervalSinceReferenceDate.isNaN else {
                throw StoreError(.unstorableValue(typeName: "", property: "", reason: "a date that is not a number (NaN)"))
            }
            writer.uint64(value.timeIntervalSinceReferenceDate.bitPattern)
        case .uuid(let value):
            withUnsafeBytes(of: value.uuid) { writer.bytes.append(contentsOf: $0) }
        case .decimal(let value):
            writer.lengthPrefixed(value.description)
        case .url(let value):
            writer.lengthPrefixed(value.absoluteString)
        case .null, .bool, .object, .list, .dictionary:
            break
        }
    }

    /// Throws when `count` values (a record's, a container's) would lie at `depth`, which readers refuse.
    private func checkNesting(_ depth: Int, count: Int, in record: ManagedObject) throws(StoreError) {
        if count > 0, RecordGrammar.nestsTooDeep(depth) {
            throw StoreError(.nestingTooDeep(typeName: record.objectSchema.typeName, levels: depth))
        }
    }

    /// `depth` is the linked record's own, as a value.
    private mutating func write(_ linked: ManagedObject, into writer: inout ByteWriter, depth: Int) throws(StoreError) {
        let identifier = ObjectIdentifier(linked)
        if let key = try PrimaryKey.storageKey(of: linked) {
            writer.byte(ValueTag.reference.rawValue)
            PrimaryKey.write(key, into: &writer)
            if collected.insert(identifier).inserted { linkedRecords.append(linked) }
            return
        }
        guard !embedding.contains(identifier) else {
            throw StoreError(.embeddedCycle(typeName: linked.objectSchema.typeName))
        }
        embedding.append(identifier)
        defer { embedding.removeLast() }
        writer.byte(ValueTag.embedded.rawValue)
        try writeFields(of: linked, into: &writer, depth: depth + 1)
    }
}

private extension StoreError {
    /// The same error, naming the property at `position` of `schema` when it is an
    /// `unstorableValue` that names none yet (`write` knows the value, not where it lies).
    func naming(_ schema: ObjectSchema, _ position: Int) -> StoreError {
        guard case .unstorableValue(let typeName, _, let reason) = kind, typeName.isEmpty,
              schema.properties.indices.contains(position) else { return self }
        return StoreError(.unstorableValue(typeName: schema.typeName, property: schema.properties[position].name, reason: reason))
    }
}
