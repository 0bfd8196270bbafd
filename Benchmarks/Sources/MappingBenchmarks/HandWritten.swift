import Foundation
import MirrorStore

// (a) The limit: the translator a developer writes by hand against the public `ManagedObject` API.
// Schemas are built once; writes are positional `setValue(_:forPropertyAt:)` (the only public
// writer, and it checks each value against the schema); reads are positional
// `record[propertyAt:]` with one guard per field; nested records are built by hand.

/// A record that does not have the shape a translator expects.
struct TranslationError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum HandWritten {
    // MARK: Schemas, built once, in the same shape reflection derives.

    static let userSchema = ObjectSchema(typeName: "User", properties: [
        .init(name: "id", kind: .int, isPrimaryKey: true),
        .init(name: "name", kind: .string),
        .init(name: "email", kind: .string),
        .init(name: "age", kind: .int),
        .init(name: "score", kind: .double),
        .init(name: "active", kind: .bool),
        .init(name: "createdAt", kind: .date),
        .init(name: "nickname", kind: .optional(.string)),
    ])

    static let addressSchema = ObjectSchema(typeName: "Address", properties: [
        .init(name: "street", kind: .string),
        .init(name: "city", kind: .string),
        .init(name: "postalCode", kind: .string),
        .init(name: "country", kind: .string),
    ])

    static let lineItemSchema = ObjectSchema(typeName: "LineItem", properties: [
        .init(name: "sku", kind: .string),
        .init(name: "quantity", kind: .int),
        .init(name: "unitPrice", kind: .double),
        .init(name: "note", kind: .optional(.string)),
    ])

    static let orderSchema = ObjectSchema(typeName: "Order", properties: [
        .init(name: "id", kind: .int, isPrimaryKey: true),
        .init(name: "customer", kind: .string),
        .init(name: "placedAt", kind: .date),
        .init(name: "paid", kind: .bool),
        .init(name: "shippingAddress", kind: .optional(.object(typeName: "Address"))),
        .init(name: "items", kind: .list(.object(typeName: "LineItem"))),
        .init(name: "tags", kind: .list(.string)),
        .init(name: "couponCodes", kind: .set(.int)),
    ])

    // MARK: User

    static func record(for user: User) throws -> ManagedObject {
        let record = ManagedObject(objectSchema: userSchema)
        try record.setValue(.int(Int64(user.id)), forPropertyAt: 0)
        try record.setValue(.string(user.name), forPropertyAt: 1)
        try record.setValue(.string(user.email), forPropertyAt: 2)
        try record.setValue(.int(Int64(user.age)), forPropertyAt: 3)
        try record.setValue(.double(user.score), forPropertyAt: 4)
        try record.setValue(.bool(user.active), forPropertyAt: 5)
        try record.setValue(.date(user.createdAt), forPropertyAt: 6)
        if let nickname = user.nickname { try record.setValue(.string(nickname), forPropertyAt: 7) }
        return record
    }

    static func user(from record: ManagedObject) throws -> User {
        guard record.objectSchema.typeName == "User" else { throw TranslationError("not a User record") }
        let user = User()
        guard case .int(let id) = record[propertyAt: 0] else { throw TranslationError("User.id") }
        user.id = Int(id)
        guard case .string(let name) = record[propertyAt: 1] else { throw TranslationError("User.name") }
        user.name = name
        guard case .string(let email) = record[propertyAt: 2] else { throw TranslationError("User.email") }
        user.email = email
        guard case .int(let age) = record[propertyAt: 3] else { throw TranslationError("User.age") }
        user.age = Int(age)
        guard case .double(let score) = record[propertyAt: 4] else { throw TranslationError("User.score") }
        user.score = score
        guard case .bool(let active) = record[propertyAt: 5] else { throw TranslationError("User.active") }
        user.active = active
        guard case .date(let createdAt) = record[propertyAt: 6] else { throw TranslationError("User.createdAt") }
        user.createdAt = createdAt
        switch record[propertyAt: 7] {
        case .null: user.nickname = nil
        case .string(let nickname): user.nickname = nickname
        default: throw TranslationError("User.nickname")
        }
        return user
    }

    // MARK: Order

    static func record(for address: Address) throws -> ManagedObject {
        let record = ManagedObject(objectSchema: addressSchema)
        try record.setValue(.string(address.street), forPropertyAt: 0)
        try record.setValue(.string(address.city), forPropertyAt: 1)
        try record.setValue(.string(address.postalCode), forPropertyAt: 2)
        try record.setValue(.string(address.country), forPropertyAt: 3)
        return record
    }

    static func record(for item: LineItem) throws -> ManagedObject {
        let record = ManagedObject(objectSchema: lineItemSchema)
        try record.setValue(.string(item.sku), forPropertyAt: 0)
        try record.setValue(.int(Int64(item.quantity)), forPropertyAt: 1)
        try record.setValue(.double(item.unitPrice), forPropertyAt: 2)
        if let note = item.note { try record.setValue(.string(note), forPropertyAt: 3) }
        return record
    }

    static func record(for order: Order) throws -> ManagedObject {
        let record = ManagedObject(objectSchema: orderSchema)
        try record.setValue(.int(Int64(order.id)), forPropertyAt: 0)
        try record.setValue(.string(order.customer), forPropertyAt: 1)
        try record.setValue(.date(order.placedAt), forPropertyAt: 2)
        try record.setValue(.bool(order.paid), forPropertyAt: 3)
        if let address = order.shippingAddress {
            try record.setValue(.object(try self.record(for: address)), forPropertyAt: 4)
        }
        var items: [RecordValue] = []
        items.reserveCapacity(order.items.count)
        for item in order.items { items.append(.object(try self.record(for: item))) }
        try record.setValue(.list(List(items)), forPropertyAt: 5)
        var tags: [RecordValue] = []
        tags.reserveCapacity(order.tags.count)
        for tag in order.tags { tags.append(.string(tag)) }
        try record.setValue(.list(List(tags)), forPropertyAt: 6)
        var codes: [RecordValue] = []
        codes.reserveCapacity(order.couponCodes.count)
        for code in order.couponCodes { codes.append(.int(Int64(code))) }
        try record.setValue(.list(List(codes)), forPropertyAt: 7)
        return record
    }

    static func address(from record: ManagedObject) throws -> Address {
        guard record.objectSchema.typeName == "Address" else { throw TranslationError("not an Address record") }
        let address = Address()
        guard case .string(let street) = record[propertyAt: 0] else { throw TranslationError("Address.street") }
        address.street = street
        guard case .string(let city) = record[propertyAt: 1] else { throw TranslationError("Address.city") }
        address.city = city
        guard case .string(let postalCode) = record[propertyAt: 2] else { throw TranslationError("Address.postalCode") }
        address.postalCode = postalCode
        guard case .string(let country) = record[propertyAt: 3] else { throw TranslationError("Address.country") }
        address.country = country
        return address
    }

    static func lineItem(from record: ManagedObject) throws -> LineItem {
        guard record.objectSchema.typeName == "LineItem" else { throw TranslationError("not a LineItem record") }
        let item = LineItem()
        guard case .string(let sku) = record[propertyAt: 0] else { throw TranslationError("LineItem.sku") }
        item.sku = sku
        guard case .int(let quantity) = record[propertyAt: 1] else { throw TranslationError("LineItem.quantity") }
        item.quantity = Int(quantity)
        guard case .double(let unitPrice) = record[propertyAt: 2] else { throw TranslationError("LineItem.unitPrice") }
        item.unitPrice = unitPrice
        switch record[propertyAt: 3] {
        case .null: item.note = nil
        case .string(let note): item.note = note
        default: throw TranslationError("LineItem.note")
        }
        return item
    }

    static func order(from record: ManagedObject) throws -> Order {
        guard record.objectSchema.typeName == "Order" else { throw TranslationError("not an Order record") }
        let order = Order()
        guard case .int(let id) = record[propertyAt: 0] else { throw TranslationError("Order.id") }
        order.id = Int(id)
        guard case .string(let customer) = record[propertyAt: 1] else { throw TranslationError("Order.customer") }
        order.customer = customer
        guard case .date(let placedAt) = record[propertyAt: 2] else { throw TranslationError("Order.placedAt") }
        order.placedAt = placedAt
        guard case .bool(let paid) = record[propertyAt: 3] else { throw TranslationError("Order.paid") }
        order.paid = paid
        switch record[propertyAt: 4] {
        case .null: order.shippingAddress = nil
        case .object(let address): order.shippingAddress = try self.address(from: address)
        default: throw TranslationError("Order.shippingAddress")
        }
        guard case .list(let items) = record[propertyAt: 5] else { throw TranslationError("Order.items") }
        var orderItems: [LineItem] = []
        orderItems.reserveCapacity(items.count)
        for item in items {
            guard case .object(let itemRecord) = item else { throw TranslationError("Order.items[]") }
            orderItems.append(try lineItem(from: itemRecord))
        }
        order.items = orderItems
        guard case .list(let tags) = record[propertyAt: 6] else { throw TranslationError("Order.tags") }
        var orderTags: [String] = []
        orderTags.reserveCapacity(tags.count)
        for tag in tags {
            guard case .string(let text) = tag else { throw TranslationError("Order.tags[]") }
            orderTags.append(text)
        }
        order.tags = orderTags
        guard case .list(let codes) = record[propertyAt: 7] else { throw TranslationError("Order.couponCodes") }
        var couponCodes = Set<Int>(minimumCapacity: codes.count)
        for code in codes {
            guard case .int(let value) = code else { throw TranslationError("Order.couponCodes[]") }
            couponCodes.insert(Int(value))
        }
        order.couponCodes = couponCodes
        return order
    }
}
