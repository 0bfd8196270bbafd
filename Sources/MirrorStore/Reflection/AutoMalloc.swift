/// A type MirrorStore can create empty and then fill through reflection.
///
/// ``Persistable`` refines this protocol. Classes conform by declaring `init()` (`required init()`
/// when not final). A struct may declare one too, or rely on the default below.
public protocol _AutoMallocObjectProtocol {
    /// Creates an instance with default values, ready to be filled from a record.
    init()

    /// Initialises the uninitialised memory at `address`, bound to `Self`, with a new instance
    /// from ``init()``.
    ///
    /// Models do not implement this: the default below is compiled into each model's conformance,
    /// where the model's type is known, so the mapping makes linked instances with one call and no
    /// generic code.
    static func _autoMalloc(into address: UnsafeMutableRawPointer)
}

extension _AutoMallocObjectProtocol {
    /// The `init()` of a struct that declares none, such as one with `let` properties and only
    /// its memberwise initialiser: every stored property takes its type's empty value (`0`,
    /// `false`, `""`, `nil`, empty containers and data, the reference date, the all-zero UUID,
    /// an enum's first case, a linked model's `init()` value).
    ///
    /// Stores never need it to read such a struct: they build the value from its record alone.
    /// A class, or a struct with a property whose type has no empty value (a closure, say), must
    /// declare its own `init()`; calling this default on one stops the program with a message
    /// saying so, since Swift cannot restrict a protocol's default initialiser to the types it
    /// suits.
    public init() {
        self = EmptyInstance.make(Self.self)
    }

    /// A new, default-initialised instance.
    public static func _autoMalloc() -> Self { Self() }

    /// Initialises the memory at `address` with a new instance from ``init()``; inlinable so that
    /// it is specialised for each model.
    @inlinable
    public static func _autoMalloc(into address: UnsafeMutableRawPointer) {
        address.initializeMemory(as: Self.self, to: Self())
    }
}

/// A container whose content MirrorStore creates element by element: `Optional`, `Array`, `Set`
/// and `Dictionary`. Nested containers (`[[String]?]`) recurse through their content type.
public protocol _MallocContentInstanceProtocol {
    /// The type of what the container holds: `Wrapped`, `Element`, or `Value`.
    static var _contentType: Any.Type { get }
    /// An empty container: `nil`, `[]` or `[:]`.
    static func _mallocContent() -> Self
}

extension Optional: _MallocContentInstanceProtocol {
    public static var _contentType: Any.Type { Wrapped.self }
    public static func _mallocContent() -> Self { nil }
}

extension Array: _MallocContentInstanceProtocol {
    public static var _contentType: Any.Type { Element.self }
    public static func _mallocContent() -> Self { [] }
}

extension Set: _MallocContentInstanceProtocol {
    public static var _contentType: Any.Type { Element.self }
    public static func _mallocContent() -> Self { [] }
}

extension Dictionary: _MallocContentInstanceProtocol {
    public static var _contentType: Any.Type { Value.self }
    public static func _mallocContent() -> Self { [:] }
}

/// How each container builds the codec for its content, recursively.
protocol ContentCodecProviding: _MallocContentInstanceProtocol {
    static func makeContentCodec(_ factory: inout CodecFactory) throws(CodecFactory.Failure) -> any AnyValueCodec
}

extension Optional: ContentCodecProviding {
    static func makeContentCodec(_ factory: inout CodecFactory) throws(CodecFactory.Failure) -> any AnyValueCodec {
        let wrapped = try factory.codec(for: Wrapped.self)
        // `nil` and `.some(nil)` would both be stored as null and could not be told apart.
        guard !wrapped.kind.isOptional else { throw .unsupported }
        return OptionalCodec<Wrapped>(wrapped: wrapped)
    }
}

extension Array: ContentCodecProviding {
    static func makeContentCodec(_ factory: inout CodecFactory) throws(CodecFactory.Failure) -> any AnyValueCodec {
        if let primitive = CodecFactory.primitiveArrayCodec(of: Element.self) { return primitive }
        if let models = try factory.modelArrayCodec(of: Element.self) { return models }
        return ArrayCodec<Element>(element: try factory.codec(for: Element.self))
    }
}

extension Set: ContentCodecProviding {
    static func makeContentCodec(_ factory: inout CodecFactory) throws(CodecFactory.Failure) -> any AnyValueCodec {
        if let primitive = CodecFactory.primitiveSetCodec(of: Element.self) { return primitive }
        return SetCodec<Element>(element: try factory.codec(for: Element.self))
    }
}

extension Dictionary: ContentCodecProviding {
    static func makeContentCodec(_ factory: inout CodecFactory) throws(CodecFactory.Failure) -> any AnyValueCodec {
        guard Key.self == String.self else { throw .unsupported }
        return DictionaryCodec<Value>(value: try factory.codec(for: Value.self))
    }
}
