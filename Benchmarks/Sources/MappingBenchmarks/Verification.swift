import Foundation
import MirrorStore

// Before anything is timed, every implementation must round-trip the fixtures exactly, and the
// three record-producing implementations must produce the same records: a broken or lazy
// implementation cannot win.

struct VerificationFailure: Error, CustomStringConvertible {
    let description: String
}

/// The differences between two models, as `path: a ≠ b` lines; empty when they are equal.
protocol ContentComparable {
    func differences(from other: Self) -> [String]
}

private func compare<Value: Equatable>(_ name: String, _ a: Value, _ b: Value, into result: inout [String]) {
    if a != b { result.append("\(name): \(a) ≠ \(b)") }
}

extension User: ContentComparable {
    func differences(from other: User) -> [String] {
        var result: [String] = []
        compare("id", id, other.id, into: &result)
        compare("name", name, other.name, into: &result)
        compare("email", email, other.email, into: &result)
        compare("age", age, other.age, into: &result)
        compare("score", score, other.score, into: &result)
        compare("active", active, other.active, into: &result)
        compare("createdAt", createdAt, other.createdAt, into: &result)
        compare("nickname", nickname, other.nickname, into: &result)
        return result
    }
}

extension Address: ContentComparable {
    func differences(from other: Address) -> [String] {
        var result: [String] = []
        compare("street", street, other.street, into: &result)
        compare("city", city, other.city, into: &result)
        compare("postalCode", postalCode, other.postalCode, into: &result)
        compare("country", country, other.country, into: &result)
        return result
    }
}

extension LineItem: ContentComparable {
    func differences(from other: LineItem) -> [String] {
        var result: [String] = []
        compare("sku", sku, other.sku, into: &result)
        compare("quantity", quantity, other.quantity, into: &result)
        compare("unitPrice", unitPrice, other.unitPrice, into: &result)
        compare("note", note, other.note, into: &result)
        return result
    }
}

extension Order: ContentComparable {
    func differences(from other: Order) -> [String] {
        var result: [String] = []
        compare("id", id, other.id, into: &result)
        compare("customer", customer, other.customer, into: &result)
        compare("placedAt", placedAt, other.placedAt, into: &result)
        compare("paid", paid, other.paid, into: &result)
        switch (shippingAddress, other.shippingAddress) {
        case (nil, nil): break
        case (let a?, let b?): result += a.differences(from: b).map { "shippingAddress.\($0)" }
        default: result.append("shippingAddress: one is nil")
        }
        compare("items.count", items.count, other.items.count, into: &result)
        for (index, (a, b)) in zip(items, other.items).enumerated() {
            result += a.differences(from: b).map { "items[\(index)].\($0)" }
        }
        compare("tags", tags, other.tags, into: &result)
        compare("couponCodes", couponCodes, other.couponCodes, into: &result)
        return result
    }
}

/// The differences between two records: type names, property names and kinds, and values, with
/// linked records compared deeply. Lists that come from sets are compared as sets.
func recordDifferences(_ a: ManagedObject, _ b: ManagedObject, path: String = "") -> [String] {
    let here = path.isEmpty ? a.objectSchema.typeName : path
    guard a.objectSchema.typeName == b.objectSchema.typeName else {
        return ["\(here): type \(a.objectSchema.typeName) ≠ \(b.objectSchema.typeName)"]
    }
    let aProperties = a.objectSchema.properties
    let bProperties = b.objectSchema.properties
    guard aProperties.map(\.name) == bProperties.map(\.name), aProperties.map(\.kind) == bProperties.map(\.kind) else {
        return ["\(here): schema \(a.objectSchema) ≠ \(b.objectSchema)"]
    }
    var result: [String] = []
    for (index, property) in aProperties.enumerated() {
        let unordered: Bool = if case .set = property.kind { true } else { false }
        result += valueDifferences(
            a[propertyAt: index], b[propertyAt: index], unordered: unordered, path: "\(here).\(property.name)")
    }
    return result
}

private func valueDifferences(_ a: RecordValue, _ b: RecordValue, unordered: Bool, path: String) -> [String] {
    switch (a, b) {
    case (.object(let x), .object(let y)):
        return recordDifferences(x, y, path: path)
    case (.list(let x), .list(let y)):
        guard x.count == y.count else { return ["\(path): \(x.count) ≠ \(y.count) elements"] }
        if unordered { return Set(x) == Set(y) ? [] : ["\(path): \(x) ≠ \(y)"] }
        return zip(x, y).enumerated().flatMap { index, pair in
            valueDifferences(pair.0, pair.1, unordered: false, path: "\(path)[\(index)]")
        }
    default:
        return a == b ? [] : ["\(path): \(a) ≠ \(b)"]
    }
}

/// Round-trips `models` through `mapping` and returns the records (or JSON) it produced.
func verifyRoundTrip<M: Mapping>(_ mapping: M, _ models: [M.Model], label: String) throws -> [M.Stored]
where M.Model: ContentComparable {
    var stored: [M.Stored] = []
    for (index, model) in models.enumerated() {
        let record = try mapping.stored(from: model)
        let copy = try mapping.model(from: record)
        let differences = copy.differences(from: model)
        guard differences.isEmpty else {
            throw VerificationFailure(description:
                "\(label), \(mapping.implementation.rawValue), object \(index): the round trip changed \(differences.joined(separator: "; "))")
        }
        stored.append(record)
    }
    return stored
}

/// Checks that two implementations' records of the same models are the same records.
func verifySameRecords(_ a: [ManagedObject], _ b: [ManagedObject], _ labelA: String, _ labelB: String) throws {
    for (index, (x, y)) in zip(a, b).enumerated() {
        let differences = recordDifferences(x, y)
        guard differences.isEmpty else {
            throw VerificationFailure(description:
                "object \(index): \(labelA) and \(labelB) records differ: \(differences.joined(separator: "; "))")
        }
    }
}

/// Spot checks that do not trust any implementation: a few fields read straight from the
/// MirrorStore records and the JSON, against the source models.
func spotCheck(users: [User], records: [ManagedObject], json: [Data]) throws {
    for (index, (user, record)) in zip(users, records).enumerated() {
        guard record["id"] == .int(Int64(user.id)), record["email"] == .string(user.email),
              record["score"] == .double(user.score), record["createdAt"] == .date(user.createdAt),
              record["nickname"] == (user.nickname.map(RecordValue.string) ?? .null)
        else { throw VerificationFailure(description: "User \(index): MirrorStore record \(record) does not hold the model's values") }
    }
    for (index, (user, data)) in zip(users, json).enumerated() {
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              object["id"] as? Int == user.id, object["email"] as? String == user.email
        else { throw VerificationFailure(description: "User \(index): the JSON does not hold the model's values") }
    }
}

func spotCheck(orders: [Order], records: [ManagedObject]) throws {
    for (index, (order, record)) in zip(orders, records).enumerated() {
        guard record["id"] == .int(Int64(order.id)), record["customer"] == .string(order.customer),
              case .list(let items)? = record["items"], items.count == order.items.count,
              case .object(let first)? = items.first, first["sku"] == .string(order.items[0].sku),
              case .object(let address)? = record["shippingAddress"],
              address["street"] == .string(order.shippingAddress?.street ?? ""),
              record["tags"] == .list(List(order.tags.map(RecordValue.string)))
        else { throw VerificationFailure(description: "Order \(index): MirrorStore record \(record) does not hold the model's values") }
    }
}
