import Foundation
import MirrorStore

// The benchmark models. Each is a plain final class, as the brief's models are, and conforms to
// `Persistable` (for MirrorStore) and `Codable` (for the JSON baseline) with no other code.

/// The flat model: eight scalar fields, one of them optional.
final class User: Persistable, Codable {
    var id = 0
    var name = ""
    var email = ""
    var age = 0
    var score = 0.0
    var active = false
    var createdAt = Date(timeIntervalSinceReferenceDate: 0)
    var nickname: String?

    init() {}

    static var primaryKey: String? { "id" }
}

/// The to-one link target of ``Order``.
final class Address: Persistable, Codable {
    var street = ""
    var city = ""
    var postalCode = ""
    var country = ""

    init() {}
}

/// The child model of ``Order``: ten of them per order.
final class LineItem: Persistable, Codable {
    var sku = ""
    var quantity = 0
    var unitPrice = 0.0
    var note: String?

    init() {}
}

/// The nested model: a to-one link, a list of ten child models, a `[String]`, a `Set<Int>` and
/// four scalars.
final class Order: Persistable, Codable {
    var id = 0
    var customer = ""
    var placedAt = Date(timeIntervalSinceReferenceDate: 0)
    var paid = false
    var shippingAddress: Address?
    var items: [LineItem] = []
    var tags: [String] = []
    var couponCodes: Set<Int> = []

    init() {}

    static var primaryKey: String? { "id" }
}

// MARK: - Distinct instances

/// The data set: every instance differs, strings are a realistic mix of short (inline) and long
/// (heap) ones, and every other optional is `nil`.
enum Fixtures {
    static let epoch = Date(timeIntervalSinceReferenceDate: 700_000_000)

    static func user(_ i: Int) -> User {
        let user = User()
        user.id = i
        user.name = "User number \(i)"
        user.email = "user.\(i)@example.com"
        user.age = 18 + i % 60
        user.score = Double(i) * 0.37
        user.active = i % 3 != 0
        user.createdAt = epoch.addingTimeInterval(Double(i) * 61.25)
        user.nickname = i % 2 == 0 ? "nick\(i)" : nil
        return user
    }

    static func order(_ i: Int) -> Order {
        let order = Order()
        order.id = i
        order.customer = "Customer number \(i)"
        order.placedAt = epoch.addingTimeInterval(Double(i) * 97.5)
        order.paid = i % 2 == 0
        let address = Address()
        address.street = "\(i) Infinite Loop, Building \(i % 7)"
        address.city = "Cupertino"
        address.postalCode = "9\(5000 + i % 1000)"
        address.country = "USA"
        order.shippingAddress = address
        order.items = (0..<10).map { j in
            let item = LineItem()
            item.sku = "SKU-\(i)-\(j)"
            item.quantity = 1 + (i + j) % 5
            item.unitPrice = Double(100 + j) * 1.25
            item.note = j % 2 == 0 ? "gift wrap please, item \(j)" : nil
            return item
        }
        order.tags = ["priority", "order-\(i % 13)", "region-\(i % 5)"]
        order.couponCodes = [i, i + 1_000, i + 2_000]
        return order
    }
}
