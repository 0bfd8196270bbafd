import Foundation
import MirrorStore

// (c) The naive reflective mapper: nothing is cached, every conversion re-derives what it needs.
//
// Model → record: walk `Mirror(reflecting:)` of the instance; convert each child by its mirror's
// display style (optional, collection, set, class) and by dynamic casts (`as? Int`, `as? String`, …)
// for single values, recursing into linked models and collections; derive the schema on the spot
// (a new `ObjectSchema` per record, from the children's labels and the kinds found), then fill a
// `ManagedObject(objectSchema:)` with positional `setValue(_:forPropertyAt:)`.
//
// Record → model: create the model with `init()`, walk `Mirror(reflecting:)` of that fresh instance
// to list its property names, look each one up in the record by name (`record[label]`), turn the
// record value into a Swift value (`Any`), and hand it to the model's hand-written by-name setter
// (`NaiveAssignable.assign(_:to:)`), which dynamically casts it to the property's type. Linux has no
// KVC, so a naive mapper that does not touch raw memory cannot assign without such a setter.

protocol NaiveAssignable: AnyObject {
    init()
    /// Sets the property called `name` from a value produced by `NaiveMirror.swiftValue(_:)`.
    func assign(_ value: Any, to name: String) throws
}

enum NaiveMirror {
    // MARK: Model → record

    static func record(for model: Any) throws -> ManagedObject {
        let mirror = Mirror(reflecting: model)
        var properties: [ObjectSchema.Property] = []
        var values: [RecordValue] = []
        let primaryKey = (type(of: model) as? any Persistable.Type)?.primaryKey
        for child in mirror.children {
            guard let label = child.label else { continue }
            let (kind, value) = try convert(child.value)
            properties.append(ObjectSchema.Property(name: label, kind: kind, isPrimaryKey: label == primaryKey))
            values.append(value)
        }
        let schema = ObjectSchema(typeName: String(describing: type(of: model)), properties: properties)
        let record = ManagedObject(objectSchema: schema)
        for (index, value) in values.enumerated() {
            try record.setValue(value, forPropertyAt: index)
        }
        return record
    }

    static func convert(_ value: Any) throws -> (PropertyKind, RecordValue) {
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional?:
            guard let wrapped = mirror.children.first?.value else {
                return (.optional(try kind(ofContentOf: type(of: value))), .null)
            }
            let (kind, converted) = try convert(wrapped)
            return (.optional(kind), converted)
        case .collection?, .set?:
            var elementKind: PropertyKind?
            var elements: [RecordValue] = []
            for child in mirror.children {
                let (kind, converted) = try convert(child.value)
                elementKind = kind
                elements.append(converted)
            }
            let element = try elementKind ?? kind(ofContentOf: type(of: value))
            let kind: PropertyKind = mirror.displayStyle == .set ? .set(element) : .list(element)
            return (kind, .list(List(elements)))
        case .class?:
            let record = try record(for: value)
            return (.object(typeName: record.objectSchema.typeName), .object(record))
        default:
            if let v = value as? Int { return (.int, .int(Int64(v))) }
            if let v = value as? String { return (.string, .string(v)) }
            if let v = value as? Double { return (.double, .double(v)) }
            if let v = value as? Bool { return (.bool, .bool(v)) }
            if let v = value as? Date { return (.date, .date(v)) }
            if let v = value as? Int64 { return (.int64, .int(v)) }
            if let v = value as? Float { return (.float, .float(v)) }
            if let v = value as? UUID { return (.uuid, .uuid(v)) }
            if let v = value as? Data { return (.data, .data(v)) }
            throw TranslationError("unsupported value of type \(type(of: value))")
        }
    }

    /// The kind of an optional's or a collection's content when there is no value to look at.
    static func kind(ofContentOf type: Any.Type) throws -> PropertyKind {
        guard let container = type as? any _MallocContentInstanceProtocol.Type else {
            throw TranslationError("unsupported container \(type)")
        }
        return try kind(of: container._contentType)
    }

    static func kind(of type: Any.Type) throws -> PropertyKind {
        if type == Int.self { return .int }
        if type == String.self { return .string }
        if type == Double.self { return .double }
        if type == Bool.self { return .bool }
        if type == Date.self { return .date }
        if let model = type as? any Persistable.Type { return .object(typeName: model.persistedTypeName) }
        throw TranslationError("unsupported type \(type)")
    }

    // MARK: Record → model

    static func model<Model: NaiveAssignable>(_ type: Model.Type, from record: ManagedObject) throws -> Model {
        guard record.objectSchema.typeName == String(describing: type) else {
            throw TranslationError("not a \(type) record")
        }
        let model = Model()
        for child in Mirror(reflecting: model).children {
            guard let label = child.label else { continue }
            guard let value = record[label] else { throw TranslationError("\(type).\(label) missing") }
            try model.assign(swiftValue(value), to: label)
        }
        return model
    }

    /// The record value as a Swift value: scalars as themselves, `null` as ``Null``, lists as `[Any]`,
    /// linked records as the `ManagedObject` (the setter knows which model it holds).
    static func swiftValue(_ value: RecordValue) -> Any {
        switch value {
        case .null: return Null()
        case .bool(let v): return v
        case .int(let v): return Int(v)
        case .uint(let v): return UInt(v)
        case .float(let v): return v
        case .double(let v): return v
        case .string(let v): return v
        case .data(let v): return v
        case .date(let v): return v
        case .uuid(let v): return v
        case .decimal(let v): return v
        case .url(let v): return v
        case .object(let record): return record
        case .list(let list): return list.map(swiftValue)
        case .dictionary(let entries): return entries.mapValues(swiftValue)
        }
    }

    static func cast<Value>(_ value: Any, _ path: @autoclosure () -> String) throws -> Value {
        guard let result = value as? Value else { throw TranslationError("\(path()) has the wrong type") }
        return result
    }

    static func castOptional<Value>(_ value: Any, _ path: @autoclosure () -> String) throws -> Value? {
        if value is Null { return nil }
        return try cast(value, path())
    }

    /// What `swiftValue(_:)` returns for a record's `null`.
    struct Null {}
}

// MARK: The by-name setters a naive mapper needs on Linux

extension User: NaiveAssignable {
    func assign(_ value: Any, to name: String) throws {
        switch name {
        case "id": id = try NaiveMirror.cast(value, "User.id")
        case "name": self.name = try NaiveMirror.cast(value, "User.name")
        case "email": email = try NaiveMirror.cast(value, "User.email")
        case "age": age = try NaiveMirror.cast(value, "User.age")
        case "score": score = try NaiveMirror.cast(value, "User.score")
        case "active": active = try NaiveMirror.cast(value, "User.active")
        case "createdAt": createdAt = try NaiveMirror.cast(value, "User.createdAt")
        case "nickname": nickname = try NaiveMirror.castOptional(value, "User.nickname")
        default: throw TranslationError("User has no property \(name)")
        }
    }
}

extension Address: NaiveAssignable {
    func assign(_ value: Any, to name: String) throws {
        switch name {
        case "street": street = try NaiveMirror.cast(value, "Address.street")
        case "city": city = try NaiveMirror.cast(value, "Address.city")
        case "postalCode": postalCode = try NaiveMirror.cast(value, "Address.postalCode")
        case "country": country = try NaiveMirror.cast(value, "Address.country")
        default: throw TranslationError("Address has no property \(name)")
        }
    }
}

extension LineItem: NaiveAssignable {
    func assign(_ value: Any, to name: String) throws {
        switch name {
        case "sku": sku = try NaiveMirror.cast(value, "LineItem.sku")
        case "quantity": quantity = try NaiveMirror.cast(value, "LineItem.quantity")
        case "unitPrice": unitPrice = try NaiveMirror.cast(value, "LineItem.unitPrice")
        case "note": note = try NaiveMirror.castOptional(value, "LineItem.note")
        default: throw TranslationError("LineItem has no property \(name)")
        }
    }
}

extension Order: NaiveAssignable {
    func assign(_ value: Any, to name: String) throws {
        switch name {
        case "id": id = try NaiveMirror.cast(value, "Order.id")
        case "customer": customer = try NaiveMirror.cast(value, "Order.customer")
        case "placedAt": placedAt = try NaiveMirror.cast(value, "Order.placedAt")
        case "paid": paid = try NaiveMirror.cast(value, "Order.paid")
        case "shippingAddress":
            let record: ManagedObject? = try NaiveMirror.castOptional(value, "Order.shippingAddress")
            shippingAddress = try record.map { try NaiveMirror.model(Address.self, from: $0) }
        case "items":
            let records: [Any] = try NaiveMirror.cast(value, "Order.items")
            items = try records.map { element in
                try NaiveMirror.model(LineItem.self, from: NaiveMirror.cast(element, "Order.items[]"))
            }
        case "tags":
            let elements: [Any] = try NaiveMirror.cast(value, "Order.tags")
            tags = try elements.map { try NaiveMirror.cast($0, "Order.tags[]") }
        case "couponCodes":
            let elements: [Any] = try NaiveMirror.cast(value, "Order.couponCodes")
            couponCodes = Set(try elements.map { try NaiveMirror.cast($0, "Order.couponCodes[]") as Int })
        default: throw TranslationError("Order has no property \(name)")
        }
    }
}
