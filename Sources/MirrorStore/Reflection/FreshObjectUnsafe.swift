@_spi(Reflection) import Swift
import CMirrorStoreSupport
import Foundation

// How an instance of a class model comes into being without its `init()`: the runtime's own
// allocator makes it (header set, properties uninitialised), every stored property of every class
// in its hierarchy gets its type's empty value, and the mapping then assigns the record's values
// into it as into any instance. docs/ARCHITECTURE.md ("Models without init()") says when this
// is sound; `EmptyInstance.objectRecipe(for:fields:)` decides it, once per type.

/// How to make instances of one class model without running its `init()`.
///
/// The empty values that are plain bytes (those of trivial types such as numbers, dates and
/// UUIDs, and `nil`, which holds no reference whatever its type) are written once into a template
/// of the instance, and each new instance starts as a copy of it; the other single values
/// (strings, data, URLs) are initialised by a `switch` over concrete code, and the rest (arrays,
/// embedded and linked models) through their recipe's closures.
///
/// Made once per type, never changed afterwards, which is why the unchecked `Sendable` is sound
/// (the class metadata it points to lives as long as the process).
final class FreshObjectRecipe: @unchecked Sendable {
    private let metadata: UnsafeRawPointer
    private let size: Int
    private let alignmentMask: Int
    /// Where the stored properties start: after the object header.
    private let start: Int
    /// `size` bytes, holding the byte-copied empty values from `start` on.
    private let template: UnsafeMutableRawPointer
    /// The single-value properties whose empty values are not plain bytes, initialised after the copy.
    private let primitives: UnsafeMutableBufferPointer<EmptyPrimitive>
    /// The other empty values that are not plain bytes, initialised after the copy.
    private let others: EmptyRecipe

    /// The recipe for `type`, or `nil` unless the runtime's description of the class shows that
    /// `fields` (each with an `empty` entry that initialises it, in the same order) are all of its
    /// stored properties and nothing else lives in its instances. Always `nil` with Objective-C
    /// interoperability, whose class metadata has another layout and whose classes the
    /// Objective-C runtime may have to set up first: such platforms keep calling `init()`.
    init?(type: AnyClass, fields: [StoredField], empty: [EmptyField]) {
        #if _runtime(_ObjC)
        return nil
        #else
        guard fields.count == empty.count, let layout = Self.instanceLayout(of: type, fields: fields) else { return nil }
        metadata = unsafeBitCast(type, to: UnsafeRawPointer.self)
        size = layout.size
        alignmentMask = layout.alignmentMask
        start = layout.start
        template = UnsafeMutableRawPointer.allocate(byteCount: layout.size, alignment: layout.alignmentMask + 1)
        template.initializeMemory(as: UInt8.self, repeating: 0, count: layout.size)
        var primitives: [EmptyPrimitive] = []
        var others: [EmptyField] = []
        for (field, empty) in zip(fields, empty) {
            Self.classify(field.type, at: field.offset, empty: empty, template: template, primitives: &primitives, others: &others, depth: 0)
        }
        self.primitives = .allocate(capacity: primitives.count)
        _ = self.primitives.initialize(from: primitives)
        self.others = EmptyRecipe(fields: others)
        #endif
    }

    deinit {
        template.deallocate()
        primitives.deallocate()
    }

    /// A new instance, retained once, each stored property holding its empty value. Nothing can
    /// fail between the allocation and the last property initialised, so no one ever sees (or
    /// releases) an instance with a property that holds no value.
    func make() -> AnyObject {
        Unmanaged<AnyObject>.fromOpaque(allocate()).takeRetainedValue()
    }

    /// The address of a new instance as ``make()`` makes it, whose one retain the caller takes over.
    @inline(__always)
    private func allocate() -> UnsafeMutableRawPointer {
        let address = mirrorstore_allocate_object(metadata, size, alignmentMask)
        (address + start).copyMemory(from: template + start, byteCount: size - start)
        for primitive in primitives { primitive.type.initializeEmpty(address + primitive.offset) }
        if !others.fields.isEmpty { others.initialize(address) }
        return address
    }

    /// Sorts the empty value of a property of `type` at `offset` into the template (plain bytes),
    /// the single values initialised in concrete code, or the other initialisers (`empty`). An
    /// embedded struct is made property by property the same way, rather than by its `init()`
    /// through a closure, when each of its properties is a strong one with an empty value: any
    /// value of the struct will do here, since every conversion that fills the instance writes
    /// every field of its plan or throws (`TypePlan.newInstance(_:)`), and one made of empty
    /// values is built in fresh memory as `EmptyInstance` builds structs without `init()`.
    #if !_runtime(_ObjC)
    private static func classify(
        _ type: Any.Type, at offset: Int, empty: EmptyField, template: UnsafeMutableRawPointer,
        primitives: inout [EmptyPrimitive], others: inout [EmptyField], depth: Int
    ) {
        if copiesAsBytes(type) {
            // Plain bytes: the template owns nothing that would have to be released.
            empty.initialize(template + offset)
        } else if let word = sharedEmptyWord(of: type, empty: empty) {
            // A reference the runtime never frees: the template holds it without a retain.
            (template + offset).storeBytes(of: word, as: UInt.self)
        } else if let primitive = type as? any FieldPrimitive.Type {
            primitives.append(EmptyPrimitive(offset: offset, type: primitive.slot))
        } else if let inner = embeddedStructFields(of: type, depth: depth) {
            for (field, initialize) in inner {
                classify(field.type, at: offset + field.offset, empty: EmptyField(offset: offset + field.offset, initialize: initialize),
                         template: template, primitives: &primitives, others: &others, depth: depth + 1)
            }
        } else {
            others.append(empty)
        }
    }

    /// The empty value of `type` as the one word it is, when that is the reference every empty
    /// array, set or dictionary shares: an object of the runtime's own that it never frees, which
    /// the compiler itself writes without a retain wherever code makes `[]`, so a copy of the word
    /// is a copy of the value, owning nothing. Nil for any other empty value, which is destroyed
    /// again here. Copied with the template's bytes, an empty list costs no call to its closure
    /// (nor the retain and release of that closure's context) per instance.
    private static func sharedEmptyWord(of type: Any.Type, empty: EmptyField) -> UInt? {
        guard type is any _MallocContentInstanceProtocol.Type, FieldLayout.metadataKind(of: type) != .optional else { return nil }
        func word<Value>(_: Value.Type) -> UInt? {
            guard MemoryLayout<Value>.size == MemoryLayout<UInt>.size else { return nil }
            let value = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<Value>.size, alignment: MemoryLayout<Value>.alignment)
            defer { value.deallocate() }
            empty.initialize(value)
            let bits = value.load(as: UInt.self)
            guard sharedEmptyWords.contains(bits) else {
                value.assumingMemoryBound(to: Value.self).deinitialize(count: 1)
                return nil
            }
            return bits
        }
        return _openExistential(type, do: word)
    }

    /// The references of the empty array, set and dictionary singletons (one each, whatever the
    /// element type).
    private static let sharedEmptyWords: Set<UInt> = [
        unsafeBitCast([UInt8](), to: UInt.self),
        unsafeBitCast(Set<UInt8>(), to: UInt.self),
        unsafeBitCast([UInt8: UInt8](), to: UInt.self),
    ]

    /// The stored properties of `type` with their empty values' initialisers, when it is a struct
    /// model whose every stored property is a strong one (no `weak` or `unowned` storage) with an
    /// empty value, at most 8 structs deep; nil otherwise.
    private static func embeddedStructFields(of type: Any.Type, depth: Int) -> [(StoredField, (UnsafeMutableRawPointer) -> Void)]? {
        guard depth < 8, type is any _AutoMallocObjectProtocol.Type, !(type is AnyClass),
              let stored = FieldLayout.storedFields(of: type) else { return nil }
        var fields: [(StoredField, (UnsafeMutableRawPointer) -> Void)] = []
        for field in stored {
            guard field.isStrong, let initialize = EmptyValue.initializer(for: field.type) else { return nil }
            fields.append((field, initialize))
        }
        return fields
    }
    #endif

    /// Whether a copy of the bytes of `type`'s empty value is a copy of the value: for trivial
    /// types, and for optionals, whose empty value is `nil`. Not for models, whose empty value
    /// comes from their `init()` each time.
    private static func copiesAsBytes(_ type: Any.Type) -> Bool {
        if type is any _AutoMallocObjectProtocol.Type { return false }
        if FieldLayout.metadataKind(of: type) == .optional { return true }
        func trivial<Value>(_: Value.Type) -> Bool { _isPOD(Value.self) }
        return _openExistential(type, do: trivial)
    }

    /// ``make()`` as `Model`, which must be the class this recipe was made for. The reference is
    /// moved out of memory holding it, its retain with it: a cast of the new object to `Model`
    /// was a copy, a retain and a release per instance.
    @inline(__always)
    func make<Model>(_ type: Model.Type) -> Model {
        var address = allocate()
        return withUnsafeMutablePointer(to: &address) { UnsafeMutableRawPointer($0).assumingMemoryBound(to: Model.self).move() }
    }

    /// This recipe, held without a retain of its own by whoever keeps it alive (its plan), so that
    /// making an instance retains and releases nothing but the instance.
    var unretained: Unretained { Unretained(recipe: Unmanaged.passUnretained(self)) }

    /// A recipe referred to without a retain (``unretained``).
    struct Unretained: @unchecked Sendable {
        fileprivate let recipe: Unmanaged<FreshObjectRecipe>

        /// ``FreshObjectRecipe/make(_:)``.
        @inline(__always)
        func make<Model>(_ type: Model.Type) -> Model {
            recipe._withUnsafeGuaranteedRef { $0.make(type) }
        }
    }

    /// Initialises the uninitialised reference at `address` with ``make()``: the plan's
    /// `initializeObject` for models made in place, such as the elements of a list.
    func initialize(_ address: UnsafeMutableRawPointer) {
        address.initializeMemory(as: AnyObject.self, to: make())
    }

    #if !_runtime(_ObjC)
    /// The size and alignment mask the runtime gives instances of `type`, read from its class
    /// metadata, when they agree with `fields` exactly: the size ends where the last field ends
    /// (or where the object header does, when there is none), the mask is the largest alignment
    /// any field needs (at least a pointer's), no two fields overlap, and the runtime lists no
    /// field that `fields` leaves out. `nil` otherwise, and for anything that is not a plain
    /// natively reference-counted class, so a layout this code does not know is never trusted.
    private static func instanceLayout(of type: AnyClass, fields: [StoredField]) -> (size: Int, alignmentMask: Int, start: Int)? {
        // Class metadata without Objective-C interop (`TargetClassMetadata` in the runtime's
        // Metadata.h): the kind, the superclass, then the flags (UInt32), the instance address
        // point (UInt32), the instance size (UInt32) and the instance alignment mask (UInt16).
        let word = MemoryLayout<Int>.size
        let metadata = unsafeBitCast(type, to: UnsafeRawPointer.self)
        let classKind: UInt = 0
        let usesSwiftRefcounting: UInt32 = 0x2
        guard metadata.load(as: UInt.self) == classKind,
              metadata.load(fromByteOffset: 2 * word, as: UInt32.self) & usesSwiftRefcounting != 0,
              metadata.load(fromByteOffset: 2 * word + 4, as: UInt32.self) == 0 else { return nil }
        let size = Int(metadata.load(fromByteOffset: 2 * word + 8, as: UInt32.self))
        let alignmentMask = Int(metadata.load(fromByteOffset: 2 * word + 12, as: UInt16.self))
        // The object header: the metadata pointer and the reference counts.
        let start = 2 * word
        var end = start
        var expectedMask = word - 1
        for field in fields.sorted(by: { $0.offset < $1.offset }) {
            let layout = memoryLayout(of: field.type)
            guard field.offset >= end else { return nil }
            end = field.offset + layout.size
            expectedMask = max(expectedMask, layout.alignment - 1)
        }
        guard size == end, alignmentMask == expectedMask,
              runtimeFieldCount(of: type) == fields.count else { return nil }
        return (size, alignmentMask, start)
    }

    private static func memoryLayout(of type: Any.Type) -> (size: Int, alignment: Int) {
        func layout<Value>(_: Value.Type) -> (size: Int, alignment: Int) {
            (MemoryLayout<Value>.size, MemoryLayout<Value>.alignment)
        }
        return _openExistential(type, do: layout)
    }

    /// How many distinct stored fields the runtime lists for `type` and its superclasses, counted
    /// by name and offset: a field that `FieldLayout` kept once for two classes (a private property
    /// of a superclass named like one of the subclass) counts twice here.
    private static func runtimeFieldCount(of type: AnyClass) -> Int? {
        var seen = Set<String>()
        var current: AnyClass? = type
        while let level = current {
            let complete = _forEachField(of: level, options: FieldLayout.classTypeOption) { name, offset, _, _ in
                seen.insert("\(offset) \(String(cString: name))")
                return true
            }
            guard complete else { return nil }
            current = _getSuperclass(level)
        }
        return seen.count
    }
    #endif
}

/// A single-value property whose empty value is initialised in concrete code.
private struct EmptyPrimitive {
    let offset: Int
    let type: StoredValueType
}

private extension StoredValueType {
    /// Initialises uninitialised memory of this type with its empty value, specialized per type
    /// where a recipe's closure would run generic code.
    func initializeEmpty(_ field: UnsafeMutableRawPointer) {
        switch self {
        case .bool: Self.initializeEmpty(Bool.self, field)
        case .int: Self.initializeEmpty(Int.self, field)
        case .int8: Self.initializeEmpty(Int8.self, field)
        case .int16: Self.initializeEmpty(Int16.self, field)
        case .int32: Self.initializeEmpty(Int32.self, field)
        case .int64: Self.initializeEmpty(Int64.self, field)
        case .uint: Self.initializeEmpty(UInt.self, field)
        case .uint8: Self.initializeEmpty(UInt8.self, field)
        case .uint16: Self.initializeEmpty(UInt16.self, field)
        case .uint32: Self.initializeEmpty(UInt32.self, field)
        case .uint64: Self.initializeEmpty(UInt64.self, field)
        case .float: Self.initializeEmpty(Float.self, field)
        case .double: Self.initializeEmpty(Double.self, field)
        case .string: Self.initializeEmpty(String.self, field)
        case .data: Self.initializeEmpty(Data.self, field)
        case .date: Self.initializeEmpty(Date.self, field)
        case .uuid: Self.initializeEmpty(UUID.self, field)
        case .decimal: Self.initializeEmpty(Decimal.self, field)
        case .url: Self.initializeEmpty(URL.self, field)
        }
    }

    @inline(__always)
    private static func initializeEmpty<Value: FieldPrimitive>(_ type: Value.Type, _ field: UnsafeMutableRawPointer) {
        field.initializeMemory(as: Value.self, to: Value.emptyValue)
    }
}
