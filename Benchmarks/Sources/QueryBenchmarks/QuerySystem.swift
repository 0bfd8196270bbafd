import Foundation

/// The queries a benchmarked store answers, each returning models (or a count) so the cells
/// time the whole path from the store handle to mapped objects.
protocol QuerySystem {
    static var fileExtension: String { get }
    /// Opens an existing store.
    init(path: String) throws
    /// Creates a new, empty store with both indexes.
    static func create(path: String) throws -> Self
    /// Opens an existing store of members (`Member`), for the cells whose workload `usesMembers`.
    init(membersPath path: String) throws
    /// Creates a new, empty store of members with the unique compound index on (`team`,
    /// `number`) and the case-insensitive index on `name`.
    static func createMembers(path: String) throws -> Self
    /// Every file the store may keep for `path`.
    static func files(for path: String) -> [String]

    /// Reading that happens once per opened store, kept out of the timed sections.
    func warmUp() throws
    /// Inserts all of `customers` in one transaction.
    func insert(_ customers: [Customer]) throws
    /// Inserts all of `members` in one transaction, into a store of members.
    func insert(members: [Member]) throws
    /// The number of members, in a store of members.
    func countMembers() throws -> Int
    /// The members of `team` with `number` (one at most).
    func member(team: String, number: Int) throws -> [Member]
    /// The members whose `name` starts with `prefix` ignoring case (ASCII), by `id`.
    func members(namePrefix prefix: String) throws -> [Member]
    /// The customers whose `email` is `email`.
    func withEmail(_ email: String) throws -> [Customer]
    /// The customers created in `window`, by `createdAt` then `id`.
    func created(in window: Range<Date>) throws -> [Customer]
    /// The first `limit` customers by `createdAt` then `id`.
    func firstCreated(_ limit: Int) throws -> [Customer]
    /// The last `limit` customers by `createdAt` (newest first), equal ones by `id`.
    func newestCreated(_ limit: Int) throws -> [Customer]
    /// The customers living in `city`, by `id`.
    func living(in city: String) throws -> [Customer]
    /// The customers with `age < -50` or living in `city`, by `id`.
    func negativeAgeOrLiving(in city: String) throws -> [Customer]
    /// The customers with `score * 2 - 100 > bound`, by `id`.
    func scoring(above bound: Double) throws -> [Customer]
    /// The number of customers created in `window`.
    func count(createdIn window: Range<Date>) throws -> Int
    /// The number of customers.
    func count() throws -> Int
    /// The sum of every customer's `score`.
    func sumOfScores() throws -> Double
    /// The mean of every customer's `age`.
    func averageAge() throws -> Double?
    /// The latest `createdAt`.
    func latestCreated() throws -> Date?
    /// How the system answers `workload`'s query; throws when it does not use the index the
    /// cell is about (or, for the scans, when it does not scan, or MirrorStore decodes models).
    func checkPlan(_ workload: QueryWorkload, email: String, window: Range<Date>, city: String, bound: Double) throws -> String
    /// `checkPlan` for the members' cells: throws when the query does not read the compound
    /// index (an exact range) or the case-insensitive index on `name`.
    func checkMemberPlan(_ workload: QueryWorkload, team: String, number: Int, prefix: String) throws -> String
    func close() throws
}

extension QuerySystem {
    static func removeFiles(for path: String) {
        for file in files(for: path) { try? FileManager.default.removeItem(atPath: file) }
    }
}

struct QueryBenchmarkFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
