import BenchmarkSupport
import MirrorStore

/// MirrorStore with its default configuration: `durability = .full`, so every `write` is
/// `fdatasync`ed before it returns.
final class MirrorStoreSystem<Model: StoreShape>: BenchmarkedSystem {
    static var name: String { "MirrorStore" }
    static var fileExtension: String { "mirrorstore" }
    let store: Store

    init(path: String) throws {
        store = try Store(path: path, models: [Model.self], configuration: .benchmark)
    }

    static func create(path: String) throws -> MirrorStoreSystem {
        try MirrorStoreSystem(path: path)
    }

    /// The store file and its sidecar lock file.
    static func files(for path: String) -> [String] {
        [path, path + ".lock"]
    }

    func insert(_ objects: [Model]) throws {
        try store.write { try $0.add(contentsOf: objects) }
    }

    func insertOne(_ object: Model) throws {
        try store.write { try $0.add(object) }
    }

    func fetchAll() throws -> [Model] {
        try store.objects(Model.self).all()
    }

    func object(key: Model.Key) throws -> Model? {
        try store.object(Model.self, primaryKey: key)
    }

    func lookUp(_ keys: [Model.Key]) throws -> Int {
        var found = 0
        for key in keys {
            if let object = try store.object(Model.self, primaryKey: key) {
                found += 1
                blackHole(object)
            }
        }
        return found
    }

    func count() throws -> Int {
        try store.objects(Model.self).count
    }

    func close() throws {
        try store.close()
    }

    var note: String {
        "default Store.Configuration (durability .full: one fdatasync per commit)"
            + (BenchmarkEncryption.isOn ? ", encrypted with a raw key" : "")
    }
}
