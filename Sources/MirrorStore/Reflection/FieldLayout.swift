@_spi(Reflection) import Swift
import Foundation
import SwiftShims
import Synchronization

// The only file in MirrorStore that touches raw memory or unmanaged references. Everything else
// reaches a model's stored properties through `StoredField` (found once per type) and
// `FieldMemory` (typed loads and stores at those offsets). docs/ARCHITECTURE.md explains why this
// mechanism and not another.

/// One stored property of a model type, as the Swift runtime lays it out.
struct StoredField {
    /// The declared name; lazy properties keep the runtime's `$__lazy_storage_$_` prefix.
    let name: String
    /// Byte offset from the start of a struct value, or from the start of a class instance.
    let offset: Int
    /// The declared type of the property.
    let type: Any.Type
    /// `false` for `let` constants.
    let isVar: Bool
    /// `false` for `weak` and `unowned` references, whose storage is not a plain value of `type`.
    let isStrong: Bool

    private static let lazyStoragePrefix = "$__lazy_storage_$_"

    /// Whether this is the storage of a `lazy` property.
    var isLazyStorage: Bool { name.hasPrefix(Self.lazyStoragePrefix) }

    /// The name the model's source declares: a lazy property's without the runtime's prefix.
    var declaredName: String {
        isLazyStorage ? String(name.dropFirst(Self.lazyStoragePrefix.count)) : name
    }
}

// `_forEachField` reports name, offset and type but not whether a field is a `var` or a strong
// reference; the runtime entry point it is built on reports both, in the toolchain's own
// `_FieldReflectionMetadata` layout (SwiftShims/Reflection.h).
@_silgen_name("swift_reflectionMirror_recursiveChildMetadata")
private func _fieldMetadata(
    _ type: Any.Type,
    index: Int,
    fieldMetadata: UnsafeMutablePointer<_FieldReflectionMetadata>
) -> Any.Type

enum FieldLayout {
    /// `_EachFieldOptions.classType`, which the standard library declares as a mutable `static var`
    /// that strict concurrency forbids reading. Its value is the option's first bit; a test checks
    /// that classes enumerate with it and structs without it.
    static let classTypeOption = _EachFieldOptions(rawValue: 1 << 0)

    /// The stored properties of a struct or class type, inherited ones first, or `nil` when the
    /// runtime cannot describe the type's fields (enums, tuples, imported types).
    static func storedFields(of type: Any.Type) -> [StoredField]? {
        guard let classType = type as? AnyClass else {
            // Enums and other non-struct types report no fields rather than failing: refuse them.
            guard metadataKind(of: type) == .struct else { return nil }
            return fields(declaredBy: type, isClass: false)
        }
        // Some runtimes list a class's own fields only, others include its superclasses': walk the
        // chain from the root and keep each field once.
        var chain: [AnyClass] = []
        var current: AnyClass? = classType
        while let level = current {
            chain.append(level)
            current = _getSuperclass(level)
        }
        var result: [StoredField] = []
        var seen = Set<String>()
        for level in chain.reversed() {
            guard let fields = fields(declaredBy: level, isClass: true) else { return nil }
            for field in fields where seen.insert(field.name).inserted {
                result.append(field)
            }
        }
        return result
    }

    /// The runtime's kind of `type`, read as the kind of the only field of a wrapper struct, since
    /// `_forEachField` reports kinds for fields only.
    static func metadataKind(of type: Any.Type) -> _MetadataKind? {
        func probe<Value>(_: Value.Type) -> _MetadataKind? {
            var kind: _MetadataKind?
            _forEachField(of: KindProbe<Value>.self) { _, _, _, fieldKind in
                kind = fieldKind
                return false
            }
            return kind
        }
        return probe(type)
    }

    /// Whether `type` is an enum (not an `Optional`, which the runtime gives a kind of its own).
    static func isEnum(_ type: Any.Type) -> Bool {
        metadataKind(of: type) == .enum
    }

    private struct KindProbe<Value> {
        var value: Value
    }

    private static func fields(declaredBy type: Any.Type, isClass: Bool) -> [StoredField]? {
        var result: [StoredField] = []
        var index = 0
        let complete = _forEachField(of: type, options: isClass ? classTypeOption : []) { name, offset, fieldType, _ in
            var metadata = _FieldReflectionMetadata()
            _ = _fieldMetadata(type, index: index, fieldMetadata: &metadata)
            defer { metadata.freeFunc?(metadata.name) }
            index += 1
            result.append(StoredField(
                name: String(cString: name), offset: offset, type: fieldType,
                isVar: metadata.isVar, isStrong: metadata.isStrong))
            return true
        }
        return complete ? result : nil
    }
}

/// Typed access to a stored property at a known offset.
///
/// Safe as long as `offset` and `Value` come from `FieldLayout.storedFields(of:)` for the type whose
/// fields `base` points at, and the field is a strong `var`: the plan guarantees both.
enum FieldMemory {
    static func load<Value>(_ type: Value.Type, from base: UnsafeRawPointer, at offset: Int) -> Value {
        base.advanced(by: offset).assumingMemoryBound(to: Value.self).pointee
    }

    /// `value` is consumed, so a value just made moves into the field instead of being copied.
    static func store<Value>(_ value: consuming Value, to base: UnsafeMutableRawPointer, at offset: Int) {
        base.advanced(by: offset).assumingMemoryBound(to: Value.self).pointee = value
    }

    /// Calls `body` with the address field offsets are measured from: the instance for a class,
    /// the value itself for a struct. `model` is a parameter, so it outlives the call.
    static func withFields<Model, Result, Failure: Error>(
        of model: Model, isClass: Bool, _ body: (UnsafeRawPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try withUnsafePointer(to: model) { pointer throws(Failure) in
            let raw = UnsafeRawPointer(pointer)
            return try body(isClass ? raw.load(as: UnsafeRawPointer.self) : raw)
        }
    }

    /// Like `withFields(of:isClass:_:)`, for writing into the properties. A class instance is
    /// reached from its reference, which `model` keeps alive, with no pointer to `model` itself:
    /// inlined, this leaves no closure around the fill of each model a conversion makes.
    @inline(__always)
    static func withMutableFields<Model, Result, Failure: Error>(
        of model: inout Model, isClass: Bool, _ body: (UnsafeMutableRawPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        if isClass {
            return try body(Unmanaged.passUnretained(object(model)).toOpaque())
        }
        return try withUnsafeMutablePointer(to: &model) { pointer throws(Failure) in
            try body(UnsafeMutableRawPointer(pointer))
        }
    }

    /// A class instance as `AnyObject`, without the dynamic cast `as AnyObject` would run.
    static func object<Model>(_ instance: Model) -> AnyObject {
        unsafeBitCast(instance, to: AnyObject.self)
    }

    /// The address of an object, its identity for the duration of a conversion.
    static func address(of object: AnyObject) -> UnsafeRawPointer {
        UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
    }
}

/// Single-value property types, read and written in place, plain or optional. Each conforming
/// type gets its own specialized copy of these defaults, so a generic accessor calling them
/// through the witness table runs concrete code instead of looking up generic type metadata (such
/// as `Optional<Value>`'s) for every field.
///
/// All four are requirements, not just extension methods: only requirements are reached through
/// the witness table, and so only they run the per-type copies.
protocol FieldPrimitive: RecordPrimitive {
    /// Which of the closed set of single-value types this is.
    static var slot: StoredValueType { get }
    /// The value a property of this type starts from when a struct is built without `init()`.
    static var emptyValue: Self { get }
    static func recordValue(at field: UnsafeRawPointer) -> RecordValue
    /// Stores the converted value and returns `true`, or returns `false` when it does not fit.
    static func assign(_ record: RecordValue, to field: UnsafeMutableRawPointer) -> Bool
    /// Reads a field of type `Self?`.
    static func recordValue(atOptional field: UnsafeRawPointer) -> RecordValue
    static func assign(_ record: RecordValue, toOptional field: UnsafeMutableRawPointer) -> Bool
}

extension FieldPrimitive {
    static func recordValue(at field: UnsafeRawPointer) -> RecordValue {
        field.assumingMemoryBound(to: Self.self).pointee.recordValue
    }

    static func assign(_ record: RecordValue, to field: UnsafeMutableRawPointer) -> Bool {
        guard let value = Self(recordValue: record) else { return false }
        field.assumingMemoryBound(to: Self.self).pointee = value
        return true
    }
}

extension FieldPrimitive {
    static func recordValue(atOptional field: UnsafeRawPointer) -> RecordValue {
        field.assumingMemoryBound(to: Self?.self).pointee?.recordValue ?? .null
    }

    static func assign(_ record: RecordValue, toOptional field: UnsafeMutableRawPointer) -> Bool {
        if case .null = record {
            field.assumingMemoryBound(to: Self?.self).pointee = nil
            return true
        }
        guard let value = Self(recordValue: record) else { return false }
        field.assumingMemoryBound(to: Self?.self).pointee = value
        return true
    }
}

/// The most recently used type plan, readable without a lock.
///
/// Holds an unretained reference: sound only because published plans are never freed (the plan
/// cache keeps every one for the life of the process).
struct LastPlanSlot: ~Copyable {
    private let address = Atomic<UInt>(0)

    func plan(for identifier: ObjectIdentifier) -> TypePlan? {
        let bits = address.load(ordering: .acquiring)
        guard let pointer = UnsafeRawPointer(bitPattern: bits) else { return nil }
        let plan = Unmanaged<TypePlan>.fromOpaque(pointer).takeUnretainedValue()
        return plan.typeIdentifier == identifier ? plan : nil
    }

    func remember(_ plan: TypePlan) {
        address.store(UInt(bitPattern: Unmanaged.passUnretained(plan).toOpaque()), ordering: .releasing)
    }
}

/// The single-value types, as a plan keeps them per field: converting such a field is then a
/// `switch` over concrete code, as a hand-written translator would do, instead of a dynamic call.
extension StoredValueType {
    // Both switches stay out of line: inlined, their nineteen specializations would swell the
    // frame of the mapping loop, which sits on the stack once per link of a linked chain.

    /// Reads a field of this type (or of its optional, when `optional`).
    @inline(never)
    func recordValue(at field: UnsafeRawPointer, optional: Bool) -> RecordValue {
        switch self {
        case .bool: Self.read(Bool.self, field, optional)
        case .int: Self.read(Int.self, field, optional)
        case .int8: Self.read(Int8.self, field, optional)
        case .int16: Self.read(Int16.self, field, optional)
        case .int32: Self.read(Int32.self, field, optional)
        case .int64: Self.read(Int64.self, field, optional)
        case .uint: Self.read(UInt.self, field, optional)
        case .uint8: Self.read(UInt8.self, field, optional)
        case .uint16: Self.read(UInt16.self, field, optional)
        case .uint32: Self.read(UInt32.self, field, optional)
        case .uint64: Self.read(UInt64.self, field, optional)
        case .float: Self.read(Float.self, field, optional)
        case .double: Self.read(Double.self, field, optional)
        case .string: Self.read(String.self, field, optional)
        case .data: Self.read(Data.self, field, optional)
        case .date: Self.read(Date.self, field, optional)
        case .uuid: Self.read(UUID.self, field, optional)
        case .decimal: Self.read(Decimal.self, field, optional)
        case .url: Self.read(URL.self, field, optional)
        }
    }

    /// Stores `record` into a field of this type (or of its optional); `false` when it does not fit.
    @inline(never)
    func assign(_ record: RecordValue, to field: UnsafeMutableRawPointer, optional: Bool) -> Bool {
        assignInline(record, to: field, optional: optional)
    }

    /// ``assign(_:to:optional:)`` inlined, for loops that are not on the recursive path.
    @inline(__always)
    func assignInline(_ record: RecordValue, to field: UnsafeMutableRawPointer, optional: Bool) -> Bool {
        switch self {
        case .bool: Self.write(Bool.self, record, field, optional)
        case .int: Self.write(Int.self, record, field, optional)
        case .int8: Self.write(Int8.self, record, field, optional)
        case .int16: Self.write(Int16.self, record, field, optional)
        case .int32: Self.write(Int32.self, record, field, optional)
        case .int64: Self.write(Int64.self, record, field, optional)
        case .uint: Self.write(UInt.self, record, field, optional)
        case .uint8: Self.write(UInt8.self, record, field, optional)
        case .uint16: Self.write(UInt16.self, record, field, optional)
        case .uint32: Self.write(UInt32.self, record, field, optional)
        case .uint64: Self.write(UInt64.self, record, field, optional)
        case .float: Self.write(Float.self, record, field, optional)
        case .double: Self.write(Double.self, record, field, optional)
        case .string: Self.write(String.self, record, field, optional)
        case .data: Self.write(Data.self, record, field, optional)
        case .date: Self.write(Date.self, record, field, optional)
        case .uuid: Self.write(UUID.self, record, field, optional)
        case .decimal: Self.write(Decimal.self, record, field, optional)
        case .url: Self.write(URL.self, record, field, optional)
        }
    }

    @inline(__always)
    private static func read<Value: FieldPrimitive>(_ type: Value.Type, _ field: UnsafeRawPointer, _ optional: Bool) -> RecordValue {
        optional ? Value.recordValue(atOptional: field) : Value.recordValue(at: field)
    }

    @inline(__always)
    private static func write<Value: FieldPrimitive>(
        _ type: Value.Type, _ record: RecordValue, _ field: UnsafeMutableRawPointer, _ optional: Bool
    ) -> Bool {
        optional ? Value.assign(record, toOptional: field) : Value.assign(record, to: field)
    }
}

/// Where a plan's field lives and, for single-value types, what it holds: a trivial value, so
/// walking a plan's slots retains nothing.
struct FieldSlot: Sendable {
    let offset: Int
    let primitive: StoredValueType?
    let isOptional: Bool
}
