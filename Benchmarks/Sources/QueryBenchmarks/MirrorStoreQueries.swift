import Foundation
import MirrorStore

/// MirrorStore with its default configuration; every query starts from `store.objects(_:)`.
final class MirrorStoreQueries: QuerySystem {
    static let fileExtension = "mirrorstore"
    let store: Store
    /// Whether this is a store of members rather than of customers.
    private let holdsMembers: Bool

    init(path: String) throws {
        store = try Store(path: path, models: [Customer.self], configuration: .benchmark)
        holdsMembers = false
    }

    /// A store of members holds only `Member`; the customers' queries do not apply to it.
    init(membersPath path: String) throws {
        store = try Store(path: path, models: [Member.self], configuration: .benchmark)
        holdsMembers = true
    }

    static func create(path: String) throws -> MirrorStoreQueries {
        try MirrorStoreQueries(path: path)
    }

    static func createMembers(path: String) throws -> MirrorStoreQueries {
        try MirrorStoreQueries(membersPath: path)
    }

    static func files(for path: String) -> [String] {
        [path, path + ".lock"]
    }

    /// The first `objects(_:)` of a store decodes every stored customer (or member) once (its
    /// validation).
    func warmUp() throws {
        if holdsMembers {
            _ = try store.objects(Member.self)
        } else {
            _ = try store.objects(Customer.self)
        }
    }

    func insert(_ customers: [Customer]) throws {
        try store.write { try $0.add(contentsOf: customers) }
    }

    private func emailResults(_ email: String) throws -> Results<Customer> {
        try store.objects(Customer.self).filter(#Predicate { $0.email == email })
    }

    private func windowResults(_ window: Range<Date>) throws -> Results<Customer> {
        let lower = window.lowerBound, upper = window.upperBound
        return try store.objects(Customer.self).filter(#Predicate { $0.createdAt >= lower && $0.createdAt < upper })
    }

    private func sortedWindowResults(_ window: Range<Date>) throws -> Results<Customer> {
        try windowResults(window).sorted(using: SortDescriptor(\.createdAt))
    }

    private func firstResults() throws -> Results<Customer> {
        try store.objects(Customer.self).sorted(using: SortDescriptor(\.createdAt))
    }

    private func cityResults(_ city: String) throws -> Results<Customer> {
        try store.objects(Customer.self).filter(#Predicate { $0.city == city })
    }

    private func negativeResults(_ city: String) throws -> Results<Customer> {
        try store.objects(Customer.self).filter(#Predicate { $0.age < -50 || $0.city == city })
    }

    private func arithmeticResults(_ bound: Double) throws -> Results<Customer> {
        try store.objects(Customer.self).filter(#Predicate { $0.score * 2 - 100 > bound })
    }

    func insert(members: [Member]) throws {
        try store.write { try $0.add(contentsOf: members) }
    }

    func countMembers() throws -> Int {
        try store.objects(Member.self).count
    }

    private func teamNumberResults(_ team: String, _ number: Int) throws -> Results<Member> {
        try store.objects(Member.self).filter(#Predicate { $0.team == team && $0.number == number })
    }

    /// In primary-key order, as every filter of `objects(_:)` is.
    private func prefixResults(_ prefix: String) throws -> Results<Member> {
        try store.objects(Member.self).filter(\.name, .startsWith(prefix))
    }

    func member(team: String, number: Int) throws -> [Member] {
        try teamNumberResults(team, number).all()
    }

    func members(namePrefix prefix: String) throws -> [Member] {
        try prefixResults(prefix).all()
    }

    func withEmail(_ email: String) throws -> [Customer] {
        try emailResults(email).all()
    }

    func created(in window: Range<Date>) throws -> [Customer] {
        try sortedWindowResults(window).all()
    }

    func firstCreated(_ limit: Int) throws -> [Customer] {
        Array(try firstResults().prefix(limit))
    }

    func newestCreated(_ limit: Int) throws -> [Customer] {
        Array(try store.objects(Customer.self).sorted(using: SortDescriptor(\.createdAt, order: .reverse)).prefix(limit))
    }

    func living(in city: String) throws -> [Customer] {
        try cityResults(city).all()
    }

    func negativeAgeOrLiving(in city: String) throws -> [Customer] {
        try negativeResults(city).all()
    }

    func scoring(above bound: Double) throws -> [Customer] {
        try arithmeticResults(bound).all()
    }

    func count(createdIn window: Range<Date>) throws -> Int {
        try windowResults(window).count
    }

    func count() throws -> Int {
        try store.objects(Customer.self).count
    }

    func sumOfScores() throws -> Double {
        try store.objects(Customer.self).sum(\.score)
    }

    func averageAge() throws -> Double? {
        try store.objects(Customer.self).average(\.age)
    }

    func latestCreated() throws -> Date? {
        try store.objects(Customer.self).max(\.createdAt)
    }

    func checkPlan(_ workload: QueryWorkload, email: String, window: Range<Date>, city: String, bound: Double) throws -> String {
        let plan: QueryPlan
        let usesIndex: Bool
        switch workload {
        case .equal:
            plan = try emailResults(email).plan
            usesIndex = plan.access == .index(name: "Customer.email", range: "== \(email.debugDescription)") && plan.filter == .none
        case .range:
            plan = try sortedWindowResults(window).plan
            usesIndex = plan.indexName == "Customer.createdAt" && plan.filter == .none
        case .count:
            plan = try windowResults(window).plan
            usesIndex = plan.indexName == "Customer.createdAt" && plan.filter == .none
        case .first20:
            plan = try firstResults().plan
            usesIndex = plan.order == .index(name: "Customer.createdAt", ascending: true)
        case .scan:
            plan = try cityResults(city).plan
            usesIndex = plan.access == .scan(typeName: "Customer") && plan.filter == .storedBytes
        case .scanNegative:
            plan = try negativeResults(city).plan
            usesIndex = plan.access == .scan(typeName: "Customer") && plan.filter == .storedBytes
        case .scanArithmetic:
            plan = try arithmeticResults(bound).plan
            usesIndex = plan.access == .scan(typeName: "Customer") && plan.filter == .storedBytes
        default:
            return ""
        }
        guard usesIndex else { throw QueryBenchmarkFailure("\(workload.rawValue)/MirrorStore: unexpected plan: \(plan)") }
        return plan.description
    }

    func checkMemberPlan(_ workload: QueryWorkload, team: String, number: Int, prefix: String) throws -> String {
        let plan: QueryPlan
        let usesIndex: Bool
        switch workload {
        case .compoundEqual:
            plan = try teamNumberResults(team, number).plan
            usesIndex = plan.access == .index(name: "Member.team+number", range: "team == \(team.debugDescription) and number == \(number)")
                && plan.filter == .none
        case .insensitivePrefix:
            // A prefix range of the folded names, each candidate re-tested on its stored bytes.
            plan = try prefixResults(prefix).plan
            usesIndex = plan.access == .index(name: "Member.name~folded", range: "starts with \(prefix.lowercased().debugDescription)")
                && plan.filter == .storedBytes && plan.order == .primaryKey
        default:
            return ""
        }
        guard usesIndex else { throw QueryBenchmarkFailure("\(workload.rawValue)/MirrorStore: unexpected plan: \(plan)") }
        return plan.description
    }

    func close() throws {
        try store.close()
    }
}
