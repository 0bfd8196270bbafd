import Foundation

/// The single-value types as elements of arrays and sets. Whole containers are converted by these
/// requirements, which each conforming type runs as its own specialized copy (see
/// `FieldPrimitive`): the generic `ArrayCodec` and `SetCodec` would make one dynamic call per
/// element and look up `Optional<Element>`'s metadata for each.
protocol ContainerPrimitive: FieldPrimitive, Hashable {
    // One per container, not one generic over `Sequence`: a witness generic over its argument
    // would run unspecialized for it.
    static func listValue(of array: [Self]) -> RecordValue
    static func listValue(of set: Set<Self>) -> RecordValue
    static func array(from list: List<RecordValue>) throws(MappingError) -> [Self]
    static func set(from list: List<RecordValue>) throws(MappingError) -> Set<Self>
}

extension ContainerPrimitive {
    static func listValue(of array: [Self]) -> RecordValue {
        var list: [RecordValue] = []
        list.reserveCapacity(array.count)
        for element in array { list.append(element.recordValue) }
        return .list(List(list))
    }

    static func listValue(of set: Set<Self>) -> RecordValue {
        var list: [RecordValue] = []
        list.reserveCapacity(set.count)
        for element in set { list.append(element.recordValue) }
        return .list(List(list))
    }

    static func array(from list: List<RecordValue>) throws(MappingError) -> [Self] {
        var result: [Self] = []
        result.reserveCapacity(list.count)
        for index in list.indices {
            guard let value = Self(recordValue: list[index]) else { throw elementMismatch(list, at: index) }
            result.append(value)
        }
        return result
    }

    static func set(from list: List<RecordValue>) throws(MappingError) -> Set<Self> {
        var result = Set<Self>(minimumCapacity: list.count)
        for index in list.indices {
            guard let value = Self(recordValue: list[index]) else { throw elementMismatch(list, at: index) }
            result.insert(value)
        }
        return result
    }

    private static func elementMismatch(_ list: List<RecordValue>, at index: Int) -> MappingError {
        MappingError.mismatch(expected: propertyKind, found: list[index]).nested(under: "[\(index)]")
    }
}

extension Bool: ContainerPrimitive {}
extension Int: ContainerPrimitive {}
extension Int8: ContainerPrimitive {}
extension Int16: ContainerPrimitive {}
extension Int32: ContainerPrimitive {}
extension Int64: ContainerPrimitive {}
extension UInt: ContainerPrimitive {}
extension UInt8: ContainerPrimitive {}
extension UInt16: ContainerPrimitive {}
extension UInt32: ContainerPrimitive {}
extension UInt64: ContainerPrimitive {}
extension Float: ContainerPrimitive {}
extension Double: ContainerPrimitive {}
extension String: ContainerPrimitive {}
extension Data: ContainerPrimitive {}
extension Date: ContainerPrimitive {}
extension UUID: ContainerPrimitive {}
extension Decimal: ContainerPrimitive {}
extension URL: ContainerPrimitive {}

/// `[Element]` for a single-value `Element`.
struct PrimitiveArrayCodec<Element: ContainerPrimitive>: ValueCodec {
    var kind: PropertyKind { .list(Element.propertyKind) }
    var directRead: DirectRead? { .list(Element.slot) }

    func encode(_ value: [Element], in context: inout EncodingContext) throws(MappingError) -> RecordValue {
        Element.listValue(of: value)
    }

    func decode(_ record: RecordValue, in context: inout DecodingContext) throws(MappingError) -> [Element] {
        guard case .list(let list) = record else { throw mismatch(record) }
        return try Element.array(from: list)
    }
}

/// `Set<Element>` for a single-value `Element`.
struct PrimitiveSetCodec<Element: ContainerPrimitive>: ValueCodec {
    var kind: PropertyKind { .set(Element.propertyKind) }
    var directRead: DirectRead? { .set(Element.slot) }

    func encode(_ value: Set<Element>, in context: inout EncodingContext) throws(MappingError) -> RecordValue {
        Element.listValue(of: value)
    }

    func decode(_ record: RecordValue, in context: inout DecodingContext) throws(MappingError) -> Set<Element> {
        guard case .list(let list) = record else { throw mismatch(record) }
        return try Element.set(from: list)
    }
}

extension CodecFactory {
    /// The codec of `[Element]` when `Element` is a single-value type.
    static func primitiveArrayCodec(of element: Any.Type) -> (any AnyValueCodec)? {
        func make<Element: ContainerPrimitive>(_: Element.Type) -> any AnyValueCodec { PrimitiveArrayCodec<Element>() }
        guard let primitive = element as? any ContainerPrimitive.Type else { return nil }
        return make(primitive)
    }

    /// The codec of `Set<Element>` when `Element` is a single-value type.
    static func primitiveSetCodec(of element: Any.Type) -> (any AnyValueCodec)? {
        func make<Element: ContainerPrimitive>(_: Element.Type) -> any AnyValueCodec { PrimitiveSetCodec<Element>() }
        guard let primitive = element as? any ContainerPrimitive.Type else { return nil }
        return make(primitive)
    }
}
