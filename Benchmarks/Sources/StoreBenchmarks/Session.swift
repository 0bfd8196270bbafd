import BenchmarkSupport
import Foundation
import GRDB
import MirrorStore

/// An optional-, UUID- and Date-heavy shape keyed by a random UUID: a user's session, about half
/// of its optional fields nil.
final class Session: StoreShape {
    var id = UUID()
    var userID = UUID()
    var startedAt = Date(timeIntervalSince1970: 0)
    var endedAt: Date?
    var lastSeenAt: Date?
    var device: String?
    var appVersion: String?
    var rating: Double?
    var events: Int?

    init() {}

    static var primaryKey: String? { "id" }
    static let databaseTableName = "session"
    static let shapeName = "sessions"
    static let shapeSummary = "Session: random UUID key, a UUID, a Date, 2 Date?, 2 String?, Double?, Int? (about half nil)"

    private static let devices = ["iPhone15,2", "iPhone16,1", "Pixel 8", "SM-S918B", "MacBookPro18,3", "iPad14,1"]

    static func fixture(id: Int, seed: UInt64) -> Session {
        var random = SplitMix64.object(id: id, seed: seed, salt: 3)
        let session = Session()
        session.id = key(id: id, seed: seed)
        var users = SplitMix64(seed: seed &+ 0x5E55 &+ UInt64(random.next(in: 1...5_000)))
        session.userID = users.nextUUID()
        let start = Fixtures.firstDate + Double(random.next() % (8 * 86_400 * 365 * 8)) / 8
        session.startedAt = Date(timeIntervalSince1970: start)
        if random.next() % 2 == 0 { session.endedAt = Date(timeIntervalSince1970: start + Double(random.next() % 28_800) / 8) }
        if random.next() % 2 == 0 { session.lastSeenAt = Date(timeIntervalSince1970: start + Double(random.next() % 8_000) / 8) }
        if random.next() % 2 == 0 { session.device = devices[random.next(in: 0...(devices.count - 1))] }
        if random.next() % 2 == 0 { session.appVersion = "\(random.next(in: 1...4)).\(random.next(in: 0...20)).\(random.next(in: 0...9))" }
        if random.next() % 2 == 0 { session.rating = Double(random.next(in: 0...50)) / 10 }
        if random.next() % 2 == 0 { session.events = random.next(in: 0...5_000) }
        return session
    }

    static func key(id: Int, seed: UInt64) -> UUID {
        var random = SplitMix64.object(id: id, seed: seed, salt: 0x1D)
        return random.nextUUID()
    }

    var storedKey: UUID { id }

    /// UUIDs are 16-byte blobs (GRDB's encoding of `UUID`), the key a non-integer primary key of a
    /// rowid table (GRDB's default; SQLite adds a unique index for it).
    static func createTable(_ db: Database) throws {
        try db.create(table: databaseTableName) { table in
            table.primaryKey("id", .blob)
            table.column("userID", .blob).notNull()
            table.column("startedAt", .datetime).notNull()
            table.column("endedAt", .datetime)
            table.column("lastSeenAt", .datetime)
            table.column("device", .text)
            table.column("appVersion", .text)
            table.column("rating", .double)
            table.column("events", .integer)
        }
    }

    func differences(from other: Session) -> [String] {
        var result = FieldComparison()
        result.compare("id", id, other.id)
        result.compare("userID", userID, other.userID)
        result.compare("startedAt", startedAt, other.startedAt)
        result.compare("endedAt", endedAt, other.endedAt)
        result.compare("lastSeenAt", lastSeenAt, other.lastSeenAt)
        result.compare("device", device, other.device)
        result.compare("appVersion", appVersion, other.appVersion)
        result.compare("rating", rating, other.rating)
        result.compare("events", events, other.events)
        return result.differences
    }
}
