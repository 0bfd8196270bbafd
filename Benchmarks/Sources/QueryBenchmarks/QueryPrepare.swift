import Foundation
import MirrorStore

/// Builds the stores the read cells share, in the parent's scratch directory: `objects`
/// customers for the queries (both systems; unless `customers` is false), `objects` members for
/// the compound and insensitive cells (when `members`), and for MirrorStore `openObjects`
/// customers with and without the indexes, for the open cells (when `large`). Returns what was
/// built.
func prepareStores(_ system: QuerySystemName, sizes: QuerySizes, directory: String, large: Bool,
                   customers: Bool = true, members: Bool = false) throws -> String {
    let clock = ContinuousClock()
    var built: [String] = []
    func seconds(since start: ContinuousClock.Instant) -> String {
        String(format: "%.1f s", Double(start.duration(to: clock.now).components.seconds)
            + Double(start.duration(to: clock.now).components.attoseconds) / 1e18)
    }
    func build<System: QuerySystem>(_: System.Type) throws {
        if members { try buildMembers(System.self) }
        guard customers else { return }
        let path = sharedStorePath(directory: directory, name: "customers", objects: sizes.objects, fileExtension: System.fileExtension)
        System.removeFiles(for: path)
        let start = clock.now
        let created = try System.create(path: path)
        try created.insert(QueryFixtures.customers(1...sizes.objects, seed: sizes.seed))
        try created.close()
        let reopened = try System(path: path)
        guard try reopened.count() == sizes.objects else { throw QueryBenchmarkFailure("prepare: \(path) does not hold \(sizes.objects)") }
        try reopened.close()
        built.append("\(sizes.objects) customers in \(seconds(since: start))")
    }
    func buildMembers<System: QuerySystem>(_: System.Type) throws {
        let path = sharedStorePath(directory: directory, name: "members", objects: sizes.objects, fileExtension: System.fileExtension)
        System.removeFiles(for: path)
        let start = clock.now
        let created = try System.createMembers(path: path)
        try created.insert(members: QueryFixtures.members(1...sizes.objects, objects: sizes.objects, seed: sizes.seed))
        try created.close()
        let reopened = try System(membersPath: path)
        guard try reopened.countMembers() == sizes.objects else { throw QueryBenchmarkFailure("prepare: \(path) does not hold \(sizes.objects) members") }
        try reopened.close()
        built.append("\(sizes.objects) members in \(seconds(since: start))")
    }
    switch system {
    case .grdb:
        try build(GRDBQueries.self)
        guard large else { break }
        let path = sharedStorePath(directory: directory, name: "customers", objects: sizes.openObjects, fileExtension: GRDBQueries.fileExtension)
        GRDBQueries.removeFiles(for: path)
        let start = clock.now
        let created = try GRDBQueries.create(path: path)
        for first in stride(from: 1, through: sizes.openObjects, by: 100_000) {
            try created.insert(QueryFixtures.customers(first...min(sizes.openObjects, first + 99_999), seed: sizes.seed))
        }
        try created.close()
        built.append("\(sizes.openObjects) customers with indexes in \(seconds(since: start))")
    case .mirrorStore:
        try build(MirrorStoreQueries.self)
        guard large else { break }
        for plain in [false, true] {
            let path = sharedStorePath(directory: directory, name: plain ? "plain" : "customers", objects: sizes.openObjects,
                                       fileExtension: MirrorStoreQueries.fileExtension)
            MirrorStoreQueries.removeFiles(for: path)
            let start = clock.now
            let store = try Store(path: path, models: [plain ? PlainCustomer.self : Customer.self], configuration: .benchmark)
            for first in stride(from: 1, through: sizes.openObjects, by: 100_000) {
                let customers = QueryFixtures.customers(first...min(sizes.openObjects, first + 99_999), seed: sizes.seed)
                if plain {
                    let models = customers.map(PlainCustomer.init)
                    try store.write { try $0.add(contentsOf: models) }
                } else {
                    try store.write { try $0.add(contentsOf: customers) }
                }
            }
            try store.close()
            built.append("\(sizes.openObjects) customers \(plain ? "without" : "with") indexes in \(seconds(since: start))")
        }
    }
    return "\(system.rawValue): " + built.joined(separator: ", ")
}
