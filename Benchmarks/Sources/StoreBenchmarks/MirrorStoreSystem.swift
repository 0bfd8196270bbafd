import BenchmarkSupport
import MirrorStore

/// MirrorStore with its default configuration: `durability = .full`, so every `write` is
/// `fdatasync`ed before it returns.
final class MirrorStoreSystem: BenchmarkedSystem {
    static let name = "MirrorStore"
    static let fileExtension = "mirrorstore"
    let store: Store

    init(path: String) throws {
        store = try Store(path: path, models: [Customer.self], configuration: .benchmark)
    }

    static func create(path: String) throws -> MirrorStoreSystem {
        try MirrorStoreSystem(path: path)
    }

    /// The store file and its sidecar lock file.
    static func files(for path: String) -> [String] {
        [path, path + ".lock"]
    }

    func insert(_ customers: [Customer]) throws {
        try store.write { try $0.add(contentsOf: customers) }
    }

    func insertOne(_ customer: Customer) throws {
        try store.write { try $0.add(customer) }
    }

    func fetchAll() throws -> [Customer] {
        try store.objects(Customer.self).all()
    }

    func object(id: Int) throws -> Customer? {
        try store.object(Customer.self, primaryKey: id)
    }

    func lookUp(_ ids: [Int]) throws -> Int {
        var found = 0
        for id in ids {
            if let customer = try store.object(Customer.self, primaryKey: id) {
                found += 1
                blackHole(customer)
            }
        }
        return found
    }

    func count() throws -> Int {
        try store.objects(Customer.self).count
    }

    func close() throws {
        try store.close()
    }

    var note: String {
        "default Store.Configuration (durability .full: one fdatasync per commit)"
            + (BenchmarkEncryption.isOn ? ", encrypted with a raw key" : "")
    }
}
