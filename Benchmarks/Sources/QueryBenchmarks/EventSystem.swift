import Foundation
import GRDB
import MirrorStore

/// The queries of the events' cells (`--shape events`), each returning models (or a count) so
/// the cells time the whole path from the store handle to mapped events.
protocol EventQuerySystem {
    static var fileExtension: String { get }
    /// Opens an existing store of events.
    init(path: String) throws
    /// Creates a new, empty store of events with its four indexes.
    static func create(path: String) throws -> Self
    /// Every file the store may keep for `path`.
    static func files(for path: String) -> [String]

    /// Inserts all of `events` in one transaction.
    func insert(_ events: [Event]) throws
    func count() throws -> Int
    /// The events with `sequence` (one at most).
    func withSequence(_ sequence: Int) throws -> [Event]
    /// The events of `kind` (about 10), by `code`.
    func ofKind(_ kind: Int) throws -> [Event]
    /// The events with `sequence` in `range`, by `sequence`.
    func sequences(in range: Range<Int>) throws -> [Event]
    /// The first `limit` events by `startsAt`.
    func earliest(_ limit: Int) throws -> [Event]
    /// The last `limit` events by `startsAt`, latest first.
    func latest(_ limit: Int) throws -> [Event]
    /// The last `limit` events of `category` by `startsAt`, latest first.
    func latest(_ limit: Int, category: String) throws -> [Event]
    /// How the system answers `workload`'s query; throws when it does not use the index the
    /// cell is about.
    func checkPlan(_ workload: QueryWorkload, sequence: Int, kind: Int, range: Range<Int>, category: String) throws -> String
    func close() throws
}

extension EventQuerySystem {
    static func removeFiles(for path: String) {
        for file in files(for: path) { try? FileManager.default.removeItem(atPath: file) }
    }
}

/// MirrorStore with its default configuration; every query starts from `store.objects(_:)`.
final class MirrorStoreEvents: EventQuerySystem {
    static let fileExtension = "mirrorstore"
    let store: Store

    init(path: String) throws {
        store = try Store(path: path, models: [Event.self], configuration: .benchmark)
        // The first `objects(_:)` of a store checks every stored event once.
        _ = try store.objects(Event.self)
    }

    static func create(path: String) throws -> MirrorStoreEvents {
        try MirrorStoreEvents(path: path)
    }

    static func files(for path: String) -> [String] {
        [path, path + ".lock"]
    }

    func insert(_ events: [Event]) throws {
        try store.write { try $0.add(contentsOf: events) }
    }

    func count() throws -> Int {
        try store.objects(Event.self).count
    }

    private func sequenceResults(_ sequence: Int) throws -> Results<Event> {
        try store.objects(Event.self).filter(#Predicate { $0.sequence == sequence })
    }

    private func kindResults(_ kind: Int) throws -> Results<Event> {
        try store.objects(Event.self).filter(#Predicate { $0.kind == kind })
    }

    private func rangeResults(_ range: Range<Int>) throws -> Results<Event> {
        let lower = range.lowerBound, upper = range.upperBound
        return try store.objects(Event.self).filter(#Predicate { $0.sequence >= lower && $0.sequence < upper })
            .sorted(using: SortDescriptor(\.sequence))
    }

    private func earliestResults() throws -> Results<Event> {
        try store.objects(Event.self).sorted(using: SortDescriptor(\.startsAt))
    }

    private func latestResults() throws -> Results<Event> {
        try store.objects(Event.self).sorted(using: SortDescriptor(\.startsAt, order: .reverse))
    }

    private func categoryResults(_ category: String) throws -> Results<Event> {
        try store.objects(Event.self).filter(#Predicate { $0.category == category })
            .sorted(using: SortDescriptor(\.startsAt, order: .reverse))
    }

    func withSequence(_ sequence: Int) throws -> [Event] {
        try sequenceResults(sequence).all()
    }

    func ofKind(_ kind: Int) throws -> [Event] {
        try kindResults(kind).all()
    }

    func sequences(in range: Range<Int>) throws -> [Event] {
        try rangeResults(range).all()
    }

    func earliest(_ limit: Int) throws -> [Event] {
        Array(try earliestResults().prefix(limit))
    }

    func latest(_ limit: Int) throws -> [Event] {
        Array(try latestResults().prefix(limit))
    }

    func latest(_ limit: Int, category: String) throws -> [Event] {
        Array(try categoryResults(category).prefix(limit))
    }

    func checkPlan(_ workload: QueryWorkload, sequence: Int, kind: Int, range: Range<Int>, category: String) throws -> String {
        let plan: QueryPlan
        let usesIndex: Bool
        switch workload {
        case .eventEqual:
            plan = try sequenceResults(sequence).plan
            usesIndex = plan.indexName == "Event.sequence" && plan.filter == .none
        case .eventKind:
            plan = try kindResults(kind).plan
            usesIndex = plan.indexName == "Event.kind" && plan.filter == .none
        case .eventRange:
            plan = try rangeResults(range).plan
            usesIndex = plan.indexName == "Event.sequence" && plan.filter == .none
        case .eventFirst20:
            plan = try earliestResults().plan
            usesIndex = plan.order == .index(name: "Event.startsAt", ascending: true)
        case .eventNewest20, .eventNewest20AfterInsert:
            plan = try latestResults().plan
            usesIndex = plan.order == .index(name: "Event.startsAt", ascending: false)
        case .eventNewest20InCategory:
            plan = try categoryResults(category).plan
            usesIndex = plan.indexName != nil
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

/// GRDB 7 with a `DatabaseQueue` and its default configuration, the `event` table with the same
/// four indexes. Each query runs in a `read` block of its own, as a standalone call does.
final class GRDBEvents: EventQuerySystem {
    static let fileExtension = "sqlite"
    let dbQueue: DatabaseQueue

    init(path: String) throws {
        dbQueue = try DatabaseQueue(path: path)
        // SQLite reads its schema on the first statement.
        _ = try count()
    }

    static func create(path: String) throws -> GRDBEvents {
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.create(table: Event.databaseTableName) { table in
                table.primaryKey("code", .text)
                table.column("sequence", .integer).notNull()
                table.column("kind", .integer).notNull()
                table.column("category", .text).notNull()
                table.column("startsAt", .datetime).notNull()
                table.column("endsAt", .datetime)
                table.column("title", .text).notNull()
                table.column("price", .double).notNull()
                table.column("attendees", .integer)
                table.column("cancelled", .boolean).notNull()
                table.column("notes", .text)
                table.column("venueName", .text).notNull()
                table.column("venueCity", .text).notNull()
                table.column("venueCapacity", .integer).notNull()
            }
            try db.create(index: "event_sequence", on: Event.databaseTableName, columns: ["sequence"], options: .unique)
            try db.create(index: "event_kind", on: Event.databaseTableName, columns: ["kind"])
            try db.create(index: "event_category", on: Event.databaseTableName, columns: ["category"])
            try db.create(index: "event_startsAt", on: Event.databaseTableName, columns: ["startsAt"])
        }
        try queue.close()
        return try GRDBEvents(path: path)
    }

    static func files(for path: String) -> [String] {
        [path, path + "-journal", path + "-wal", path + "-shm"]
    }

    func insert(_ events: [Event]) throws {
        try dbQueue.write { db in
            for event in events { try event.insert(db) }
        }
    }

    func count() throws -> Int {
        try dbQueue.read { db in try Event.fetchCount(db) }
    }

    private static let code = Column("code")
    private static let sequence = Column("sequence")
    private static let kind = Column("kind")
    private static let category = Column("category")
    private static let startsAt = Column("startsAt")

    private func sequenceRequest(_ sequence: Int) -> QueryInterfaceRequest<Event> {
        Event.filter(Self.sequence == sequence)
    }

    private func kindRequest(_ kind: Int) -> QueryInterfaceRequest<Event> {
        Event.filter(Self.kind == kind).order(Self.code)
    }

    private func rangeRequest(_ range: Range<Int>) -> QueryInterfaceRequest<Event> {
        Event.filter(Self.sequence >= range.lowerBound && Self.sequence < range.upperBound).order(Self.sequence)
    }

    private func earliestRequest(_ limit: Int) -> QueryInterfaceRequest<Event> {
        Event.order(Self.startsAt).limit(limit)
    }

    private func latestRequest(_ limit: Int) -> QueryInterfaceRequest<Event> {
        Event.order(Self.startsAt.desc).limit(limit)
    }

    private func categoryRequest(_ limit: Int, _ category: String) -> QueryInterfaceRequest<Event> {
        Event.filter(Self.category == category).order(Self.startsAt.desc).limit(limit)
    }

    func withSequence(_ sequence: Int) throws -> [Event] {
        try dbQueue.read { db in try sequenceRequest(sequence).fetchAll(db) }
    }

    func ofKind(_ kind: Int) throws -> [Event] {
        try dbQueue.read { db in try kindRequest(kind).fetchAll(db) }
    }

    func sequences(in range: Range<Int>) throws -> [Event] {
        try dbQueue.read { db in try rangeRequest(range).fetchAll(db) }
    }

    func earliest(_ limit: Int) throws -> [Event] {
        try dbQueue.read { db in try earliestRequest(limit).fetchAll(db) }
    }

    func latest(_ limit: Int) throws -> [Event] {
        try dbQueue.read { db in try latestRequest(limit).fetchAll(db) }
    }

    func latest(_ limit: Int, category: String) throws -> [Event] {
        try dbQueue.read { db in try categoryRequest(limit, category).fetchAll(db) }
    }

    func checkPlan(_ workload: QueryWorkload, sequence: Int, kind: Int, range: Range<Int>, category: String) throws -> String {
        let request: QueryInterfaceRequest<Event>
        let expected: String
        switch workload {
        case .eventEqual: (request, expected) = (sequenceRequest(sequence), "USING INDEX event_sequence")
        case .eventKind: (request, expected) = (kindRequest(kind), "USING INDEX event_kind")
        case .eventRange: (request, expected) = (rangeRequest(range), "USING INDEX event_sequence")
        case .eventFirst20: (request, expected) = (earliestRequest(20), "USING INDEX event_startsAt")
        case .eventNewest20, .eventNewest20AfterInsert: (request, expected) = (latestRequest(20), "USING INDEX event_startsAt")
        case .eventNewest20InCategory: (request, expected) = (categoryRequest(20, category), "INDEX event_")
        default: return ""
        }
        let plan = try dbQueue.read { db in
            let statement = try request.makePreparedRequest(db, forSingleResult: false).statement
            return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: statement.arguments)
                .map { $0["detail"] as String? ?? "" }.joined(separator: "; ")
        }
        guard plan.contains(expected) else { throw QueryBenchmarkFailure("\(workload.rawValue)/GRDB: unexpected plan: \(plan)") }
        return plan
    }

    func close() throws {
        try dbQueue.close()
    }
}
