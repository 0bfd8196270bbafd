struct OptionalCodec<Wrapped>: ValueCodec {
    let wrapped: any ValueCodec<Wrapped>

    var kind: PropertyKind { .optional(wrapped.kind) }
    var linkedPlans: [TypePlan] { wrapped.linkedPlans }

    func encode(_ value: Wrapped?, in context: inout EncodingContext) throws(MappingError) -> RecordValue {
        guard let value else { return .null }
        return try wrapped.encode(value, in: &context)
    }

    func decode(_ record: RecordValue, in context: inout DecodingContext) throws(MappingError) -> Wrapped? {
        if case .null = record { return nil }
        return try wrapped.decode(record, in: &context)
    }
}

struct ArrayCodec<Element>: ValueCodec {
    let element: any ValueCodec<Element>

    var kind: PropertyKind { .list(element.kind) }
    var linkedPlans: [TypePlan] { element.linkedPlans }

    func encode(_ value: [Element], in context: inout EncodingContext) throws(MappingError) -> RecordValue {
        var list: [RecordValue] = []
        list.reserveCapacity(value.count)
        // A counter, not `enumerated()`: this generic code is not specialized, and each
        // `EnumeratedSequence<[Element]>` would cost a metadata lookup.
        var index = 0
        for item in value {
            do throws(MappingError) {
                list.append(try element.encode(item, in: &context))
            } catch {
                throw error.nested(under: "[\(index)]")
            }
            index += 1
        }
        return .list(List(list))
    }

    func decode(_ record: RecordValue, in context: inout DecodingContext) throws(MappingError) -> [Element] {
        guard case .list(let list) = record else { throw mismatch(record) }
        var result: [Element] = []
        result.reserveCapacity(list.count)
        // By index, not `enumerated()`: see `encode`.
        for index in list.indices {
            do throws(MappingError) {
                result.append(try element.decode(list[index], in: &context))
            } catch {
                throw error.nested(under: "[\(index)]")
            }
        }
        return result
    }
}

struct SetCodec<Element: Hashable>: ValueCodec {
    let element: any ValueCodec<Element>

    var kind: PropertyKind { .set(element.kind) }
    var linkedPlans: [TypePlan] { element.linkedPlans }

    func encode(_ value: Set<Element>, in context: inout EncodingContext) throws(MappingError) -> RecordValue {
        var list: [RecordValue] = []
        list.reserveCapacity(value.count)
        for item in value {
            do throws(MappingError) {
                list.append(try element.encode(item, in: &context))
            } catch {
                throw error.nested(under: "[\(list.count)]")
            }
        }
        return .list(List(list))
    }

    func decode(_ record: RecordValue, in context: inout DecodingContext) throws(MappingError) -> Set<Element> {
        guard case .list(let list) = record else { throw mismatch(record) }
        var result = Set<Element>(minimumCapacity: list.count)
        for index in list.indices {
            do throws(MappingError) {
                let decoded = try element.decode(list[index], in: &context)
                // A duplicate is dropped by the set, but the identity map may refer to it.
                if !result.insert(decoded).inserted { context.keep(discarded: decoded) }
            } catch {
                throw error.nested(under: "[\(index)]")
            }
        }
        return result
    }
}

struct DictionaryCodec<Value>: ValueCodec {
    let value: any ValueCodec<Value>

    var kind: PropertyKind { .dictionary(value.kind) }
    var linkedPlans: [TypePlan] { value.linkedPlans }

    func encode(_ dictionary: [String: Value], in context: inout EncodingContext) throws(MappingError) -> RecordValue {
        var entries: [String: RecordValue] = [:]
        entries.reserveCapacity(dictionary.count)
        for (key, item) in dictionary {
            do throws(MappingError) {
                entries[key] = try value.encode(item, in: &context)
            } catch {
                throw error.nested(under: "[\(key.debugDescription)]")
            }
        }
        return .dictionary(entries)
    }

    func decode(_ record: RecordValue, in context: inout DecodingContext) throws(MappingError) -> [String: Value] {
        guard case .dictionary(let entries) = record else { throw mismatch(record) }
        var result: [String: Value] = [:]
        result.reserveCapacity(entries.count)
        for (key, item) in entries {
            do throws(MappingError) {
                result[key] = try value.decode(item, in: &context)
            } catch {
                throw error.nested(under: "[\(key.debugDescription)]")
            }
        }
        return result
    }
}
